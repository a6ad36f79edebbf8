// The replay actor driven by a scoped actor in the sampler's role: the credit protocol, the size
// checks every received message passes, and the checkpoint it writes at stop to its own file.
#include "nodes/replay/replay_actor.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "actors/actor_system_setup.hpp"

namespace tagflow::nodes {
namespace {

namespace fs = std::filesystem;

TransitionsMessage transitions(std::size_t rows) {
  TransitionsMessage t;
  t.observation_size = 4;
  for (std::size_t i = 0; i < rows; ++i) {
    for (int k = 0; k < 4; ++k) {
      t.observations.push_back(static_cast<float>(i + k));
      t.next_observations.push_back(static_cast<float>(i + k + 1));
    }
    t.actions.push_back(static_cast<std::int64_t>(i % 2));
    t.rewards.push_back(1.0F);
    t.terminated.push_back(0);
  }
  return t;
}

TEST(ReplayActor, InsertsWhatPassesTheChecksAndCheckpointsToItsOwnFileAtStop) {
  const fs::path dir = fs::path(::testing::TempDir()) / "replay_actor_checkpoints";
  fs::remove_all(dir);
  ReplayConfig config;
  config.min_size = 1000;  // nothing is sampled: only inserts and the checkpoint matter
  config.checkpoint_dir = dir.string();
  auto system_config = actors::make_actor_system_config({false, 2});
  add_node_message_types(*system_config);
  caf::actor_system system(*system_config);
  auto report = std::make_shared<ReplicaReport>("replay-1", "replay");
  auto replay = spawn_replay_actor(system, config, {"replay-1", 0, report});
  {
    caf::scoped_actor sampler{system};
    const auto expect_credit = [&](const std::string& port) {
      sampler->receive([&](const actors::Credit& c) { EXPECT_EQ(c.port, port); },
                       caf::after(std::chrono::seconds(10)) >> [] { FAIL() << "no credit"; });
    };
    sampler->send(replay, actors::Offer{"transitions", "sampler-0"});
    expect_credit("transitions");
    for (int i = 0; i < 3; ++i) {
      sampler->send(replay, transitions(5));
      expect_credit("transitions");
    }
    // Pixel rows whose frames do not match their count: dropped, counted, not inserted.
    TransitionsMessage bad = transitions(2);
    bad.observation_type = ObservationType::kUInt8;
    bad.observations_u8.assign(3, 0);
    sampler->send(replay, bad);
    sampler->send(replay, actors::StopRun{""});
  }
  system.await_all_actors_done();
  EXPECT_EQ(report->count.load(), 15);
  const fs::path file = dir / "replay-1.ckpt";
  ASSERT_TRUE(fs::exists(file)) << "no checkpoint at stop";
  ReplayConfig restore = config;
  restore.restore = true;
  const ReplayServer restored(restore, "replay-1");
  EXPECT_EQ(restored.inserts(), 15U);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tagflow::nodes
