// The line tables before PEP 657: co_lnotab (3.9) and 3.10's co_linetable, both
// pairs of (bytecode delta, signed line delta) as Objects/lnotab_notes.txt of
// each version describes them; CPython answers from them when a frame is not traced.
#include <cstdint>

#include "hangbench/python_stacks.hpp"

namespace hangbench::diagnose {

// 3.9's PyCode_Addr2Line: add the line deltas of every pair whose start is at or before the offset.
int line_from_lnotab(const std::string& table, int first_line, int byte_offset) {
  int line = first_line, address = 0;
  for (std::size_t i = 0; i + 1 < table.size(); i += 2) {
    address += static_cast<unsigned char>(table[i]);
    if (address > byte_offset) break;
    line += static_cast<signed char>(table[i + 1]);
  }
  return line;
}

// 3.10's _PyCode_CheckLineNumber: each pair is the range [end, end + delta) with
// the line moved by the line delta; -128 marks a range without a line.
std::optional<int> line_from_linetable_3_10(const std::string& table, int first_line, int byte_offset) {
  int line = first_line, end = 0;
  for (std::size_t i = 0; i + 1 < table.size(); i += 2) {
    int start = end;
    end += static_cast<unsigned char>(table[i]);
    int line_delta = static_cast<signed char>(table[i + 1]);
    bool has_line = line_delta != -128;
    if (has_line) line += line_delta;
    if (byte_offset >= start && byte_offset < end) return has_line ? std::optional<int>(line) : std::nullopt;
  }
  return std::nullopt;
}

}  // namespace hangbench::diagnose
