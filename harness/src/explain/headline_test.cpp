// The headline's words: C++ frames without their template arguments, and no remedy
// borrowed from a catalog entry whose shape only matches inside its NCCL range.
#include "hangbench/headline.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hangbench::diagnose {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The WAITS line of a send in the GPU corpus on the H100: one dispatcher frame ran to hundreds of characters.
TEST(Headline, CppFramesLoseTheirTemplateArgumentsAndParametersButPythonFramesStay) {
  const std::string where =
      "`isend` (distributed_c10d.py:2552) → `c10d::ProcessGroup::send` → "
      "`c10::impl::BoxedKernelWrapper<c10::intrusive_ptr<c10d::Work, "
      "c10::detail::intrusive_target_default_null_type<c10d::Work> > (c10::ArrayRef<at::Tensor>, long), void>::call` → "
      "`THCPModule_cudaSynchronize(_object*, _object*)`";
  EXPECT_EQ(plain_function_names(where),
            "`isend` (distributed_c10d.py:2552) → `c10d::ProcessGroup::send` → "
            "`c10::impl::BoxedKernelWrapper::call` → `THCPModule_cudaSynchronize`");
  EXPECT_EQ(
      plain_function_names("`<module>` (main.py:41) → `_call_with_frames_removed` (<frozen importlib._bootstrap>:488)"),
      "`<module>` (main.py:41) → `_call_with_frames_removed` (<frozen importlib._bootstrap>:488)");
}

// missing-rank is bound to nccl-net-error-swallowed only inside 2.26.2-2.27.7: outside it a
// missing rank's remedies are not "upgrade NCCL" (seen on the H100 over 2.28.9).
TEST(Headline, AGenericShapeBorrowsNoRemedyFromAnEntryBoundToItsRange) {
  EXPECT_TRUE(remedies_for("missing-rank").empty());
  EXPECT_FALSE(remedies_for("nccl-net-error-swallowed").empty());
  for (const auto& r : remedies_for("wait-cycle")) EXPECT_THAT(r.action, Not(HasSubstr("upgrade")));
}

// Over the bound, the longest line gives way first, at a space, down to the next longest;
// characters are counted, not bytes (an arrow is three bytes and one character).
TEST(Headline, FitCutsTheLongestLineFirstAtASpace) {
  std::vector<std::string> lines = {"HANG     " + std::string(50, 'h'), "WAITS    a → b → c",
                                    "DO       " + std::string(20, 'd') + " " + std::string(400, 'x') + " tail"};
  const auto waits = lines[1];
  fit_headline(lines, 200);
  std::size_t total = lines.size() - 1;
  for (const auto& line : lines) total += line.size();
  total -= 2 * 2;  // the two arrows' extra bytes
  EXPECT_LE(total, 200u);
  EXPECT_EQ(lines[1], waits);
  EXPECT_EQ(lines[0], "HANG     " + std::string(50, 'h'));
  EXPECT_EQ(lines[2], "DO       " + std::string(20, 'd') + " ...");
  // Within the bound nothing changes.
  std::vector<std::string> short_lines = {"HANG     x", "WAITS    y"};
  fit_headline(short_lines, 600);
  EXPECT_EQ(short_lines, (std::vector<std::string>{"HANG     x", "WAITS    y"}));
}

// Lines that cannot shrink below a remedy's room are left whole rather than cut to nothing.
TEST(Headline, FitNeverCutsALineToItsLabel) {
  std::vector<std::string> lines(5, "WAITS    " + std::string(30, 'w') + " " + std::string(30, 'v'));
  fit_headline(lines, 100);
  for (const auto& line : lines) EXPECT_GE(line.size(), 30u) << line;
}

}  // namespace
}  // namespace hangbench::diagnose
