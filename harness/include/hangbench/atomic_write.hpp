// One way to write a file that a reader (or a crash) never sees half written.
#pragma once

#include <string>

namespace hangbench {

// Writes `text` to PATH.tmp and renames it over `path`. Throws std::runtime_error
// naming the file and the reason (a full disk: "No space left on device"). Every
// write and the close are checked; whatever sits at PATH.tmp (a planted link) is
// removed, never followed, and a link at `path` is replaced, not written through.
// A `path` that is a device or a pipe (/dev/stdout, /dev/full) is written into.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace hangbench
