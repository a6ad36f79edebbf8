#include "hosts/run_combine.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/fnv1a.hpp"

namespace tagflow::hosts {
namespace {

const char* const kCombinedCluster = R"(cluster: combine
seed: 3
hosts:
  local: {address: 127.0.0.1}
coordinator: {host: local, port: 7600}
nodes:
  sampler: {kind: sampler, replicas: 2, host: local, data_port: 7610}
  replay: {kind: replay, host: local, data_port: 7620}
  learner: {kind: learner, host: local, data_port: 7630}
connections:
  - {from: sampler.transitions, to: replay.transitions}
  - {from: replay.batches, to: learner.batches}
  - {from: learner.priorities, to: replay.priorities, after: 0}
  - {from: learner.weights, to: sampler.weights, after: 0}
stop: {env_steps: 1000}
)";

ReplicaResult replica_result(const std::string& name, const std::string& kind, std::int64_t count,
                             std::vector<ChannelResult> channels) {
  ReplicaResult r;
  r.name = name;
  r.kind = kind;
  r.count = count;
  r.channels = std::move(channels);
  return r;
}

class RunCombine : public ::testing::Test {
 protected:
  RunCombine() : config_(cluster::parse_cluster_config(kCombinedCluster, "combine.yaml")) {
    ProcessResult samplers;
    samplers.process = "samplers";
    samplers.seconds = 2.0;
    samplers.stop_reason = "env_steps";
    samplers.replicas = {replica_result("sampler-0", "sampler", 100, {{"transitions", 0, 5, 11}}),
                         replica_result("sampler-1", "sampler", 60, {{"transitions", 0, 3, 12}})};
    samplers.replicas[0].episode_returns = {10.0, 20.0};
    ProcessResult trainer;
    trainer.process = "trainer";
    trainer.seconds = 4.0;
    trainer.replicas = {
        replica_result("replay", "replay", 160, {{"batches", 0, 7, 13}}),
        replica_result("learner", "learner", 7,
                       {{"priorities", 0, 7, 14}, {"weights", 0, 2, 15}, {"weights", 1, 2, 16}})};
    ReplicaResult& learner = trainer.replicas[1];
    learner.updates = 7;
    learner.final_weights_hash = 99;
    learner.mean_return = 123.5;
    learner.evaluations = {50.0, 123.5};
    results_ = {samplers, trainer};
  }
  cluster::ClusterConfig config_;
  std::vector<ProcessResult> results_;
};

TEST_F(RunCombine, TheDigestFoldsEveryLinkInPlanOrderThenTheLearnersWeights) {
  const RunSummary summary = combine_results(config_, results_, "process");
  // Links in plan order: the samplers' transitions (connection 0), the batches (1), the
  // priorities (2), the weights to each sampler (3, two channels).
  std::uint64_t expected = kFnv1aOffset;
  for (const auto& [connection, hash] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {0, 11}, {0, 12}, {1, 13}, {2, 14}, {3, 15}, {3, 16}}) {
    expected = fnv1a64_u64(hash, fnv1a64_u64(connection, expected));
  }
  expected = fnv1a64_u64(99, expected);
  EXPECT_EQ(summary.digest, expected);
}

TEST_F(RunCombine, SumsEnvStepsAndTakesTheLearnersFiguresAndTheLongestProcess) {
  const RunSummary summary = combine_results(config_, results_, "process");
  EXPECT_EQ(summary.env_steps, 160);
  EXPECT_EQ(summary.updates, 7);
  EXPECT_DOUBLE_EQ(summary.mean_return, 123.5);
  EXPECT_DOUBLE_EQ(summary.seconds, 4.0);
  EXPECT_EQ(summary.placement, "process");
  ASSERT_EQ(summary.nodes.size(), 4U);
  EXPECT_EQ(summary.nodes[0].name, "sampler-0");
  EXPECT_DOUBLE_EQ(summary.nodes[0].per_second, 50.0);  // 100 steps in its process's 2 s
  EXPECT_EQ(summary.episode_returns.front(), (std::vector<double>{10.0, 20.0}));
}

TEST_F(RunCombine, TheSummarysNumericsMergeTheProcessesReports) {
  EXPECT_FALSE(combine_results(config_, results_, "process").numerics.has_value());
  results_[0].numerics = numerics::Report{"native", false, "CPU A", "cpu", "", "", ""};
  results_[1].numerics =
      numerics::Report{"native", false, "CPU B", "cpu", "/lib/libblas.so.3", "Zen", "avx2"};
  const RunSummary summary = combine_results(config_, results_, "process");
  ASSERT_TRUE(summary.numerics.has_value());
  EXPECT_EQ(summary.numerics->cpu, "CPU A / CPU B");
  EXPECT_EQ(summary.numerics->blas_core, "Zen");
  EXPECT_FALSE(summary.numerics->portable);
  EXPECT_EQ(summary.numerics_line(),
            "numerics: native: digest specific to CPU A / CPU B (OpenBLAS Zen, ATen avx2, libm "
            "for this CPU)");
  EXPECT_NE(summary.to_json().find("\"numerics\""), std::string::npos);
}

TEST_F(RunCombine, TheStopReasonIsTheTargetOnlyWhenTheLearnerReachedIt) {
  EXPECT_EQ(combine_results(config_, results_, "process").stop_reason, "env_steps");
  results_[1].stop_reason = "target_return";
  EXPECT_EQ(combine_results(config_, results_, "process").stop_reason, "env_steps");
  results_[1].replicas[1].target_reached = true;
  EXPECT_EQ(combine_results(config_, results_, "process").stop_reason, "target_return");
}

// The exit status follows target_reached: with an evaluator node the evaluator decides the target,
// and the learner's final evaluation (the summary's mean_return) may fall below it.
TEST_F(RunCombine, TheTargetIsReachedByTheLearnerAnEvaluatorOrTheFinalMeanReturn) {
  std::string text = kCombinedCluster;
  text.replace(text.find("stop: {env_steps: 1000}"), 23,
               "  - {from: learner.weights, to: evaluator.weights}\n"
               "stop: {env_steps: 1000, target_return: 200}");
  text.replace(text.find("connections:"), 12,
               "  evaluator: {kind: evaluator, host: local, data_port: 7640}\nconnections:");
  const cluster::ClusterConfig with_evaluator = cluster::parse_cluster_config(text, "e.yaml");
  results_[1].replicas[1].channels.push_back({"weights", 2, 2, 17});
  ProcessResult evaluator;
  evaluator.process = "evaluator";
  evaluator.replicas = {replica_result("evaluator", "evaluator", 3, {})};
  evaluator.replicas[0].evaluations = {300.0};
  results_.push_back(evaluator);
  EXPECT_FALSE(combine_results(with_evaluator, results_, "process").target_reached);
  results_[2].replicas[0].target_reached = true;  // 123.5 from the learner, 300 from it
  RunSummary summary = combine_results(with_evaluator, results_, "process");
  EXPECT_TRUE(summary.target_reached);
  EXPECT_EQ(summary.stop_reason, "target_return");
  // The evaluation that stopped the run, not the learner's final one (of the weights it stopped
  // with, which in processes can be past the cutoff): one figure in every placement.
  EXPECT_DOUBLE_EQ(summary.mean_return, 300.0);
  EXPECT_NE(summary.to_json().find("\"target_reached\": true"), std::string::npos);
  results_[2].replicas[0].target_reached = false;
  results_[1].replicas[1].mean_return = 250.0;  // an env_steps stop whose final evaluation did
  summary = combine_results(with_evaluator, results_, "process");
  EXPECT_TRUE(summary.target_reached);
  EXPECT_EQ(summary.stop_reason, "env_steps");
  EXPECT_FALSE(combine_results(config_, results_, "process").target_reached);  // no target
}

TEST_F(RunCombine, TheDigestIsNotReproducibleWhenTheWallClockOrArrivalOrderChoseIt) {
  RunSummary summary = combine_results(config_, results_, "process");
  EXPECT_TRUE(summary.digest_reproducible);
  EXPECT_EQ(summary.unreproducible, "");
  results_[0].stop_reason = "seconds";
  summary = combine_results(config_, results_, "process");
  EXPECT_FALSE(summary.digest_reproducible);
  EXPECT_EQ(summary.unreproducible, "stopped by stop.seconds");
  results_[1].replicas[0].outside_transitions = 5;
  EXPECT_EQ(combine_results(config_, results_, "process").unreproducible,
            "logged outside transitions");
  results_[0].mode = "actor";
  EXPECT_EQ(combine_results(config_, results_, "process").unreproducible, "actor mode");
}

TEST_F(RunCombine, TheGroupingOfReplicasDoesNotMatterButEveryHashDoes) {
  const std::uint64_t digest = combine_results(config_, results_, "process").digest;
  std::vector<ProcessResult> regrouped = results_;
  regrouped[0].replicas.push_back(regrouped[1].replicas[0]);
  regrouped[1].replicas.erase(regrouped[1].replicas.begin());
  EXPECT_EQ(combine_results(config_, regrouped, "process").digest, digest);
  std::vector<ProcessResult> other = results_;
  other[1].replicas[0].channels[0].hash ^= 1U;
  EXPECT_NE(combine_results(config_, other, "process").digest, digest);
  other = results_;
  other[1].replicas[1].final_weights_hash = 98;
  EXPECT_NE(combine_results(config_, other, "process").digest, digest);
}

TEST_F(RunCombine, AMissingReplicaOrChannelIsNamed) {
  std::vector<ProcessResult> partial = {results_[0]};
  try {
    (void)combine_results(config_, partial, "process");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("replay"), std::string::npos) << e.what();
  }
  results_[1].replicas[1].channels.pop_back();
  EXPECT_THROW((void)combine_results(config_, results_, "process"), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::hosts
