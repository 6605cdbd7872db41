// A side channel between the two ranks that does not depend on MPI progress:
// one TCP connection on loopback, set up before the critical section. Rank 1
// writes the received byte count on it once MPI_Recv has completed; rank 0's
// executor blocks in read() on it (a native call that never enters MPI).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hangbench::mpi_progress {

class ReplyChannel {
 public:
  // Rank 0: listens on 127.0.0.1, an ephemeral port.
  static ReplyChannel listen_on_loopback();
  // Rank 1: connects to the port rank 0 announced.
  static ReplyChannel connect_to_loopback(std::uint16_t port);

  ReplyChannel(ReplyChannel&& other) noexcept;
  ReplyChannel& operator=(ReplyChannel&&) = delete;
  ReplyChannel(const ReplyChannel&) = delete;
  ~ReplyChannel();

  std::uint16_t port() const { return port_; }
  // Rank 0: accepts the one peer (blocking).
  void accept_peer();
  // Blocking, retries on EINTR; throws std::runtime_error on EOF or error.
  void write_u64(std::uint64_t value);
  std::uint64_t read_u64();

 private:
  ReplyChannel(int listen_fd, int peer_fd, std::uint16_t port);
  int listen_fd_ = -1;
  int peer_fd_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace hangbench::mpi_progress
