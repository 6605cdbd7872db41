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

}  // namespace
}  // namespace hangbench::diagnose
