#include "release_flag.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <stdexcept>

namespace pp {
namespace {

// One page: cudaHostRegister wants page-aligned, page-sized ranges.
std::size_t page_bytes() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

std::runtime_error os_error(const std::string& what, const std::string& name) {
  return std::runtime_error(what + " " + name + ": " + std::strerror(errno));
}

ReleaseWords* map_descriptor(int fd, const std::string& name) {
  void* p = mmap(nullptr, page_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw os_error("mmap of release flag", name);
  return static_cast<ReleaseWords*>(p);
}

}  // namespace

ReleaseFlag ReleaseFlag::create(const std::string& name_hint) {
  std::random_device entropy;
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::string name =
        "/hangbench-pp-" + name_hint + "-" + std::to_string(getpid()) + "-" + std::to_string(entropy() & 0xffffff);
    int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) throw os_error("shm_open(create)", name);
    if (ftruncate(fd, static_cast<off_t>(page_bytes())) != 0) {
      ::close(fd);
      shm_unlink(name.c_str());
      throw os_error("ftruncate", name);
    }
    ReleaseWords* words = map_descriptor(fd, name);
    std::memset(words, 0, page_bytes());
    return ReleaseFlag(name, words, true);
  }
  throw std::runtime_error("could not find a free shared-memory name for the release flag");
}

ReleaseFlag ReleaseFlag::open(const std::string& name) {
  int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) throw os_error("shm_open(open)", name);
  return ReleaseFlag(name, map_descriptor(fd, name), false);
}

ReleaseFlag::ReleaseFlag(std::string name, ReleaseWords* words, bool owns_name)
    : name_(std::move(name)), words_(words), owns_name_(owns_name) {}

ReleaseFlag::ReleaseFlag(ReleaseFlag&& other) noexcept
    : name_(std::move(other.name_)), words_(other.words_), owns_name_(other.owns_name_) {
  other.words_ = nullptr;
  other.owns_name_ = false;
}

ReleaseFlag::~ReleaseFlag() {
  if (owns_name_) unlink_name();
  if (words_ != nullptr) munmap(words_, page_bytes());
}

void ReleaseFlag::unlink_name() {
  if (!owns_name_) return;
  shm_unlink(name_.c_str());
  owns_name_ = false;
}

std::size_t ReleaseFlag::mapped_bytes() const { return page_bytes(); }

void ReleaseFlag::release_step(std::uint64_t step) {
  word(words_->released_steps).store(step + 1, std::memory_order_release);
}

std::uint64_t ReleaseFlag::released_steps() const {
  return word(words_->released_steps).load(std::memory_order_acquire);
}

std::uint64_t ReleaseFlag::spin_started() const { return word(words_->spin_started).load(std::memory_order_acquire); }

void ReleaseFlag::set_abort() { word(words_->abort).store(1, std::memory_order_release); }

bool ReleaseFlag::aborted() const { return word(words_->abort).load(std::memory_order_acquire) != 0; }

}  // namespace pp
