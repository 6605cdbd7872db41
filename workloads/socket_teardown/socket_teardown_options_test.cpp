// The workload's command line and what each gate means.
#include <gtest/gtest.h>

#include "options.hpp"

namespace socket_teardown {
namespace {

template <typename T>
T expect_parsed_as(const std::vector<std::string>& args) {
  ParsedArgs parsed = parse_args(args);
  EXPECT_TRUE(std::holds_alternative<T>(parsed));
  if (auto* err = std::get_if<UsageError>(&parsed)) ADD_FAILURE() << err->message;
  return std::holds_alternative<T>(parsed) ? std::get<T>(parsed) : T{};
}

std::string usage_error(const std::vector<std::string>& args) {
  ParsedArgs parsed = parse_args(args);
  auto* err = std::get_if<UsageError>(&parsed);
  return err ? err->message : "(accepted)";
}

TEST(SocketTeardownOptions, DefaultsAreTheHangingConfiguration) {
  auto o = expect_parsed_as<RankOptions>({});
  EXPECT_EQ(o.close, CloseVariant::CloseOnly);
  EXPECT_EQ(o.gate, Gate::After);
  EXPECT_EQ(o.topology, Topology::Thread);
  EXPECT_EQ(o.poll_timeout_ms, 500);
  EXPECT_EQ(o.helper_lifetime_s, 0);
}

TEST(SocketTeardownOptions, ParsesEveryOption) {
  auto o = expect_parsed_as<RankOptions>({"--close=shutdown", "--gate=exec-cloexec", "--topology=process",
                                          "--helper-lifetime=1.5", "--poll-timeout-ms=50", "--sample-interval-ms=100",
                                          "--hold-ms=0"});
  EXPECT_EQ(o.close, CloseVariant::ShutdownThenClose);
  EXPECT_EQ(o.gate, Gate::ExecCloexec);
  EXPECT_EQ(o.topology, Topology::Process);
  EXPECT_DOUBLE_EQ(o.helper_lifetime_s, 1.5);
  EXPECT_EQ(o.poll_timeout_ms, 50);
  EXPECT_EQ(o.sample_interval_ms, 100);
  EXPECT_EQ(o.hold_ms, 0);
}

TEST(SocketTeardownOptions, RejectsBadInputWithAMessage) {
  EXPECT_NE(usage_error({"--close=maybe"}).find("--close must be"), std::string::npos);
  EXPECT_NE(usage_error({"--gate=sideways"}).find("--gate must be"), std::string::npos);
  EXPECT_NE(usage_error({"--topology=cloud"}).find("--topology"), std::string::npos);
  EXPECT_NE(usage_error({"--helper-lifetime=-1"}).find("--helper-lifetime"), std::string::npos);
  EXPECT_NE(usage_error({"--poll-timeout-ms=0"}).find("positive"), std::string::npos);
  EXPECT_NE(usage_error({"--poll-timeout-ms=1.5"}).find("integer"), std::string::npos);
  EXPECT_NE(usage_error({"--frobnicate=1"}).find("unknown option"), std::string::npos);
  EXPECT_NE(usage_error({"positional"}).find("--name=value"), std::string::npos);
  EXPECT_NE(usage_error({"--gate=after", "--gate=none"}).find("twice"), std::string::npos);
}

TEST(SocketTeardownOptions, HelpIsNotAnError) {
  EXPECT_TRUE(std::holds_alternative<HelpRequested>(parse_args({"--help"})));
  EXPECT_NE(usage_text().find("--gate="), std::string::npos);
}

TEST(SocketTeardownOptions, HelperModeNeedsItsParentAndPipe) {
  auto h =
      expect_parsed_as<HelperModeOptions>({kRunHelperFlag, "--parent-pid=42", "--helper-lifetime=0", "--ready-fd=7"});
  EXPECT_EQ(h.parent_pid, 42);
  EXPECT_EQ(h.ready_fd, 7);
  EXPECT_NE(usage_error({kRunHelperFlag, "--parent-pid=42"}).find("--ready-fd"), std::string::npos);
}

TEST(SocketTeardownOptions, GatesMapToMechanisms) {
  GatePlan hang = plan_for(Gate::After);
  EXPECT_EQ(hang.timing, HelperTiming::AfterConnect);
  EXPECT_EQ(hang.start, HelperStart::Fork);
  EXPECT_FALSE(hang.cloexec);
  EXPECT_EQ(hang.path, TeardownPath::Abort);

  EXPECT_EQ(plan_for(Gate::Before).timing, HelperTiming::BeforeConnect);
  EXPECT_EQ(plan_for(Gate::None).timing, HelperTiming::None);
  EXPECT_EQ(plan_for(Gate::CloseRange).start, HelperStart::ForkCloseRange);
  EXPECT_EQ(plan_for(Gate::ExecCloexec).start, HelperStart::ForkExec);
  EXPECT_TRUE(plan_for(Gate::ExecCloexec).cloexec);
  EXPECT_EQ(plan_for(Gate::Graceful).path, TeardownPath::Graceful);
  EXPECT_EQ(plan_for(Gate::Graceful).timing, HelperTiming::AfterConnect);
}

}  // namespace
}  // namespace socket_teardown
