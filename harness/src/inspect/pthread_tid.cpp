// Asked of this process's own threads rather than written down: the offset differs
// between architectures (x86-64: 720, in glibc 2.36 here) and could between glibcs.
#include "inspect/pthread_tid.hpp"

#include <pthread.h>
#include <unistd.h>

#include <cstring>
#include <thread>

namespace hangbench::diagnose {

namespace {

constexpr std::int64_t kSearched = 4096;  // struct pthread starts with the TCB; the id follows it

std::optional<std::int64_t> offset_in_this_thread() {
  auto id = static_cast<pid_t>(::gettid());
  const char* self = reinterpret_cast<const char*>(::pthread_self());
  for (std::int64_t at = 0; at + 4 <= kSearched; at += 4) {
    pid_t v;
    std::memcpy(&v, self + at, sizeof v);
    if (v == id) return at;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::int64_t> pthread_tid_offset() {
  static const std::optional<std::int64_t> offset = [] {
    std::optional<std::int64_t> other;
    std::thread([&] { other = offset_in_this_thread(); }).join();
    auto ours = offset_in_this_thread();
    return ours == other ? ours : std::nullopt;
  }();
  return offset;
}

}  // namespace hangbench::diagnose
