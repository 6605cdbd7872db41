// x86-64 system call numbers of the calls a hung thread usually sits in.
#include <map>

#include "hangbench/proc.hpp"

namespace hangbench::proc {

std::string syscall_name(long number) {
#if defined(__x86_64__)
  static const std::map<long, const char*> names = {
      {0, "read"},          {1, "write"},          {7, "poll"},           {17, "pread64"},
      {18, "pwrite64"},     {19, "readv"},         {20, "writev"},        {23, "select"},
      {24, "sched_yield"},  {34, "pause"},         {35, "nanosleep"},     {40, "sendfile"},
      {42, "connect"},      {43, "accept"},        {44, "sendto"},        {45, "recvfrom"},
      {46, "sendmsg"},      {47, "recvmsg"},       {48, "shutdown"},      {56, "clone"},
      {61, "wait4"},        {62, "kill"},          {72, "fcntl"},         {74, "fsync"},
      {130, "rt_sigsuspend"}, {128, "rt_sigtimedwait"}, {202, "futex"},   {230, "clock_nanosleep"},
      {232, "epoll_wait"},  {247, "waitid"},       {270, "pselect6"},     {271, "ppoll"},
      {281, "epoll_pwait"}, {288, "accept4"},      {299, "recvmmsg"},     {307, "sendmmsg"},
      {16, "ioctl"},        {3, "close"},          {441, "epoll_pwait2"}, {449, "futex_waitv"},
      {426, "io_uring_enter"}, {435, "clone3"},    {60, "exit"},          {231, "exit_group"},
  };
  if (auto it = names.find(number); it != names.end()) return it->second;
#endif
  return "syscall_" + std::to_string(number);
}

}  // namespace hangbench::proc
