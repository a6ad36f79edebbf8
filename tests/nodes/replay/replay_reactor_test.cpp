// The replay reactor between a local-policy sampler and its consumers: batches on the rate
// limit's schedule, priorities applied at their tag, the checkpoint written at stop.
#include "nodes/replay/replay_reactor.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "monitoring/process_metrics.hpp"
#include "nodes/sampler/sampler_reactor.hpp"
#include "tests/support/kind_families.hpp"

namespace tagflow::nodes {
namespace {

namespace fs = std::filesystem;

// Collects the batches a replay sends and answers each list with priorities for its keys: one
// per key (key % 7 + 0.5), or the same for every key (`constant`).
class PriorityEcho : public reactors::Reactor {
 public:
  reactors::Input<Encoded<SampleBatchList>> batches{"batches", this};
  reactors::Output<Encoded<PriorityUpdateMessage>> priorities{"priorities", this};
  std::int64_t lists = 0;
  std::int64_t rows = 0;
  PriorityEcho(std::string name, reactors::Environment& env, bool constant)
      : reactors::Reactor(std::move(name), env) {
    reaction("echo").triggers(batches).effects(priorities).body([this, constant] {
      PriorityUpdateMessage update;
      for (const SampleBatchMessage& b : batches.get()->value()) {
        rows += static_cast<std::int64_t>(b.rows());
        for (std::uint64_t key : b.keys) {
          update.keys.push_back(key);
          update.priorities.push_back(constant ? 1.0F : static_cast<float>(key % 7) + 0.5F);
        }
      }
      ++lists;
      priorities.set(make_encoded(std::move(update)));
    });
  }
};

struct ReplayRun {
  std::int64_t inserts = 0, batches = 0, echoed_rows = 0;
  std::uint64_t batches_hash = 0;
};

ReplayRun run_replay(unsigned workers, const std::string& checkpoint_dir,
                     bool constant_priorities = false) {
  reactors::EnvironmentConfig config;
  config.workers = workers;
  config.start_time_ns = 0;
  reactors::Environment env(config);
  ReplayConfig rc;
  rc.prioritized = true;
  rc.min_size = 50;
  rc.batch_size = 8;
  rc.samples_per_insert = 1.0;
  rc.max_batches_per_call = 10;
  rc.checkpoint_dir = checkpoint_dir;
  auto& replay = env.add<ReplayReactor>("replay-0", rc, ReplayPortWidths{1, 1, 1});
  SamplerConfig sc;
  sc.num_envs = 4;
  sc.local_policy = true;
  sc.seed = 3;
  auto& sampler = env.add<SamplerReactor>("sampler", sc, SamplerPortWidths{0, 0, 1, 0},
                                          std::chrono::milliseconds(1));
  sampler.set_step_limit(200);
  auto& echo = env.add<PriorityEcho>("learner", constant_priorities);
  env.connect(sampler.transitions[0], replay.transitions[0]);
  env.connect(replay.batches[0], echo.batches);
  env.connect(echo.priorities, replay.priorities[0], reactors::Duration::zero());
  env.run();
  return {replay.inserts.load(), replay.batches_sent.load(), echo.rows,
          replay.batches_digest().hash(0)};
}

TEST(ReplayReactor, SendsWhatTheRateLimitAllowsAndTakesPrioritiesBack) {
  const ReplayRun run = run_replay(1, "");
  EXPECT_EQ(run.inserts, 200);
  // Credits from the 50th insert on: (200 - 49) × 1 / 8 = 18 batches of 8 rows.
  EXPECT_EQ(run.batches, 18);
  EXPECT_EQ(run.echoed_rows, 18 * 8);
  // The priorities reached the sampling: the same run answered with one priority for every key
  // samples other batches.
  EXPECT_NE(run.batches_hash, run_replay(1, "", /*constant_priorities=*/true).batches_hash);
}

TEST(ReplayReactor, PrioritizedSamplingDoesNotDependOnWorkers) {
  EXPECT_EQ(run_replay(1, "").batches_hash, run_replay(2, "").batches_hash);
}

TEST(ReplayReactor, WritesItsCheckpointAtStop) {
  const fs::path dir = fs::path(::testing::TempDir()) / "replay_reactor_checkpoint";
  fs::remove_all(dir);
  (void)run_replay(1, dir.string());
  ReplayConfig restore;
  restore.prioritized = true;
  restore.min_size = 50;
  restore.checkpoint_dir = dir.string();
  restore.restore = true;
  EXPECT_EQ(ReplayServer(restore, "replay-0").inserts(), 200U);
  fs::remove_all(dir);
}

// Sends one TransitionsMessage per tick: observation widths 4, 5 (from a peer whose env differs),
// then 4 again.
class MixedWidths : public reactors::Reactor {
 public:
  reactors::Timer tick{"tick", this, std::chrono::milliseconds(0), std::chrono::milliseconds(1)};
  reactors::Output<Encoded<TransitionsMessage>> transitions{"transitions", this};
  MixedWidths(std::string name, reactors::Environment& env)
      : reactors::Reactor(std::move(name), env) {
    reaction("send").triggers(tick).effects(transitions).body([this] {
      const std::size_t width = sent_ == 1 ? 5 : 4;
      TransitionsMessage t;
      t.observation_size = static_cast<std::uint32_t>(width);
      t.observations.assign(width * 2, 0.5F);
      t.next_observations.assign(width * 2, 0.25F);
      t.actions = {0, 1};
      t.rewards = {1.0F, 1.0F};
      t.terminated = {0, 0};
      transitions.set(make_encoded(std::move(t)));
      if (++sent_ == 3) request_stop();
    });
  }

 private:
  int sent_ = 0;
};

// A value whose observation width differs from the table's used to throw out of the reaction
// and end the process (std::terminate). It is dropped and counted; the run goes on.
TEST(ReplayReactor, AValueThatDoesNotFitTheTableIsDroppedAndCountedAndTheRunGoesOn) {
  reactors::EnvironmentConfig config;
  config.workers = 1;
  config.start_time_ns = 0;
  reactors::Environment env(config);
  ReplayConfig rc;
  rc.min_size = 1000;
  monitoring::ProcessMetrics process({"replay-0", "replay", "reactor"},
                                     tagflow::test::families("replay"));
  NodeMetrics metrics(process);
  auto& replay = env.add<ReplayReactor>("replay-0", rc, ReplayPortWidths{1, 0, 0});
  replay.set_metrics(&metrics);
  auto& source = env.add<MixedWidths>("sampler");
  env.connect(source.transitions, replay.transitions[0]);
  env.run();
  EXPECT_EQ(replay.inserts, 4);  // two rows from each of the values of width 4
  EXPECT_EQ(replay.rejected_inputs, 1);
  EXPECT_NE(process.text().find("tagflow_transport_invalid_messages_total{kind=\"replay\",mode="
                                "\"reactor\",node=\"replay-0\",peer=\"transitions\",reason="
                                "\"rejected_by_node\"} 1"),
            std::string::npos)
      << process.text();
}

}  // namespace
}  // namespace tagflow::nodes
