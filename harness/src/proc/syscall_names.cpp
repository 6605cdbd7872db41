// System call names from libseccomp's tables for the architecture hangbench runs
// on (x86-64, aarch64, ...), so the rules that look for poll/futex/... fire there too.
#include <seccomp.h>

#include <cstdint>
#include <cstdlib>

#include "hangbench/proc.hpp"

namespace hangbench::proc {

namespace {

std::string resolve(std::uint32_t arch, long number) {
  if (arch != 0 && number >= 0 && number <= 0xffff) {
    if (char* name = seccomp_syscall_resolve_num_arch(arch, static_cast<int>(number))) {
      std::string out(name);
      std::free(name);
      return out;
    }
  }
  return "syscall_" + std::to_string(number);
}

}  // namespace

std::string syscall_name(long number) { return resolve(seccomp_arch_native(), number); }

std::string syscall_name(long number, const std::string& arch) {
  return resolve(seccomp_arch_resolve_name(arch.c_str()), number);
}

}  // namespace hangbench::proc
