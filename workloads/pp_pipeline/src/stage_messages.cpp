#include "stage_messages.hpp"

#include <cstring>
#include <stdexcept>

namespace pp {
namespace {

constexpr std::uint32_t kMagic = 0x50504d31;  // "PPM1"

// Header fields shared by both kinds; the four payload words differ in meaning.
struct WireHeader {
  std::uint32_t magic;
  std::uint32_t kind;
  std::uint64_t total_bytes;
  std::uint32_t step;
  std::uint32_t from_stage;
  std::uint32_t count;
  std::uint32_t reserved;
  std::uint64_t value;
};

std::uint64_t fnv1a(const std::byte* data, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<std::uint8_t>(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

std::byte filler_byte(std::uint32_t kind, std::uint32_t step, std::size_t offset) {
  return static_cast<std::byte>((offset * 131u + step * 7u + kind * 29u) & 0xffu);
}

std::vector<std::byte> encode_header(const WireHeader& header, std::size_t wire_bytes) {
  if (wire_bytes < minimal_wire_bytes()) {
    throw std::invalid_argument("message size " + std::to_string(wire_bytes) + " is below the minimum of " +
                                std::to_string(minimal_wire_bytes()));
  }
  std::vector<std::byte> wire(wire_bytes);
  WireHeader h = header;
  h.magic = kMagic;
  h.total_bytes = wire_bytes;
  std::memcpy(wire.data(), &h, sizeof h);
  const std::size_t filler_end = wire_bytes - sizeof(std::uint64_t);
  for (std::size_t i = sizeof h; i < filler_end; ++i) wire[i] = filler_byte(h.kind, h.step, i);
  const std::uint64_t sum = fnv1a(wire.data(), filler_end);
  std::memcpy(wire.data() + filler_end, &sum, sizeof sum);
  return wire;
}

std::optional<WireHeader> decode_header(std::span<const std::byte> wire, MessageKind kind, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<WireHeader> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (wire.size() < minimal_wire_bytes()) return fail("message shorter than its header");
  WireHeader h{};
  std::memcpy(&h, wire.data(), sizeof h);
  if (h.magic != kMagic) return fail("bad magic: not a pipeline message");
  if (h.kind != static_cast<std::uint32_t>(kind)) {
    return fail("message kind " + std::to_string(h.kind) + " where " +
                std::to_string(static_cast<std::uint32_t>(kind)) + " was expected");
  }
  if (h.total_bytes != wire.size()) {
    return fail("header says " + std::to_string(h.total_bytes) + " bytes, received " + std::to_string(wire.size()));
  }
  const std::size_t filler_end = wire.size() - sizeof(std::uint64_t);
  std::uint64_t sum = 0;
  std::memcpy(&sum, wire.data() + filler_end, sizeof sum);
  if (sum != fnv1a(wire.data(), filler_end)) return fail("checksum mismatch: payload damaged");
  return h;
}

}  // namespace

std::size_t minimal_wire_bytes() { return sizeof(WireHeader) + sizeof(std::uint64_t); }

std::vector<std::byte> encode(const ScheduleMessage& m, std::size_t wire_bytes) {
  WireHeader h{};
  h.kind = static_cast<std::uint32_t>(MessageKind::Schedule);
  h.step = m.step;
  h.from_stage = m.from_stage;
  h.count = m.microbatch_count;
  h.value = m.activation_elements;
  return encode_header(h, wire_bytes);
}

std::vector<std::byte> encode(const SampleStateMessage& m, std::size_t wire_bytes) {
  WireHeader h{};
  h.kind = static_cast<std::uint32_t>(MessageKind::SampleState);
  h.step = m.step;
  h.from_stage = m.from_stage;
  h.count = m.sequence_count;
  h.value = m.token_sum;
  return encode_header(h, wire_bytes);
}

std::optional<ScheduleMessage> decode_schedule(std::span<const std::byte> wire, std::string* error) {
  auto h = decode_header(wire, MessageKind::Schedule, error);
  if (!h) return std::nullopt;
  return ScheduleMessage{h->step, h->from_stage, h->count, h->value};
}

std::optional<SampleStateMessage> decode_sample_state(std::span<const std::byte> wire, std::string* error) {
  auto h = decode_header(wire, MessageKind::SampleState, error);
  if (!h) return std::nullopt;
  return SampleStateMessage{h->step, h->from_stage, h->count, h->value};
}

ScheduleMessage make_schedule(int stage, int step, std::uint64_t activation_elements) {
  return ScheduleMessage{static_cast<std::uint32_t>(step), static_cast<std::uint32_t>(stage),
                         static_cast<std::uint32_t>(1 + step % 4), activation_elements};
}

SampleStateMessage make_sample_state(int stage, int step) {
  const auto sequences = static_cast<std::uint32_t>(8 + step);
  return SampleStateMessage{static_cast<std::uint32_t>(step), static_cast<std::uint32_t>(stage), sequences,
                            static_cast<std::uint64_t>(sequences) * 128u + stage};
}

}  // namespace pp
