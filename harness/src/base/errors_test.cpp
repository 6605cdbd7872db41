// The one mapping from what a command throws to its exit code and its message.
#include "hangbench/errors.hpp"

#include <gtest/gtest.h>

#include "hangbench/exit_codes.hpp"

namespace hangbench {
namespace {

TEST(Errors, EachKindExitsWithItsCodeOfTheReadme) {
  EXPECT_EQ(exit_code_of(UsageError("--trials must be > 0")), exit_code::kUsage);
  EXPECT_EQ(exit_code_of(ConfigError("m.toml", 3, "unknown key")), exit_code::kUsage);
  EXPECT_EQ(exit_code_of(InfraError("cannot write out.md")), exit_code::kInfra);
  EXPECT_EQ(exit_code_of(std::invalid_argument("bad tally")), exit_code::kUsage);
  EXPECT_EQ(exit_code_of(std::runtime_error("make failed")), exit_code::kInfra);
}

TEST(Errors, TheLineNamesCommandKindAndMessage) {
  EXPECT_EQ(error_line("run", UsageError("--trials must be > 0")), "hangbench run: error: --trials must be > 0");
  EXPECT_EQ(error_line("evidence", InfraError("cannot write x.md")),
            "hangbench evidence: infrastructure error: cannot write x.md");
  EXPECT_EQ(error_line("", std::runtime_error("boom")), "hangbench: infrastructure error: boom");
}

TEST(Errors, AConfigErrorNamesItsFileAndLine) {
  const ConfigError e("m.toml", 3, "unknown key 'x'");
  EXPECT_STREQ(e.what(), "m.toml:3: unknown key 'x'");
  EXPECT_EQ(e.file(), "m.toml");
  EXPECT_EQ(e.line(), 3);
  EXPECT_STREQ(ConfigError("m.toml", 0, "cannot read").what(), "m.toml: cannot read");
}

}  // namespace
}  // namespace hangbench
