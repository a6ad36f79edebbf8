// Replay node checkpoints: ReplayServer::checkpoint()/restore (nodes/replay/replay_server.hpp)
// and the checkpoint the reactor binding writes at stop.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "nodes/replay/replay_reactor.hpp"
#include "nodes/replay/replay_server.hpp"
#include "nodes/sampler/sampler_reactor.hpp"

namespace tagflow::nodes {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed at the end of the test.
class Scratch {
 public:
  Scratch() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("tagflow_replay_ckpt_" + std::string(test->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  [[nodiscard]] std::string dir() const { return path_.string(); }

 private:
  fs::path path_;
};

// `rows` transitions whose observation, action and reward all encode their index.
TransitionsMessage numbered_rows(int first, int rows) {
  TransitionsMessage t;
  t.observation_size = 3;
  for (int i = first; i < first + rows; ++i) {
    for (int k = 0; k < 3; ++k) t.observations.push_back(static_cast<float>(i * 3 + k));
    t.actions.push_back(i % 5);
    t.rewards.push_back(0.5F * static_cast<float>(i));
    t.terminated.push_back(static_cast<std::uint8_t>(i % 7 == 0));
    for (int k = 0; k < 3; ++k) t.next_observations.push_back(static_cast<float>(i * 3 + k + 1));
  }
  return t;
}

ReplayConfig prioritized(const std::string& dir) {
  ReplayConfig c;
  c.capacity = 64;  // small: the feed below evicts, so keys do not start at 0
  c.prioritized = true;
  c.priority_exponent = 0.7;
  c.importance_beta = 0.5;
  c.min_size = 16;
  c.batch_size = 8;
  c.samples_per_insert = 1.3;  // credits are not whole batches: the owed rest must survive
  c.max_batches_per_call = 3;
  c.seed = 42;
  c.checkpoint_dir = dir;
  return c;
}

// Inserts, samples and updates priorities in a fixed pattern.
void feed(ReplayServer& server, int first, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    server.insert(numbered_rows(first + r * 10, 10));
    for (const SampleBatchMessage& batch : server.due_batches()) {
      PriorityUpdateMessage update;
      update.keys = batch.keys;
      for (std::size_t i = 0; i < batch.rows(); ++i) {
        update.priorities.push_back(0.1F + static_cast<float>((batch.keys[i] * 7) % 13));
      }
      server.update(update);
    }
  }
}

void expect_same_batches(const std::vector<SampleBatchMessage>& a,
                         const std::vector<SampleBatchMessage>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].keys, b[i].keys);
    EXPECT_EQ(a[i].observations, b[i].observations);
    EXPECT_EQ(a[i].next_observations, b[i].next_observations);
    EXPECT_EQ(a[i].actions, b[i].actions);
    EXPECT_EQ(a[i].rewards, b[i].rewards);
    EXPECT_EQ(a[i].terminated, b[i].terminated);
    EXPECT_EQ(a[i].importance_weights, b[i].importance_weights);
  }
}

TEST(ReplayCheckpoint, RestoredServerHoldsTheSameItemsAndSamplesTheSameBatches) {
  const Scratch scratch;
  ReplayServer original(prioritized(scratch.dir()), "replay-0");
  feed(original, 0, 12);  // 120 inserts into 64 slots
  const std::optional<std::string> path = original.checkpoint();
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(*path, (fs::path(scratch.dir()) / "replay-0.ckpt").string());

  ReplayConfig config = prioritized(scratch.dir());
  config.restore = true;
  ReplayServer restored(config, "replay-0");
  EXPECT_EQ(restored.size(), original.size());
  EXPECT_EQ(restored.inserts(), 120U);
  EXPECT_EQ(restored.batches_sampled(), original.batches_sampled());
  EXPECT_EQ(restored.credits(), original.credits());
  EXPECT_GT(restored.credits(), 0.0);

  // The same future: identical batches now, and after identical inserts and updates.
  expect_same_batches(restored.due_batches(), original.due_batches());
  for (int round = 0; round < 6; ++round) {
    original.insert(numbered_rows(1000 + round * 9, 9));
    restored.insert(numbered_rows(1000 + round * 9, 9));
    const auto from_original = original.due_batches();
    const auto from_restored = restored.due_batches();
    expect_same_batches(from_restored, from_original);
    for (const auto& b : from_original) {
      PriorityUpdateMessage update{b.keys, std::vector<float>(b.rows(), 2.5F)};
      original.update(update);
      restored.update(update);
    }
  }
}

TEST(ReplayCheckpoint, WithoutRestoreTheServerStartsEmptyEvenWhenACheckpointExists) {
  const Scratch scratch;
  ReplayServer original(prioritized(scratch.dir()));
  feed(original, 0, 5);
  ASSERT_TRUE(original.checkpoint().has_value());
  ReplayConfig config = prioritized(scratch.dir());
  config.restore = true;
  ReplayServer restored(config);
  ReplayServer fresh(prioritized(scratch.dir()));  // restore: false
  EXPECT_EQ(fresh.size(), 0U);
  EXPECT_EQ(fresh.inserts(), 0U);
  EXPECT_EQ(restored.size(), original.size());
  fresh.insert(numbered_rows(0, 50));
  restored.insert(numbered_rows(0, 50));
  original.insert(numbered_rows(0, 50));
  EXPECT_EQ(fresh.inserts(), 50U);
  EXPECT_EQ(restored.inserts(), 100U);
  const auto from_fresh = fresh.due_batches();
  const auto from_restored = restored.due_batches();
  expect_same_batches(from_restored, original.due_batches());
  ASSERT_FALSE(from_fresh.empty());
  ASSERT_FALSE(from_restored.empty());
  EXPECT_NE(from_fresh[0].keys, from_restored[0].keys);
}

TEST(ReplayCheckpoint, CheckpointEveryWritesAfterThatManyInsertsAndLeavesNoPartialFile) {
  const Scratch scratch;
  ReplayConfig config = prioritized(scratch.dir());
  config.checkpoint_every = 25;
  ReplayServer server(config);
  server.insert(numbered_rows(0, 20));
  EXPECT_EQ(server.checkpoints_written(), 0U);
  EXPECT_FALSE(fs::exists(server.checkpoint_path()));
  server.insert(numbered_rows(20, 10));  // 30 inserts: one checkpoint
  EXPECT_EQ(server.checkpoints_written(), 1U);
  server.insert(numbered_rows(30, 20));  // 20 since the last one: none
  EXPECT_EQ(server.checkpoints_written(), 1U);
  server.insert(numbered_rows(50, 5));  // 25 since: a second one replaces the first
  EXPECT_EQ(server.checkpoints_written(), 2U);
  EXPECT_TRUE(server.last_checkpoint_error().empty());
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(scratch.dir())) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "replay.ckpt");
  }
  EXPECT_EQ(files, 1U);
  ReplayServer restored(config);
  restored.restore_from(server.checkpoint_path());
  EXPECT_EQ(restored.inserts(), 55U);
}

TEST(ReplayCheckpoint, NothingToSaveBeforeTheFirstInsertAndNoDirIsAnError) {
  const Scratch scratch;
  ReplayServer empty(prioritized(scratch.dir()));
  EXPECT_FALSE(empty.checkpoint().has_value());
  ReplayConfig no_dir = prioritized("");
  ReplayServer server(no_dir);
  server.insert(numbered_rows(0, 4));
  EXPECT_TRUE(server.checkpoint_path().empty());
  EXPECT_THROW((void)server.checkpoint(), CheckpointError);
}

// The error message of restoring `path` into a fresh server (empty when it succeeds).
std::string restore_error(const ReplayConfig& config, const std::string& path) {
  ReplayServer server(config);
  server.insert(numbered_rows(500, 20));
  try {
    server.restore_from(path);
  } catch (const CheckpointError& e) {
    // A refused restore leaves the server as it was.
    EXPECT_EQ(server.inserts(), 20U);
    EXPECT_EQ(server.size(), 20U);
    return e.what();
  }
  return {};
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << text;
}

TEST(ReplayCheckpoint, TruncatedCheckpointIsRefusedWithAnErrorNamingTheFile) {
  const Scratch scratch;
  ReplayServer server(prioritized(scratch.dir()));
  feed(server, 0, 6);
  const std::string path = *server.checkpoint();
  const auto full = fs::file_size(path);
  ASSERT_TRUE(restore_error(prioritized(scratch.dir()), path).empty());
  for (const std::uintmax_t size :
       {full - 1, full / 2, std::uintmax_t{70}, std::uintmax_t{10}, std::uintmax_t{0}}) {
    const std::string copy = scratch.dir() + "/cut.ckpt";
    fs::copy_file(path, copy, fs::copy_options::overwrite_existing);
    fs::resize_file(copy, size);
    const std::string error = restore_error(prioritized(scratch.dir()), copy);
    expect_contains(error, copy);
    EXPECT_TRUE(error.find("truncated") != std::string::npos ||
                error.find("footer") != std::string::npos)
        << error;
  }
  // At start, with restore: true, the same refusal comes from the constructor.
  fs::resize_file(path, full / 3);
  ReplayConfig config = prioritized(scratch.dir());
  config.restore = true;
  EXPECT_THROW(ReplayServer restored(config), CheckpointError);
}

TEST(ReplayCheckpoint, CorruptOrForeignFilesAreRefused) {
  const Scratch scratch;
  ReplayServer server(prioritized(scratch.dir()));
  feed(server, 0, 6);
  const std::string path = *server.checkpoint();
  const auto size = fs::file_size(path);
  // One flipped bit anywhere (table part or footer counters) fails the checksum or the layout.
  for (const std::uintmax_t offset : {std::uintmax_t{3}, size / 2, size - 30}) {
    const std::string copy = scratch.dir() + "/flip.ckpt";
    fs::copy_file(path, copy, fs::copy_options::overwrite_existing);
    std::fstream file(copy, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(static_cast<std::streamoff>(offset));
    char byte = 0;
    file.get(byte);
    file.seekp(static_cast<std::streamoff>(offset));
    file.put(static_cast<char>(byte ^ 0x10));
    file.close();
    expect_contains(restore_error(prioritized(scratch.dir()), copy), "corrupt");
  }
  const std::string text = scratch.dir() + "/notes.ckpt";
  std::ofstream(text) << std::string(200, 'x');
  expect_contains(restore_error(prioritized(scratch.dir()), text), "not a replay node checkpoint");
  expect_contains(restore_error(prioritized(scratch.dir()), scratch.dir() + "/missing.ckpt"),
                  "cannot open");
}

TEST(ReplayCheckpoint, CheckpointOfOtherTableParamsIsRefused) {
  const Scratch scratch;
  ReplayServer server(prioritized(scratch.dir()));
  feed(server, 0, 3);
  const std::string path = *server.checkpoint();
  ReplayConfig bigger = prioritized(scratch.dir());
  bigger.capacity = 128;
  expect_contains(restore_error(bigger, path), "capacity 64");
  ReplayConfig uniform = prioritized(scratch.dir());
  uniform.prioritized = false;
  expect_contains(restore_error(uniform, path), "selector prioritized");
}

TEST(ReplayCheckpoint, ParamsNeedACheckpointDirForEveryAndRestore) {
  const auto read = [](std::map<std::string, std::string> values) {
    return ReplayConfig::from_params(NodeParams("replay", std::move(values)), 3);
  };
  const ReplayConfig c =
      read({{"checkpoint_dir", "ckpt/run1"}, {"checkpoint_every", "5000"}, {"restore", "true"}});
  EXPECT_EQ(c.checkpoint_dir, "ckpt/run1");
  EXPECT_EQ(c.checkpoint_every, 5000U);
  EXPECT_TRUE(c.restore);
  EXPECT_THROW((void)read({{"checkpoint_every", "10"}}), ParamError);
  EXPECT_THROW((void)read({{"restore", "true"}}), ParamError);
  EXPECT_THROW((void)read({{"checkpoint_dir", "x"}, {"restore", "maybe"}}), ParamError);
  EXPECT_THROW((void)read({{"checkpoint_dir", "x"}, {"checkpoint_every", "-1"}}), ParamError);
}

TEST(ReplayCheckpoint, ReplayReactorWritesACheckpointAtStop) {
  const Scratch scratch;
  reactors::EnvironmentConfig env_config;
  env_config.workers = 1;
  env_config.start_time_ns = 0;
  env_config.keepalive = true;
  reactors::Environment env(env_config);
  ReplayConfig rc;
  rc.min_size = 16;
  rc.batch_size = 8;
  rc.checkpoint_dir = scratch.dir();
  auto& replay = env.add<ReplayReactor>("replay-1", rc, ReplayPortWidths{1, 0, 0});
  SamplerConfig sc;
  sc.num_envs = 4;
  sc.local_policy = true;
  sc.seed = 3;
  auto& sampler = env.add<SamplerReactor>("sampler-0", sc, SamplerPortWidths{0, 0, 1, 0},
                                          std::chrono::milliseconds(1));
  sampler.set_step_limit(100);
  env.connect(sampler.transitions[0], replay.transitions[0]);
  env.run();
  ASSERT_EQ(replay.inserts.load(), 100);
  const std::string path = (fs::path(scratch.dir()) / "replay-1.ckpt").string();
  ASSERT_TRUE(fs::exists(path));
  ReplayServer restored(rc);
  restored.restore_from(path);
  EXPECT_EQ(restored.inserts(), 100U);
  EXPECT_EQ(restored.size(), 100U);
}

}  // namespace
}  // namespace tagflow::nodes
