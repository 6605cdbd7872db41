#include "matrix/template.hpp"

#include <cctype>

namespace hangbench::matrix_detail {
namespace {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Length of a {name} placeholder starting at text[pos] == '{', or 0.
size_t placeholder_length(const std::string& text, size_t pos) {
  size_t i = pos + 1;
  if (i >= text.size() || !is_name_start(text[i])) return 0;
  while (i < text.size() && is_name_char(text[i])) ++i;
  return (i < text.size() && text[i] == '}') ? i - pos + 1 : 0;
}

}  // namespace

std::string expand_template(const std::string& text, const std::map<std::string, std::string>& values,
                            const std::set<std::string>& deferred, std::optional<std::string>& unknown) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    size_t len = text[pos] == '{' ? placeholder_length(text, pos) : 0;
    if (len == 0) {
      out += text[pos++];
      continue;
    }
    std::string name = text.substr(pos + 1, len - 2);
    if (auto it = values.find(name); it != values.end()) {
      out += it->second;
    } else {
      if (!deferred.count(name) && !unknown) unknown = name;
      out += text.substr(pos, len);
    }
    pos += len;
  }
  return out;
}

}  // namespace hangbench::matrix_detail
