// The host-side messages one stage sends the next every step, and their wire
// format. Each message is padded to a chosen size so that MPI must use its
// rendezvous protocol (the size is checked against the threshold elsewhere).
//
// Wire layout (little-endian, as the host): a fixed header, a filler whose
// bytes depend on (kind, step, offset) so that a torn or misrouted message is
// caught, and an FNV-1a checksum of everything before it in the last 8 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pp {

// MPI tags of the pipeline. The progress probe tag is reserved: nothing is ever
// sent on it, so a probe for it only enters MPI and never matches.
inline constexpr int kScheduleTag = 0x5001;
inline constexpr int kSampleStateTag = 0x5002;
inline constexpr int kLinkSetupTag = 0x5003;

enum class MessageKind : std::uint32_t { Schedule = 1, SampleState = 2 };

// What the next stage needs to post its activation receive.
struct ScheduleMessage {
  std::uint32_t step = 0;
  std::uint32_t from_stage = 0;
  std::uint32_t microbatch_count = 0;
  std::uint64_t activation_elements = 0;  // float elements the activation receive expects
  bool operator==(const ScheduleMessage&) const = default;
};

// The per-sequence bookkeeping a PP runtime forwards (here: counts and a token sum).
struct SampleStateMessage {
  std::uint32_t step = 0;
  std::uint32_t from_stage = 0;
  std::uint32_t sequence_count = 0;
  std::uint64_t token_sum = 0;
  bool operator==(const SampleStateMessage&) const = default;
};

// Smallest wire size that holds the header and checksum.
std::size_t minimal_wire_bytes();

std::vector<std::byte> encode(const ScheduleMessage& m, std::size_t wire_bytes);
std::vector<std::byte> encode(const SampleStateMessage& m, std::size_t wire_bytes);

// nullopt with *error set when the bytes are not a valid message of that kind.
std::optional<ScheduleMessage> decode_schedule(std::span<const std::byte> wire, std::string* error);
std::optional<SampleStateMessage> decode_sample_state(std::span<const std::byte> wire, std::string* error);

// The messages stage `stage` sends for `step`: deterministic, so the receiver can check them.
ScheduleMessage make_schedule(int stage, int step, std::uint64_t activation_elements);
SampleStateMessage make_sample_state(int stage, int step);

}  // namespace pp
