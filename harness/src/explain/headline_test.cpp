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

// The headline tells the hang that explains the others: a catalogued one, then a collective
// mismatch over the ring it causes, a ring over a pipe reader that sees one end of it; a ring of
// one thread waiting for itself keeps the rules' order (seen in the GPU-free corpus).
TEST(Headline, TellsTheFindingThatExplainsTheOthers) {
  Snapshot s;
  ProcessSnapshot p;
  p.info.pid = 10;
  s.processes = {p};
  auto finding = [](std::string rule, std::vector<int> tids, std::string catalog = "") {
    Finding f;
    f.rule = std::move(rule);
    f.severity = Severity::Hang;
    f.pids = {10};
    f.tids = std::move(tids);
    f.catalog = std::move(catalog);
    return f;
  };
  std::vector<Finding> findings = {finding("pipe-writer-held", {10}), finding("wait-cycle", {10, 11}),
                                   finding("collective-mismatch", {10})};
  EXPECT_EQ(headline_finding(s, findings)->rule, "collective-mismatch");
  findings.pop_back();
  EXPECT_EQ(headline_finding(s, findings)->rule, "wait-cycle");
  findings[1].tids = {10};
  EXPECT_EQ(headline_finding(s, findings)->rule, "pipe-writer-held");
  findings.push_back(finding("nccl-descriptor-alias", {10}, "nccl-socket-close-alias"));
  EXPECT_EQ(headline_finding(s, findings)->rule, "nccl-descriptor-alias");
  // A finding about a process the snapshot does not hold cannot be told.
  findings.back().pids = {99};
  EXPECT_EQ(headline_finding(s, findings)->rule, "pipe-writer-held");
  EXPECT_EQ(headline_finding(s, {}), nullptr);
  // Over several nodes' findings (a Slurm job) no snapshot is asked: the catalogued one leads.
  EXPECT_EQ(headline_finding(findings)->rule, "nccl-descriptor-alias");
  findings.back().severity = Severity::Note;
  EXPECT_EQ(headline_finding(findings)->rule, "pipe-writer-held");
  EXPECT_EQ(headline_finding(std::vector<Finding>{}), nullptr);
}

// Lines that cannot shrink below a remedy's room are left whole rather than cut to nothing.
TEST(Headline, FitNeverCutsALineToItsLabel) {
  std::vector<std::string> lines(5, "WAITS    " + std::string(30, 'w') + " " + std::string(30, 'v'));
  fit_headline(lines, 100);
  for (const auto& line : lines) EXPECT_GE(line.size(), 30u) << line;
}

}  // namespace
}  // namespace hangbench::diagnose
