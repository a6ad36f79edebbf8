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
  for (const char* key : {"mode", "placement", "stop_reason", "mean_return", "env_steps", "seconds",
                          "updates", "weights_version", "digest", "digest_reproducible",
                          "target_reached", "evaluations", "nodes"}) {
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

namespace tagflow::hosts {
namespace {

/// The result of a process `junction` holding one multi_agent replica with `figures`.
ProcessResult junction_result(const std::optional<MultiAgentFigures>& figures) {
  ProcessResult result;
  result.process = "junction";
  ReplicaResult replica;
  replica.name = "junction";
  replica.kind = "multi_agent";
  replica.multi_agent = figures;
  result.replicas.push_back(replica);
  return result;
}

TEST(RunSummary, DetailLinesGiveTheMultiAgentSuccessRatesAndTheKernels) {
  RunSummary summary;
  EXPECT_TRUE(summary.detail_lines().empty());
  summary.multi_agent = MultiAgentFigures{-1.5, 0.25, -9.0, 2.5, 20, 0.8, 0.1};
  summary.numerics = numerics::Report{"portable", true, "CPU", "plain", "b", "Haswell", "avx2"};
  const std::vector<std::string> lines = summary.detail_lines();
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[0],
            "multi_agent: greedy mean return -1.50, success rate 0.80, 0.25 collisions per "
            "episode; random play -9.00, 0.10, 2.50 (20 episodes)");
  EXPECT_EQ(lines[1], "numerics: portable (x86-64-v3: OpenBLAS Haswell, ATen avx2, plain libm)");
  const std::string json = summary.to_json();
  EXPECT_NE(json.find("\"success_rate\": 0.8"), std::string::npos) << json;
  EXPECT_NE(json.find("\"random_success_rate\": 0.1"), std::string::npos) << json;
  EXPECT_NE(json.find("\"epsilon\": 0.0"), std::string::npos) << json;
}

// An evaluation with the node's eval_epsilon is named by its ε, not called greedy, and the ε
// survives a process result's JSON (the launcher reads the nodes' results back).
TEST(RunSummary, AnEvaluationWithEvalEpsilonIsNamedByItsEpsilon) {
  RunSummary summary;
  summary.multi_agent = MultiAgentFigures{-30.0, 0.5, -45.0, 3.0, 20, 0.7, 0.2, 0.05};
  ASSERT_EQ(summary.detail_lines().size(), 1U);
  EXPECT_EQ(summary.detail_lines()[0],
            "multi_agent: epsilon 0.05 mean return -30.00, success rate 0.70, 0.50 collisions "
            "per episode; random play -45.00, 0.20, 3.00 (20 episodes)");
  const ProcessResult result = junction_result(summary.multi_agent);
  const ProcessResult back = ProcessResult::from_json(result.to_json());
  ASSERT_TRUE(back.replicas.at(0).multi_agent.has_value());
  EXPECT_DOUBLE_EQ(back.replicas.at(0).multi_agent->epsilon, 0.05);
  EXPECT_DOUBLE_EQ(back.replicas.at(0).multi_agent->success_rate, 0.7);
}

// A run stopped before its step limit (stop.seconds) played no final evaluation: its figures are
// of the last one before the stop, and a second line says so; the result's JSON keeps both keys,
// and a result without them (an older version's) reads as a final evaluation.
TEST(RunSummary, FiguresOfAnEvaluationBeforeTheStopAreSaidToBe) {
  RunSummary summary;
  summary.multi_agent = MultiAgentFigures{-30.0, 0.5, -45.0, 3.0, 20, 0.7, 0.2, 0.0, 20000, false};
  const std::vector<std::string> lines = summary.detail_lines();
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[1],
            "multi_agent: the run stopped before its final evaluation: these are of the "
            "evaluation at 20000 joint steps");
  const ProcessResult result = junction_result(summary.multi_agent);
  const std::string json = result.to_json();
  const ProcessResult back = ProcessResult::from_json(json);
  ASSERT_TRUE(back.replicas.at(0).multi_agent.has_value());
  EXPECT_EQ(back.replicas.at(0).multi_agent->evaluated_at, 20000);
  EXPECT_FALSE(back.replicas.at(0).multi_agent->final_evaluation);
  nlohmann::json older = nlohmann::json::parse(json);
  nlohmann::json& figures = older["replicas"][0]["multi_agent"];
  ASSERT_EQ(figures.erase("evaluated_at"), 1U) << json;
  ASSERT_EQ(figures.erase("final_evaluation"), 1U) << json;
  EXPECT_TRUE(ProcessResult::from_json(older.dump()).replicas.at(0).multi_agent->final_evaluation);
}

}  // namespace
}  // namespace tagflow::hosts
