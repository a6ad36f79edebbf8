// The in-process cluster of a shortened configs/local.yaml: determinism across runs and worker
// counts, the run summary, and learning progress.
#include "hosts/reactor/single_process_cluster.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "nodes/node_params.hpp"
#include "tests/support/cluster_files.hpp"

namespace tagflow::hosts {
namespace {

// local.yaml stopping after `env_steps` env steps, learning from 200 items on.
cluster::ClusterConfig shortened(std::int64_t env_steps) {
  testing::LocalClusterOptions options;
  options.stop = "env_steps: " + std::to_string(env_steps);
  return cluster::parse_cluster_config(testing::local_cluster_yaml(options), "short-local.yaml");
}

SingleProcessOptions workers(unsigned n) {
  SingleProcessOptions options;
  options.workers = n;
  return options;
}

TEST(SingleProcessCluster, SameFileGivesTheSameDigestOnOneAndTwoWorkersAndAcrossRuns) {
  const cluster::ClusterConfig config = shortened(2400);
  const RunSummary first = run_single_process_cluster(config, workers(1));
  const RunSummary again = run_single_process_cluster(config, workers(1));
  const RunSummary two = run_single_process_cluster(config, workers(2));
  EXPECT_EQ(first.digest_hex(), again.digest_hex());
  EXPECT_EQ(first.digest_hex(), two.digest_hex());
  EXPECT_EQ(first.updates, two.updates);
  EXPECT_EQ(first.mean_return, two.mean_return);
  EXPECT_EQ(first.episode_returns, two.episode_returns);

  EXPECT_EQ(first.stop_reason, "env_steps");
  EXPECT_EQ(first.env_steps, 2400);  // 2 samplers × 8 envs × 150 rounds
  EXPECT_GT(first.updates, 0);
  EXPECT_EQ(first.weights_version, static_cast<std::uint64_t>(first.updates));
  ASSERT_EQ(first.nodes.size(), 5U);
  EXPECT_EQ(first.nodes[0].name, "sampler-0");
  EXPECT_EQ(first.nodes[0].count, 1200);
  EXPECT_EQ(first.nodes[2].name, "replay");
  EXPECT_EQ(first.nodes[2].count, 2400);
  EXPECT_EQ(first.nodes[4].name, "inference");
  EXPECT_EQ(first.nodes[4].count, 2400);
  const std::string json = first.to_json();
  for (const char* key : {"\"mode\": \"reactor\"", "\"mean_return\"", "\"env_steps\": 2400",
                          "\"seconds\"", "\"digest\"", "\"sampler-1\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
}

TEST(SingleProcessCluster, AnotherSeedGivesAnotherDigest) {
  cluster::ClusterConfig config = shortened(1600);
  const RunSummary a = run_single_process_cluster(config, workers(1));
  config.seed += 1;
  const RunSummary b = run_single_process_cluster(config, workers(1));
  EXPECT_NE(a.digest, b.digest);
}

TEST(SingleProcessCluster, ReturnImprovesOverTheFirstEpisodes) {
  const RunSummary run = run_single_process_cluster(shortened(16000), workers(2));
  ASSERT_EQ(run.episode_returns.size(), 2U);
  const std::vector<double>& returns = run.episode_returns[0];
  ASSERT_GT(returns.size(), 60U);
  const auto mean = [](auto begin, auto end) {
    return std::accumulate(begin, end, 0.0) / static_cast<double>(end - begin);
  };
  const double first = mean(returns.begin(), returns.begin() + 30);
  const double last = mean(returns.end() - 10, returns.end());
  EXPECT_GT(last, 2.0 * first) << "first 30 episodes " << first << ", last 10 " << last;
  EXPECT_GT(run.mean_return, 2.0 * first);
}

TEST(SingleProcessCluster, BadParamsAreNamedErrors) {
  testing::LocalClusterOptions options;
  options.params["inference"] = "max_batch: 0";
  const cluster::ClusterConfig bad_param =
      cluster::parse_cluster_config(testing::local_cluster_yaml(options), "bad.yaml");
  try {
    (void)run_single_process_cluster(bad_param, workers(1));
    FAIL() << "max_batch: 0 accepted";
  } catch (const nodes::ParamError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'inference': param 'max_batch'"), std::string::npos)
        << e.what();
  }
  // Shapes the link plan cannot pair (2 → 3) are refused when the file loads
  // (tests/nodes/cluster/link_plan_test.cpp).
}

}  // namespace
}  // namespace tagflow::hosts
