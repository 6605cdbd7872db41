// The single-GPU stand-in for "the next stage posted its NCCL receive": a tiny
// shared-memory file mapped by two neighbouring stages. The sender's spin
// kernel reads it through host-mapped memory (the sender registers the mapping
// with cudaHostRegisterMapped); the receiver writes it once the schedule
// message for a step has arrived.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "release_words.hpp"

namespace pp {

// ReleaseWords: the kernel reads them with volatile loads, the hosts with
// atomics on the same memory.
class ReleaseFlag {
 public:
  // Creates a new file under /dev/shm with a unique name (sender side).
  static ReleaseFlag create(const std::string& name_hint);
  // Maps an existing file by the name the creator sent (receiver side).
  static ReleaseFlag open(const std::string& name);

  ReleaseFlag(ReleaseFlag&& other) noexcept;
  ReleaseFlag& operator=(ReleaseFlag&&) = delete;
  ReleaseFlag(const ReleaseFlag&) = delete;
  ~ReleaseFlag();  // unmaps

  // Removes the name; both mappings stay valid. Called once both sides mapped
  // it, so that no file outlives the trial even when it is killed.
  void unlink_name();

  const std::string& name() const { return name_; }
  ReleaseWords* words() { return words_; }  // what the sender registers with CUDA
  std::size_t mapped_bytes() const;

  void release_step(std::uint64_t step);  // receiver: steps 0..step are released
  std::uint64_t released_steps() const;
  std::uint64_t spin_started() const;  // what the spin kernel last wrote
  void set_abort();
  bool aborted() const;

 private:
  ReleaseFlag(std::string name, ReleaseWords* words, bool owns_name);
  std::atomic_ref<std::uint64_t> word(std::uint64_t& w) const { return std::atomic_ref<std::uint64_t>(w); }

  std::string name_;
  ReleaseWords* words_ = nullptr;
  bool owns_name_ = false;
};

}  // namespace pp
