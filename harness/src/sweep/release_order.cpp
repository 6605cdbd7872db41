#include "sweep/release_order.hpp"

#include <cctype>
#include <tuple>
#include <vector>

namespace hangbench::sweep {
namespace {

// "2.25.1.post1" -> {2, 25, 1, 1} with the post number last; "" -> empty.
std::vector<long> release_key(const std::string& release) {
  std::vector<long> key;
  long number = -1;
  for (char c : release) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      number = (number < 0 ? 0 : number * 10) + (c - '0');
    } else if (number >= 0) {
      key.push_back(number);
      number = -1;
    }
  }
  if (number >= 0) key.push_back(number);
  return key;
}

}  // namespace

bool release_less(const std::string& a, const std::string& b) {
  const auto ka = release_key(a), kb = release_key(b);
  if (ka.empty() != kb.empty()) return kb.empty();  // unknown releases last
  return ka < kb;
}

}  // namespace hangbench::sweep
