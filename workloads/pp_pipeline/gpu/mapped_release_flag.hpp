// The sender's side of the single-GPU release flag: the shared page registered
// with cudaHostRegisterMapped so that the spin kernel can read it.
#pragma once

#include "release_flag.hpp"

namespace pp::gpu {

class MappedReleaseFlag {
 public:
  // Throws std::runtime_error naming the CUDA call and error.
  explicit MappedReleaseFlag(pp::ReleaseFlag flag);
  ~MappedReleaseFlag();  // cudaHostUnregister
  MappedReleaseFlag(const MappedReleaseFlag&) = delete;
  MappedReleaseFlag& operator=(const MappedReleaseFlag&) = delete;

  pp::ReleaseFlag& host() { return flag_; }
  const pp::ReleaseWords* device_words() const { return device_words_; }

 private:
  pp::ReleaseFlag flag_;
  pp::ReleaseWords* device_words_ = nullptr;
};

}  // namespace pp::gpu
