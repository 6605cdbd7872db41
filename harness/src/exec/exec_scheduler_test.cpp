// FakeExecutor + scheduler: order, determinism, skipping, cell completion, cancel.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "hangbench/executor.hpp"
#include "hangbench/scheduler.hpp"

namespace hangbench {
namespace {

Matrix three_cells(int trials) {
  Matrix m;
  for (const char* id : {"c=a", "c=b", "c=c"}) {
    Cell c;
    c.id = id;
    c.trials = trials;
    m.cells.push_back(c);
  }
  return m;
}

TEST(Scheduler, PlanInterleavesCellsByTrialIndex) {
  Matrix m = three_cells(2);
  m.cells[2].trials = 3;
  auto plan = plan_trials(m, {{"c=b", 0}});
  std::vector<std::pair<std::string, int>> order;
  for (const auto& p : plan) order.emplace_back(p.cell->id, p.index);
  EXPECT_EQ(order, (std::vector<std::pair<std::string, int>>{
                       {"c=a", 0}, {"c=c", 0}, {"c=a", 1}, {"c=b", 1}, {"c=c", 1}, {"c=c", 2}}));
}

TEST(Scheduler, OneWorkerRunsInPlanOrderWithScriptedOutcomes) {
  Matrix m = three_cells(2);
  FakeExecutor fake;
  fake.set("c=b", 1, Outcome::Hang);
  ScheduleOptions opts;
  opts.concurrency = 1;
  std::vector<TrialResult> seen;
  std::vector<std::string> cells_done;
  int n = run_schedule(
      m, fake, opts,
      {[&](const TrialResult& r) { seen.push_back(r); }, [&](const Cell& c) { cells_done.push_back(c.id); }});
  EXPECT_EQ(n, 6);
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(fake.calls()[4], (std::pair<std::string, int>{"c=b", 1}));
  EXPECT_EQ(seen[4].outcome, Outcome::Hang);
  EXPECT_EQ(seen[4].cell_id, "c=b");
  EXPECT_EQ(seen[0].outcome, Outcome::Passed);
  EXPECT_EQ(cells_done, (std::vector<std::string>{"c=a", "c=b", "c=c"}));
}

TEST(Scheduler, ManyWorkersGiveTheSameOutcomesEveryTime) {
  Matrix m = three_cells(20);
  auto script = [](const Cell& c, int i) {
    TrialResult r;
    r.outcome = (i % 3 == 0 && c.id == "c=a") ? Outcome::Hang : Outcome::Passed;
    return r;
  };
  std::map<std::pair<std::string, int>, Outcome> first;
  for (int round = 0; round < 3; ++round) {
    FakeExecutor fake(script);
    ScheduleOptions opts;
    opts.concurrency = 4;
    std::map<std::pair<std::string, int>, Outcome> got;
    int cells_done = 0;
    run_schedule(m, fake, opts,
                 {[&](const TrialResult& r) {
                    got[{r.cell_id, r.index}] = r.outcome;
                  },
                  [&](const Cell&) { ++cells_done; }});
    EXPECT_EQ(got.size(), 60u);
    EXPECT_EQ(cells_done, 3);
    if (round == 0) first = got;
    EXPECT_EQ(got, first);
  }
  EXPECT_EQ(first.at({"c=a", 3}), Outcome::Hang);
  EXPECT_EQ(first.at({"c=b", 3}), Outcome::Passed);
}

TEST(Scheduler, SkippedTrialsAreNotRun) {
  Matrix m = three_cells(2);
  FakeExecutor fake;
  ScheduleOptions opts;
  opts.concurrency = 2;
  opts.skip = {{"c=a", 0}, {"c=a", 1}, {"c=c", 0}};
  int n = run_schedule(m, fake, opts, {});
  EXPECT_EQ(n, 3);
  for (const auto& call : fake.calls()) {
    EXPECT_FALSE(opts.skip.count(call)) << call.first << " " << call.second;
  }
}

TEST(Scheduler, CancelStopsTakingTrialsAndInterruptedOnesAreNotReported) {
  Matrix m = three_cells(10);
  std::atomic<bool> cancel{false};
  FakeExecutor fake;
  ScheduleOptions opts;
  opts.concurrency = 1;
  opts.cancel = &cancel;
  int reported = 0;
  run_schedule(m, fake, opts,
               {[&](const TrialResult&) {
                  if (++reported == 4) cancel = true;
                },
                {}});
  EXPECT_EQ(reported, 4);
  EXPECT_EQ(fake.calls().size(), 4u);
}

TEST(Scheduler, ACallbackErrorStopsTheRunAndIsRethrown) {
  Matrix m = three_cells(5);
  FakeExecutor fake;
  ScheduleOptions opts;
  opts.concurrency = 2;
  EXPECT_THROW(run_schedule(m, fake, opts, {[](const TrialResult&) { throw std::runtime_error("disk full"); }, {}}),
               std::runtime_error);
  EXPECT_LT(fake.calls().size(), 15u);
}

}  // namespace
}  // namespace hangbench

// stacks = "first-hang": of the hung trials of one cell, exactly one takes stacks,
// however many reach capture at once.
TEST(StackBudget, OncePerCellEvenFromManyThreads) {
  hangbench::StackBudget budget;
  std::atomic<int> taken_a{0}, taken_b{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] { (i % 2 ? taken_a : taken_b) += budget.take(i % 2 ? "cell=a" : "cell=b") ? 1 : 0; });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(taken_a.load(), 1);
  EXPECT_EQ(taken_b.load(), 1);
  EXPECT_FALSE(budget.take("cell=a"));
  EXPECT_TRUE(budget.take("cell=c"));
}
