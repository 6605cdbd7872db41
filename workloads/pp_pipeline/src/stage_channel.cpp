#include "stage_channel.hpp"

#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace pp {
namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string(what) + ": " + mpi_error_text(rc));
}

int as_count(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw std::invalid_argument("message of " + std::to_string(bytes) + " B exceeds an MPI count");
  }
  return static_cast<int>(bytes);
}

}  // namespace

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

StageChannel::StageChannel(MPI_Comm comm, std::size_t wire_bytes)
    : comm_(comm), wire_bytes_(wire_bytes), receive_buffer_(wire_bytes) {
  check(MPI_Comm_rank(comm, &stage_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &num_stages_), "MPI_Comm_size");
  as_count(wire_bytes);
  if (wire_bytes < minimal_wire_bytes()) {
    throw std::invalid_argument("message size below the header size " + std::to_string(minimal_wire_bytes()));
  }
}

void StageChannel::post_schedule(const ScheduleMessage& schedule) {
  if (!has_next()) throw std::logic_error("the last stage has no next stage to send to");
  if (!pending_.empty()) throw std::logic_error("previous step's sends were not waited on");
  schedule_out_ = encode(schedule, wire_bytes_);
  pending_.emplace_back();
  check(MPI_Isend(schedule_out_.data(), as_count(wire_bytes_), MPI_BYTE, stage_ + 1, kScheduleTag, comm_,
                  &pending_.back()),
        "MPI_Isend(schedule)");
}

void StageChannel::post_sample_state(const SampleStateMessage& sample_state) {
  if (!has_next()) throw std::logic_error("the last stage has no next stage to send to");
  if (pending_.size() != 1) throw std::logic_error("the sample state follows its step's schedule");
  sample_state_out_ = encode(sample_state, wire_bytes_);
  pending_.emplace_back();
  check(MPI_Isend(sample_state_out_.data(), as_count(wire_bytes_), MPI_BYTE, stage_ + 1, kSampleStateTag, comm_,
                  &pending_.back()),
        "MPI_Isend(sample state)");
}

void StageChannel::post_sends(const ScheduleMessage& schedule, const SampleStateMessage& sample_state) {
  post_schedule(schedule);
  post_sample_state(sample_state);
}

void StageChannel::wait_sends() {
  if (pending_.empty()) return;
  check(MPI_Waitall(static_cast<int>(pending_.size()), pending_.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall(stage sends)");
  pending_.clear();
}

bool StageChannel::sends_complete() {
  if (pending_.empty()) return true;
  int done = 0;
  check(MPI_Testall(static_cast<int>(pending_.size()), pending_.data(), &done, MPI_STATUSES_IGNORE),
        "MPI_Testall(stage sends)");
  if (done) pending_.clear();
  return done != 0;
}

std::span<const std::byte> StageChannel::receive_bytes(int tag, const char* what) {
  if (!has_previous()) throw std::logic_error("stage 0 has no previous stage to receive from");
  MPI_Status status{};
  check(MPI_Recv(receive_buffer_.data(), as_count(wire_bytes_), MPI_BYTE, stage_ - 1, tag, comm_, &status), what);
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  return std::span<const std::byte>(receive_buffer_.data(), static_cast<std::size_t>(count));
}

void StageChannel::check_origin(std::uint32_t step, std::uint32_t from, int expected_step, const char* what) const {
  if (step != static_cast<std::uint32_t>(expected_step) || from != static_cast<std::uint32_t>(stage_ - 1)) {
    throw std::runtime_error("stage " + std::to_string(stage_) + " expected the " + what + " of step " +
                             std::to_string(expected_step) + " from stage " + std::to_string(stage_ - 1) +
                             ", got step " + std::to_string(step) + " from stage " + std::to_string(from));
  }
}

ScheduleMessage StageChannel::receive_schedule(int expected_step) {
  std::string error;
  auto m = decode_schedule(receive_bytes(kScheduleTag, "MPI_Recv(schedule)"), &error);
  if (!m) throw std::runtime_error("schedule from stage " + std::to_string(stage_ - 1) + ": " + error);
  check_origin(m->step, m->from_stage, expected_step, "schedule");
  return *m;
}

SampleStateMessage StageChannel::receive_sample_state(int expected_step) {
  std::string error;
  auto m = decode_sample_state(receive_bytes(kSampleStateTag, "MPI_Recv(sample state)"), &error);
  if (!m) throw std::runtime_error("sample state from stage " + std::to_string(stage_ - 1) + ": " + error);
  check_origin(m->step, m->from_stage, expected_step, "sample state");
  return *m;
}

ReceivedStep StageChannel::receive_step(int expected_step) {
  ReceivedStep got;
  got.schedule = receive_schedule(expected_step);
  got.sample_state = receive_sample_state(expected_step);
  return got;
}

}  // namespace pp
