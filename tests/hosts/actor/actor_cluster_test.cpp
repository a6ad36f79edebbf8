// The in-process actor cluster (hosts/actor/actor_cluster.hpp) on a shortened configs/local.yaml:
// the same node logic as reactor mode, wired by the link plan, runs to its stop condition.
#include "hosts/actor/actor_cluster.hpp"

#include <gtest/gtest.h>

#include "tests/support/cluster_files.hpp"

namespace tagflow::hosts {
namespace {

cluster::ClusterConfig shortened_actor_file(std::int64_t env_steps) {
  testing::LocalClusterOptions options;
  options.mode = "actor";
  options.stop = "env_steps: " + std::to_string(env_steps);
  return cluster::parse_cluster_config(testing::local_cluster_yaml(options), "short-local.yaml");
}

TEST(ActorCluster, ShortenedLocalClusterRunsToItsEnvStepsStopInActorMode) {
  const cluster::ClusterConfig config = shortened_actor_file(3000);
  ActorClusterOptions options;
  options.worker_threads = 2;
  const hosts::RunSummary summary = run_actor_cluster(config, options);
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

}  // namespace
}  // namespace tagflow::hosts
