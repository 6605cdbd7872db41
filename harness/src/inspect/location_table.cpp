// PEP 626 location tables (co_linetable since 3.11): one entry per run of code
// units, the line as a delta from the previous entry's line.
#include <cstdint>

#include "hangbench/python_stacks.hpp"

namespace hangbench::diagnose {

namespace {

struct Reader {
  const std::string& bytes;
  std::size_t at = 0;
  bool done() const { return at >= bytes.size(); }
  int byte() { return done() ? 0 : static_cast<unsigned char>(bytes[at++]); }
  std::uint32_t varint() {
    int b = byte();
    std::uint32_t value = b & 63;
    for (int shift = 6; (b & 64) && !done() && shift < 32; shift += 6) {
      b = byte();
      value |= static_cast<std::uint32_t>(b & 63) << shift;
    }
    return value;
  }
  int signed_varint() {
    std::uint32_t v = varint();
    return (v & 1) ? -static_cast<int>(v >> 1) : static_cast<int>(v >> 1);
  }
};

}  // namespace

std::optional<int> line_from_location_table(const std::string& table, int first_line, int instruction) {
  Reader in{table};
  int line = first_line;
  int address = 0;
  while (!in.done()) {
    int first = in.byte();
    if (!(first & 0x80)) return std::nullopt;  // every entry starts with its high bit set
    int code = (first >> 3) & 15;
    int end = address + (first & 7) + 1;
    bool has_line = true;
    if (code == 15) {
      has_line = false;       // no location
    } else if (code == 14) {  // long form: line delta, end line, columns
      line += in.signed_varint();
      in.varint();
      in.varint();
      in.varint();
    } else if (code == 13) {  // no column
      line += in.signed_varint();
    } else if (code >= 10) {  // one-line forms: the delta is in the code
      line += code - 10;
      in.byte();
      in.byte();
    } else {  // short form: same line, one column byte
      in.byte();
    }
    if (instruction >= address && instruction < end) return has_line ? std::optional<int>(line) : std::nullopt;
    address = end;
  }
  return std::nullopt;
}

}  // namespace hangbench::diagnose
