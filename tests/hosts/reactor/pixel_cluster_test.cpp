// A shortened pixel cluster (PixelPong-v0 frames, as configs/atari.yaml) run in one process to
// its stop condition: the frames stay uint8 in replay and the learner trains on them.
#include <gtest/gtest.h>

#include <filesystem>

#include "hosts/reactor/single_process_cluster.hpp"
#include "nodes/replay/replay_server.hpp"
#include "tests/support/cluster_files.hpp"

namespace tagflow::hosts {
namespace {

constexpr std::size_t kFrameStack = 4 * 84 * 84;  // bytes of one PixelPong-v0 observation

std::string pixel_cluster_yaml(const std::string& checkpoint_dir) {
  return "cluster: pixel-test\n"
         "mode: reactor\n"
         "seed: 5\n"
         "hosts:\n"
         "  local: {address: 127.0.0.1}\n"
         "coordinator: {host: local, port: 7790}\n"
         "nodes:\n"
         "  sampler:\n"
         "    kind: sampler\n"
         "    host: local\n"
         "    data_port: 7791\n"
         "    params: {env: PixelPong-v0, num_envs: 2, policy: inference}\n"
         "  replay:\n"
         "    kind: replay\n"
         "    host: local\n"
         "    data_port: 7792\n"
         "    params: {capacity: 1000, min_size: 32, batch_size: 8, samples_per_insert: 2,\n"
         "             checkpoint_dir: " +
         checkpoint_dir +
         "}\n"
         "  learner:\n"
         "    kind: learner\n"
         "    host: local\n"
         "    data_port: 7793\n"
         "    params: {hidden: \"8\", publish_every: 5, eval_episodes: 1, eval_max_steps: 20}\n"
         "  inference:\n"
         "    kind: inference\n"
         "    host: local\n"
         "    data_port: 7794\n" +
         testing::kLocalClusterConnections + "stop: {env_steps: 200}\n";
}

TEST(PixelCluster, FramesStayBytesInReplayAndTheLearnerTrainsOnThem) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "tagflow_pixel_cluster_test";
  std::filesystem::remove_all(dir);
  const cluster::ClusterConfig config =
      cluster::parse_cluster_config(pixel_cluster_yaml(dir.string()), "pixel-test.yaml");
  const RunSummary summary = run_single_process_cluster(config, SingleProcessOptions{});
  EXPECT_EQ(summary.stop_reason, "env_steps");
  EXPECT_EQ(summary.env_steps, 200);
  EXPECT_GT(summary.updates, 0);  // (200 - 32) inserts × 2 credits / 8 rows per batch
  EXPECT_EQ(summary.weights_version, static_cast<std::uint64_t>(summary.updates));

  // The replay checkpointed at stop; what it held comes back as it was stored.
  nodes::ReplayConfig replay;
  replay.capacity = 1000;
  replay.min_size = 32;
  replay.checkpoint_dir = dir.string();
  replay.restore = true;
  const nodes::ReplayServer held(replay);
  EXPECT_EQ(held.observation_type(), nodes::ObservationType::kUInt8);
  EXPECT_EQ(held.size(), 200U);
  // Two frame stacks per item (observation, next observation) of one byte per pixel, plus
  // a few bytes of action and reward: as float32 they would take four times the frame bytes.
  const std::size_t frame_bytes = held.size() * 2 * kFrameStack;
  EXPECT_GE(held.stored_bytes(), frame_bytes);
  EXPECT_LT(held.stored_bytes(), frame_bytes + held.size() * 64);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tagflow::hosts
