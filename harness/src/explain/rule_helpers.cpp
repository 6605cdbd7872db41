#include "explain/rule_helpers.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace hangbench::diagnose::rules {

namespace {
bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
}  // namespace

bool waits_in_futex(const proc::ThreadInfo& t) {
  return t.syscall_name == "futex" || t.syscall_name == "futex_waitv" || contains(t.wchan, "futex");
}

bool waits_in_native_call(const proc::ThreadInfo& t) {
  if (waits_in_futex(t)) return false;
  if (waits_in_poll(t)) return true;
  static const std::vector<std::string> calls = {
      "read",  "recvfrom", "recvmsg", "recvmmsg", "accept", "accept4", "connect", "nanosleep", "clock_nanosleep",
      "wait4", "waitid",   "pread64", "readv",    "ioctl",  "write",   "sendto",  "sendmsg",   "pause"};
  return std::find(calls.begin(), calls.end(), t.syscall_name) != calls.end();
}

CallUnder first_call_under(const ProcessSnapshot& p, bool (*inner)(const StackFrame&),
                           bool (*outer)(const StackFrame&)) {
  for (const auto& t : p.stacks.threads) {
    auto call = std::find_if(t.frames.begin(), t.frames.end(), inner);
    if (call != t.frames.end() && std::find_if(call + 1, t.frames.end(), outer) != t.frames.end()) return {&t, &*call};
  }
  return {};
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

bool is_descendant_of(const Snapshot& s, int pid, int ancestor) {
  for (int hop = 0; hop < 64; ++hop) {
    const auto* p = s.find(pid);
    if (!p) return false;
    if (p->info.ppid == ancestor) return true;
    if (p->info.ppid <= 1) return false;
    pid = p->info.ppid;
  }
  return false;
}

const proc::Descriptor* descriptor_for_inode(const ProcessSnapshot& p, std::uint64_t inode, proc::DescriptorKind kind) {
  for (const auto& d : p.descriptors)
    if (d.target.inode == inode && d.target.kind == kind) return &d;
  return nullptr;
}

std::string holders_in_words(const Snapshot& s, const std::vector<Holder>& holders, int relative_to) {
  std::vector<std::string> parts;
  for (const auto& h : holders)
    parts.push_back(describe_process(s, h.pid, relative_to) + fmt::format(" (its fd {})", h.fd));
  return parts.empty() ? "no process we can read" : join(parts, "; ");
}

}  // namespace hangbench::diagnose::rules
