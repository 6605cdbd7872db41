// A page as a reader sees it: rendered by headless Chromium (Debian's `chromium`,
// installed by ci/setup.sh). The page carries a measuring script that writes JSON
// into <pre id="measure" hidden>; --dump-dom prints it back. Shared by the layout
// tests of the run report, the history page and the release table.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace hangbench::testing {

// `page` with `script` (a <pre id="measure" hidden></pre><script>…</script>) put
// before </body>: the pages themselves have no script.
inline std::string with_measure(std::string page, const std::string& script) {
  page.replace(page.rfind("</body>"), 7, script + "</body>");
  return page;
}

// Runs Chromium on `page` in a `width` px window and returns the JSON the script
// wrote; fails the test (never skips it) when Chromium is missing or does not answer.
inline nlohmann::json measure_in_chromium(const std::filesystem::path& page, const std::filesystem::path& profile,
                                          int width) {
  std::string command = fmt::format(
      "timeout 180 chromium --headless --no-sandbox --disable-gpu --user-data-dir='{}' --window-size={},2200 "
      "--dump-dom 'file://{}' 2>/dev/null",
      profile.string(), width, page.string());
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return nullptr;
  std::string dom;
  char chunk[4096];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) dom.append(chunk, got);
  ::pclose(pipe);
  const std::string open = "<pre id=\"measure\" hidden=\"\">";
  size_t begin = dom.find(open);
  size_t end = begin == std::string::npos ? begin : dom.find("</pre>", begin);
  if (end == std::string::npos) {
    ADD_FAILURE() << "chromium printed no measurement (is Debian's chromium installed? ci/setup.sh installs it):\n"
                  << dom.substr(0, 2000);
    return nullptr;
  }
  std::string text = dom.substr(begin + open.size(), end - begin - open.size());
  for (auto [entity, c] : {std::pair{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}})
    for (size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1))
      text.replace(at, std::string(entity).size(), c);
  return nlohmann::json::parse(text);
}

}  // namespace hangbench::testing
