// The evaluator kind in a running cluster: a shortened configs/local.yaml with an evaluator on the
// learner's weights, in one process in reactor mode (the same evaluations for any worker count)
// and in actor mode, each run's evaluations in its summary.
#include <gtest/gtest.h>
#include <algorithm>

#include <string>

#include "hosts/actor/actor_cluster.hpp"
#include "hosts/reactor/single_process_cluster.hpp"
#include "tests/support/cluster_files.hpp"

namespace tagflow::hosts {
namespace {

std::string with_evaluator(const std::string& mode, const std::string& stop) {
  testing::LocalClusterOptions options;
  options.mode = mode;
  options.stop = stop;
  std::string text = testing::local_cluster_yaml(options);
  const std::string nodes_end = "\n# Each loop carries";
  const auto at = text.find(nodes_end);
  EXPECT_NE(at, std::string::npos);
  text.insert(at,
              "  evaluator:\n    kind: evaluator\n    host: local\n    data_port: 7650\n"
              "    params: {episodes: 3, every: 40}\n");
  const std::string last = "  - {from: learner.weights, to: inference.weights, after: 4ms}\n";
  const auto link = text.find(last);
  EXPECT_NE(link, std::string::npos);
  text.insert(link + last.size(), "  - {from: learner.weights, to: evaluator.weights}\n");
  return text;
}

const EvaluatorFigures* evaluator_of(const RunSummary& summary) {
  for (const EvaluatorFigures& e : summary.evaluators) {
    if (e.name == "evaluator") return &e;
  }
  return nullptr;
}

TEST(EvaluatorCluster, ReactorModeEvaluatesOnItsScheduleAndTheSameOnAnyWorkerCount) {
  const cluster::ClusterConfig config =
      cluster::parse_cluster_config(with_evaluator("reactor", "env_steps: 2400"), "e.yaml");
  SingleProcessOptions one, two;
  one.workers = 1;
  two.workers = 2;
  const RunSummary a = run_single_process_cluster(config, one);
  const RunSummary b = run_single_process_cluster(config, two);
  const EvaluatorFigures* ea = evaluator_of(a);
  const EvaluatorFigures* eb = evaluator_of(b);
  ASSERT_NE(ea, nullptr);
  ASSERT_NE(eb, nullptr);
  // One evaluation per 40 weights versions the learner published.
  EXPECT_GE(ea->evaluations.size(), 2U) << a.to_json();
  EXPECT_LE(ea->evaluations.size(), static_cast<std::size_t>(a.weights_version / 40) + 1);
  EXPECT_EQ(ea->evaluations, eb->evaluations);
  EXPECT_EQ(a.digest_hex(), b.digest_hex());
  EXPECT_NE(a.to_json().find("\"evaluators\""), std::string::npos);
  const auto evaluator = std::find_if(a.nodes.begin(), a.nodes.end(), [](const NodeThroughput& n) {
    return n.name == "evaluator";
  });
  ASSERT_NE(evaluator, a.nodes.end()) << a.to_json();
  EXPECT_EQ(evaluator->unit, "evaluations");
}

TEST(EvaluatorCluster, ReachingTheTargetStopsTheRunInReactorMode) {
  // A target every greedy CartPole policy reaches: the first evaluation ends the run.
  const cluster::ClusterConfig config = cluster::parse_cluster_config(
      with_evaluator("reactor", "target_return: 1\n  env_steps: 100000"), "e.yaml");
  const RunSummary summary = run_single_process_cluster(config, {});
  const EvaluatorFigures* e = evaluator_of(summary);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->evaluations.size(), 1U);
  EXPECT_TRUE(e->target_reached);
  EXPECT_EQ(summary.stop_reason, "target_return");
  EXPECT_LT(summary.env_steps, 100000);
}

TEST(EvaluatorCluster, ActorModeEvaluatesTheWeightsItIsSent) {
  const cluster::ClusterConfig config =
      cluster::parse_cluster_config(with_evaluator("actor", "env_steps: 4000"), "e.yaml");
  const RunSummary summary = run_actor_cluster(config, {});
  const EvaluatorFigures* e = evaluator_of(summary);
  ASSERT_NE(e, nullptr);
  EXPECT_GE(e->evaluations.size(), 1U) << summary.to_json();
  for (const double mean : e->evaluations) EXPECT_GT(mean, 0.0);
}

}  // namespace
}  // namespace tagflow::hosts
