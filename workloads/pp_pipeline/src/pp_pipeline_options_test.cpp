// Command line and axis spelling of pp_pipeline.
#include <gtest/gtest.h>

#include "pipeline_options.hpp"

namespace pp {
namespace {

PipelineOptions parse_ok(const std::vector<std::string>& args) {
  auto parsed = parse_pipeline_options(args);
  if (auto* e = std::get_if<UsageError>(&parsed)) ADD_FAILURE() << e->message;
  return std::get<PipelineOptions>(parsed);
}

std::string parse_error(const std::vector<std::string>& args) {
  auto parsed = parse_pipeline_options(args);
  auto* e = std::get_if<UsageError>(&parsed);
  return e == nullptr ? "" : e->message;
}

TEST(PpOptions, DefaultsAreTheReferenceRun) {
  const PipelineOptions o = parse_ok({});
  EXPECT_EQ(o.progress, ProgressSource::None);
  EXPECT_EQ(o.cold_call, ColdCall::Launch);
  EXPECT_EQ(o.placement, hangbench::workload::Placement::GpuPerRank);
  EXPECT_EQ(o.link, ActivationLink::Nccl);
  EXPECT_EQ(o.message_bytes, 1u << 20);
  EXPECT_FALSE(o.rendezvous_threshold.has_value());
}

TEST(PpOptions, EveryFlagIsRead) {
  const PipelineOptions o = parse_ok(
      {"--progress=native", "--single-gpu", "--cold-call=module-load", "--steps=7", "--message-bytes=4194304",
       "--activation-elements=1024", "--rendezvous-threshold=65536", "--watchdog-s=12.5", "--pre-cold-call-delay-s=0"});
  EXPECT_EQ(o.progress, ProgressSource::Native);
  EXPECT_EQ(o.placement, hangbench::workload::Placement::SharedGpu);
  EXPECT_EQ(o.link, ActivationLink::HostPage);
  EXPECT_EQ(o.cold_call, ColdCall::ModuleLoad);
  EXPECT_EQ(o.steps, 7);
  EXPECT_EQ(o.message_bytes, 4194304u);
  EXPECT_EQ(o.activation_elements, 1024u);
  EXPECT_EQ(o.rendezvous_threshold, 65536u);
  EXPECT_DOUBLE_EQ(o.watchdog_s, 12.5);
  EXPECT_DOUBLE_EQ(o.pre_cold_call_delay_s, 0.0);
}

// Four stages on one GPU with real NCCL between them (issue 26).
TEST(PpOptions, PlacementAndLinkAreAxesOfTheirOwn) {
  const PipelineOptions shared = parse_ok({"--placement=shared-gpu"});
  EXPECT_EQ(shared.placement, hangbench::workload::Placement::SharedGpu);
  EXPECT_EQ(shared.link, ActivationLink::Nccl);
  const PipelineOptions page = parse_ok({"--placement=gpu-per-rank", "--link=host-page"});
  EXPECT_EQ(page.placement, hangbench::workload::Placement::GpuPerRank);
  EXPECT_EQ(page.link, ActivationLink::HostPage);
  EXPECT_NE(parse_error({"--placement=one-gpu"}).find("--placement=one-gpu"), std::string::npos);
  EXPECT_NE(parse_error({"--link=mpi"}).find("--link=mpi"), std::string::npos);
  for (auto l : {ActivationLink::Nccl, ActivationLink::HostPage})
    EXPECT_EQ(activation_link_from_string(to_string(l)), l);
}

TEST(PpOptions, BadInputNamesTheArgument) {
  EXPECT_NE(parse_error({"--progress=threads"}).find("--progress=threads"), std::string::npos);
  EXPECT_NE(parse_error({"--steps=0"}).find("--steps=0"), std::string::npos);
  EXPECT_NE(parse_error({"--steps=3x"}), "");
  EXPECT_NE(parse_error({"--message-bytes=-5"}), "");
  EXPECT_NE(parse_error({"--watchdog-s=soon"}), "");
  EXPECT_NE(parse_error({"--single-gpu=yes"}), "");
  EXPECT_NE(parse_error({"--bogus"}).find("unknown argument"), std::string::npos);
}

TEST(PpOptions, ModuleLoadingFollowsCudaRules) {
  EXPECT_EQ(module_loading_from_env(nullptr), ModuleLoading::Lazy);
  EXPECT_EQ(module_loading_from_env("LAZY"), ModuleLoading::Lazy);
  EXPECT_EQ(module_loading_from_env("EAGER"), ModuleLoading::Eager);
  EXPECT_EQ(to_string(ModuleLoading::Eager), "EAGER");
}

TEST(PpOptions, AxisNamesRoundTrip) {
  for (auto p : {ProgressSource::None, ProgressSource::Pump, ProgressSource::Native}) {
    EXPECT_EQ(progress_source_from_string(to_string(p)), p);
  }
  for (auto c : {ColdCall::Launch, ColdCall::ModuleLoad}) EXPECT_EQ(cold_call_from_string(to_string(c)), c);
}

}  // namespace
}  // namespace pp
