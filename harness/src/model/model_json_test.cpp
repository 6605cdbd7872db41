// The model's JSON forms, read back as the store reads them.
#include <gtest/gtest.h>

#include "hangbench/model.hpp"

namespace hangbench {
namespace {

TEST(ModelJson, ProvenanceReadsEveryFieldAndKeepsDefaultsForMissingOnes) {
  Provenance p;
  p.hangbench_version = "0.9";
  p.argv = {"hangbench", "run"};
  p.host = "h";
  p.library_hashes = {{"/lib/libnccl.so.2", "ab"}};
  p.environment = {{"NCCL_DEBUG", "INFO"}};
  p.trial_isolation = "pid-namespace";
  p.shard_commands = {"hangbench run --shard 0/2"};
  const nlohmann::json j = p;
  EXPECT_EQ(nlohmann::json(j.get<Provenance>()), j);
  nlohmann::json partial = {{"host", "h"}, {"gpu", nullptr}};
  const Provenance read = partial.get<Provenance>();
  EXPECT_EQ(read.host, "h");
  EXPECT_EQ(read.gpu, "");
  EXPECT_TRUE(read.trial_isolation.empty());
}

}  // namespace
}  // namespace hangbench
