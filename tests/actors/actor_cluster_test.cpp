// The in-process actor cluster (actors/actor_cluster.hpp) on a shortened configs/local.yaml: the
// same node logic as reactor mode, wired by the link plan, runs to its stop condition.
#include "actors/actor_cluster.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "actors/torch_replica_spawner.hpp"

namespace tagflow::actors {
namespace {

std::string local_yaml() {
  std::ifstream in(std::string(TAGFLOW_SOURCE_DIR) + "/configs/local.yaml");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void replace(std::string& text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << "configs/local.yaml no longer contains: " << from;
  text.replace(at, from.size(), to);
}

cluster::ClusterConfig shortened(std::int64_t env_steps) {
  std::string text = local_yaml();
  replace(text, "mode: reactor", "mode: actor");
  replace(text, "target_return: 475", "env_steps: " + std::to_string(env_steps));
  replace(text, "min_size: 1000", "min_size: 200");
  return cluster::parse_cluster_config(text, "short-local.yaml");
}

TEST(ActorCluster, ShortenedLocalClusterRunsToItsEnvStepsStopInActorMode) {
  const cluster::ClusterConfig config = shortened(3000);
  ActorClusterOptions options;
  options.worker_threads = 2;
  options.torch = torch_replica_spawner();
  const nodes::RunSummary summary = run_actor_cluster(config, options);
  EXPECT_EQ(summary.mode, "actor");
  EXPECT_EQ(summary.placement, "single");
  EXPECT_EQ(summary.stop_reason, "env_steps");
  // Each sampler stops at its share (1500); the other may stop a round or a few short of it.
  EXPECT_GE(summary.env_steps, 1500);
  EXPECT_LE(summary.env_steps, 3000 + 2 * 8);
  EXPECT_GT(summary.updates, 0) << "replay sent no minibatch to the learner";
  ASSERT_EQ(summary.nodes.size(), 5U);
  for (const auto& node : summary.nodes) EXPECT_GT(node.count, 0) << node.name << " did nothing";
  std::size_t episodes = 0;
  for (const auto& returns : summary.episode_returns) episodes += returns.size();
  EXPECT_GT(episodes, 10U);
}

TEST(ActorCluster, LearnerWithoutTheTorchSpawnerIsANamedError) {
  const cluster::ClusterConfig config = shortened(100);
  ActorClusterOptions options;  // no torch spawner
  try {
    (void)run_actor_cluster(config, options);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs LibTorch"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tagflow::actors
