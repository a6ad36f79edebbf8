// The evaluator kind as a cluster file declares it: its descriptor in the registry, its replica
// configuration, and the file errors it gives.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "nodes/cluster/cluster_config.hpp"
#include "nodes/kind/actor_registry.hpp"
#include "nodes/kind/registry.hpp"
#include "nodes/kind/replica_config.hpp"
#include "nodes/node_params.hpp"

namespace tagflow::nodes {
namespace {

std::string evaluator_file() {
  std::ifstream in(std::string(TAGFLOW_SOURCE_DIR) + "/configs/local-evaluator.yaml");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(EvaluatorKind, IsInTheRegistryWithItsPortsUnitAndRoles) {
  const NodeKind* kind = find_node_kind("evaluator");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(port_names(kind->inputs), std::vector<std::string>{"weights"});
  EXPECT_TRUE(kind->outputs.empty());
  EXPECT_EQ(kind->count_unit, "evaluations");
  EXPECT_EQ(kind->own_stop_reason, "target_return");
  EXPECT_TRUE(kind->publishes_evaluations);
  EXPECT_FALSE(kind->transient || kind->trains || kind->steps_env || kind->needs_torch);
  EXPECT_NE(kind->reactor, nullptr);
  // Its CAF factory comes with the actor bindings, installed before the first actor is spawned.
  install_actor_kinds();
  EXPECT_NE(kind->actor, nullptr);
  EXPECT_NE(node_kind_names().find("evaluator"), std::string::npos);
}

TEST(EvaluatorKind, ItsReplicaPlaysTheFilesEnvOnItsOwnSeedsAndTheLearnerNoLongerStopsToEvaluate) {
  const cluster::ClusterConfig config = cluster::parse_cluster_config(evaluator_file(), "e.yaml");
  const ClusterFacts facts = ClusterFacts::of(config);
  const ReplicaConfig evaluator = replica_config(config, facts, "evaluator");
  EXPECT_EQ(evaluator.kind->name, "evaluator");
  ASSERT_TRUE(evaluator.evaluation.has_value());
  EXPECT_EQ(evaluator.evaluation->env_id, "CartPole-v1");
  EXPECT_EQ(evaluator.evaluation->hidden, (std::vector<int>{64, 64}));
  EXPECT_EQ(evaluator.evaluation->episodes, 20);
  EXPECT_EQ(evaluator.evaluation->seed, evaluator.seed);
  EXPECT_EQ(evaluator.seed, replica_seed(config, *evaluator.group, 0));
  EXPECT_EQ(evaluator.target_return, 475.0);
  const ReplicaConfig learner = replica_config(config, facts, "learner");
  EXPECT_FALSE(learner.target_return.has_value());
  ASSERT_TRUE(learner.evaluation.has_value());  // its final weights are still evaluated once
}

TEST(EvaluatorKind, BadParamsPortsAndCheckpointsAreFileErrors) {
  const std::string file = evaluator_file();
  {
    const cluster::ClusterConfig config = cluster::parse_cluster_config(
        replaced(file, "{episodes: 20, every: 1280}", "{episodes: 20, evry: 1280}"), "e.yaml");
    EXPECT_THROW((void)replica_config(config, ClusterFacts::of(config), "evaluator"), ParamError);
  }
  {
    const cluster::ClusterConfig config = cluster::parse_cluster_config(
        replaced(file, "{episodes: 20, every: 1280}", "{env: Acrobot-v1}"), "e.yaml");
    try {
      (void)replica_config(config, ClusterFacts::of(config), "evaluator");
      FAIL() << "an env the learner's network does not fit";
    } catch (const ParamError& e) {
      EXPECT_NE(std::string(e.what()).find("CartPole-v1"), std::string::npos) << e.what();
    }
  }
  try {
    (void)cluster::parse_cluster_config(
        replaced(file, "to: evaluator.weights}", "to: evaluator.batches}"), "e.yaml");
    FAIL() << "a port the evaluator does not have";
  } catch (const cluster::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("evaluator 'evaluator' has no input port 'batches' "
                                         "(inputs: weights)"),
              std::string::npos)
        << e.what();
  }
  try {
    (void)cluster::parse_cluster_config(
        replaced(file, "from: learner.weights, to: evaluator.weights",
                 "from: evaluator.weights, to: learner.batches"),
        "e.yaml");
    FAIL() << "the evaluator has no outputs";
  } catch (const cluster::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("evaluator 'evaluator' has no output port 'weights' "
                                         "(it has no outputs)"),
              std::string::npos)
        << e.what();
  }
  try {
    (void)cluster::parse_cluster_config(
        replaced(file, "  - {from: learner.weights, to: evaluator.weights}\n", ""), "e.yaml");
    FAIL() << "an evaluator sent no weights";
  } catch (const cluster::ConfigError& e) {
    EXPECT_EQ(e.key(), "nodes.evaluator");
    EXPECT_NE(std::string(e.what()).find("evaluator 'evaluator' evaluates what comes to "
                                         "evaluator.weights, and no connection goes there: "
                                         "connect learner.weights to it"),
              std::string::npos)
        << e.what();
  }
  try {
    (void)cluster::parse_cluster_config(file + "checkpoint: {every: 200ms}\n", "e.yaml");
    FAIL() << "an evaluator refuses checkpoints";
  } catch (const cluster::ConfigError& e) {
    EXPECT_EQ(e.key(), "checkpoint");
    EXPECT_NE(std::string(e.what()).find("(evaluator) cannot be checkpointed"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tagflow::nodes
