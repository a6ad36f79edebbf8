#include "hosts/run_summary.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tagflow::hosts {
namespace {

TEST(RunSummary, TheJsonHasEveryDocumentedFieldAndTheDigestInHex) {
  RunSummary summary;
  summary.mode = "actor";
  summary.stop_reason = "env_steps";
  summary.env_steps = 1200;
  summary.digest = 0x0fa3044d8f08a101ULL;
  summary.digest_reproducible = false;
  summary.evaluations = {10.5, 20.0};
  summary.nodes.push_back({"sampler-0", "sampler", "env_steps", 1200, 600.0});
  const nlohmann::json json = nlohmann::json::parse(summary.to_json());
  for (const char* key :
       {"mode", "placement", "stop_reason", "mean_return", "env_steps", "seconds", "updates",
        "weights_version", "digest", "digest_reproducible", "evaluations", "nodes"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_EQ(json["digest"], "0fa3044d8f08a101");  // 16 digits, leading zeros kept
  EXPECT_EQ(json["digest_reproducible"], false);
  EXPECT_EQ(json["evaluations"].size(), 2U);
  EXPECT_EQ(json["nodes"]["sampler-0"]["kind"], "sampler");
  EXPECT_EQ(json["nodes"]["sampler-0"]["per_second"], 600.0);
  EXPECT_EQ(summary.digest_hex(), "0fa3044d8f08a101");
}

TEST(RunSummary, RestartsAreListedOnlyWhenThereWereAny) {
  RunSummary summary;
  EXPECT_FALSE(nlohmann::json::parse(summary.to_json()).contains("restarts"));
  summary.restarts.push_back({"learner", "killed by signal 9 (Killed)", 60000000, 0.4});
  summary.restarts.push_back({"coordinator", "exit code 1", std::nullopt, 2.5});
  summary.wall_seconds = 12.0;
  const nlohmann::json json = nlohmann::json::parse(summary.to_json());
  ASSERT_EQ(json["restarts"].size(), 2U);
  EXPECT_EQ(json["restarts"][0]["process"], "learner");
  EXPECT_EQ(json["restarts"][0]["how"], "killed by signal 9 (Killed)");
  EXPECT_EQ(json["restarts"][0]["resumed_from_ns"], 60000000);
  EXPECT_EQ(json["restarts"][0]["lost_seconds"], 0.4);
  EXPECT_TRUE(json["restarts"][1]["resumed_from_ns"].is_null());  // from the start
  EXPECT_EQ(json["wall_seconds"], 12.0);
}

}  // namespace
}  // namespace tagflow::hosts
