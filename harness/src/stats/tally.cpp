// "K/N" counts typed by people, checked with messages that say what is wrong.
#include <charconv>
#include <limits>

#include "hangbench/stats.hpp"

namespace hangbench::stats {
namespace {

bool parse_count(const std::string& digits, long long* out) {
  if (digits.empty()) return false;
  for (char c : digits)
    if (c < '0' || c > '9') return false;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *out);
  return ec == std::errc() && end == digits.data() + digits.size();
}

}  // namespace

std::optional<Tally> parse_tally(const std::string& text, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<Tally> {
    if (error) *error = "'" + text + "': " + why;
    return std::nullopt;
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos || text.find('/', slash + 1) != std::string::npos)
    return fail("expected HANGS/TRIALS, for example 8/98");
  Tally t;
  if (!parse_count(text.substr(0, slash), &t.k) || !parse_count(text.substr(slash + 1), &t.n))
    return fail("counts must be non-negative whole numbers, for example 8/98");
  // The exact test sums over every possible table: keep that to about a second.
  constexpr long long kMaxTrials = 1'000'000;
  if (t.n > kMaxTrials) return fail("at most 1000000 trials per side");
  if (t.n == 0) return fail("the number of trials must be positive");
  if (t.k > t.n) return fail("more hangs than trials");
  return t;
}

}  // namespace hangbench::stats
