// Replay checkpoints through a whole cluster file (params checkpoint_dir, restore): the
// in-process cluster of a shortened configs/local.yaml checkpoints replay at stop, and a second
// run restores it.
#include <gtest/gtest.h>

#include <filesystem>

#include "hosts/reactor/single_process_cluster.hpp"
#include "nodes/replay/replay_server.hpp"
#include "tests/rl/learning/learning_test_util.hpp"
#include "tests/support/cluster_files.hpp"

namespace tagflow::nodes {
namespace {

using hosts::run_single_process_cluster;
using hosts::RunSummary;
using hosts::SingleProcessOptions;

using learning::testing::ScratchDir;

// local.yaml stopping after `env_steps`, learning from 200 items on, with replay params added.
cluster::ClusterConfig with_replay_params(std::int64_t env_steps, const std::string& extra) {
  testing::LocalClusterOptions options;
  options.stop = "env_steps: " + std::to_string(env_steps);
  options.params["replay"] = extra;
  return cluster::parse_cluster_config(testing::local_cluster_yaml(options),
                                       "checkpoint-local.yaml");
}

ReplayConfig local_replay(const std::string& dir) {
  ReplayConfig c;
  c.capacity = 50000;
  c.min_size = 200;
  c.batch_size = 64;
  c.checkpoint_dir = dir;
  return c;
}

TEST(ReplayCheckpointCluster, ReplayIsCheckpointedAtStopAndRestoredByTheNextRun) {
  const ScratchDir dir("replay_checkpoint_cluster");
  const std::string params = "checkpoint_dir: \"" + dir.path().string() + "\"";
  SingleProcessOptions options;
  const RunSummary first = run_single_process_cluster(with_replay_params(800, params), options);
  const std::string path = (dir.path() / "replay.ckpt").string();
  ASSERT_TRUE(std::filesystem::exists(path));
  ReplayServer saved(local_replay(dir.path().string()));
  saved.restore_from(path);
  EXPECT_EQ(saved.inserts(), 800U);  // every transition of the run, nothing after the stop

  // The second run starts from those 800 items: learning starts at once, and its checkpoint
  // holds both runs' transitions.
  const RunSummary second =
      run_single_process_cluster(with_replay_params(800, params + ", restore: true"), options);
  ReplayServer resumed(local_replay(dir.path().string()));
  resumed.restore_from(path);
  EXPECT_EQ(resumed.inserts(), 1600U);
  EXPECT_EQ(resumed.size(), 1600U);
  EXPECT_GT(second.updates, first.updates);
  EXPECT_NE(second.digest, first.digest);
}

TEST(ReplayCheckpointCluster, ACorruptCheckpointStopsTheStartWithAnErrorNamingIt) {
  const ScratchDir dir("replay_checkpoint_cluster_corrupt");
  std::ofstream(dir.file("replay.ckpt")) << "half a checkpoint";
  const std::string params = "checkpoint_dir: \"" + dir.path().string() + "\", restore: true";
  try {
    (void)run_single_process_cluster(with_replay_params(160, params), SingleProcessOptions{});
    FAIL() << "a corrupt checkpoint was accepted";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("replay.ckpt")), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tagflow::nodes
