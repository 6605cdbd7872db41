// Python 3.9 and 3.10 know a thread only by its pthread_t (the address of glibc's
// struct pthread); the kernel's thread id is a field of that struct.
#pragma once

#include <cstdint>
#include <optional>

namespace hangbench::diagnose {

// Where struct pthread keeps the kernel thread id, found by looking for our own
// threads' ids in theirs (the target runs the same glibc on this machine);
// nullopt when the two threads disagree.
std::optional<std::int64_t> pthread_tid_offset();

}  // namespace hangbench::diagnose
