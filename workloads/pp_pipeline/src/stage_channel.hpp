// The MPI message layer between neighbouring stages: stage s posts its
// schedule and sample-state messages to s+1 as nonblocking sends, and s+1
// receives them before it does anything that depends on the step.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "mpi_eager_limits.hpp"
#include "rendezvous_threshold.hpp"
#include "stage_messages.hpp"

namespace pp {

struct ReceivedStep {
  ScheduleMessage schedule;
  SampleStateMessage sample_state;
};

class StageChannel {
 public:
  // `wire_bytes`: the padded size of each message. Throws std::invalid_argument
  // when the stage is outside the communicator.
  StageChannel(MPI_Comm comm, std::size_t wire_bytes);
  StageChannel(const StageChannel&) = delete;
  StageChannel& operator=(const StageChannel&) = delete;

  int stage() const { return stage_; }
  int num_stages() const { return num_stages_; }
  bool has_next() const { return stage_ + 1 < num_stages_; }
  bool has_previous() const { return stage_ > 0; }

  // MPI_Isend of one message to the next stage; the buffers live until wait_sends().
  void post_schedule(const ScheduleMessage& schedule);
  void post_sample_state(const SampleStateMessage& sample_state);
  // Both, schedule first.
  void post_sends(const ScheduleMessage& schedule, const SampleStateMessage& sample_state);
  // MPI_Waitall of the posted sends (itself an MPI entry: it drives their progress).
  void wait_sends();
  // MPI_Testall without blocking; true when none are pending.
  bool sends_complete();

  // Receives the schedule, then the sample state, from the previous stage and
  // checks both against `expected_step`. Throws std::runtime_error on any
  // mismatch or damaged payload.
  ReceivedStep receive_step(int expected_step);
  // The two halves of receive_step, each checked against the step.
  ScheduleMessage receive_schedule(int expected_step);
  SampleStateMessage receive_sample_state(int expected_step);

 private:
  MPI_Comm comm_;
  std::size_t wire_bytes_;
  int stage_ = 0;
  int num_stages_ = 0;
  std::vector<std::byte> schedule_out_, sample_state_out_, receive_buffer_;
  std::vector<MPI_Request> pending_;
  std::span<const std::byte> receive_bytes(int tag, const char* what);
  void check_origin(std::uint32_t step, std::uint32_t from, int expected_step, const char* what) const;
};

// Reads the eager limits of the MPI library in this process (MPI_T control
// variables, plus UCX_RNDV_THRESH from the environment). Call after MPI_Init.
using hangbench::rendezvous::read_mpi_eager_limits;

// MPI's error code as text ("MPI_ERR_TRUNCATE: message truncated").
std::string mpi_error_text(int code);

}  // namespace pp
