// One way to write a file that a reader (or a crash) never sees half written.
#pragma once

#include <string>

namespace hangbench {

// Writes `text` to PATH.tmp and renames it over `path`. Throws std::runtime_error
// naming the file and the reason (a full disk: "No space left on device").
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace hangbench
