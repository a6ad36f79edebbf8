// Recovery with real processes (docs/recovery.md, federation/PROTOCOL.md §9): configs/local.yaml
// shortened, with a checkpoint every 20 ms of logical time (20 rounds). Checkpoints do not change
// the digest; kill -9 of any process (each node kind and the coordinator) after the first
// checkpoint, or of one while a checkpoint is being written, ends with exit 0 and the uninterrupted
// digest; a launcher killed mid-run is continued with `--resume`, which refuses a corrupt newest
// part by name and resumes from the checkpoint before.
//
// Actor mode (hosts/actor/actor_process.hpp): the same file in actor mode, each replica
// checkpointing itself every 300 ms of wall time. kill -9 of the replay, the learner, the
// inference server or a sampler process once training is under way: the launcher restarts that
// process alone, from its replicas' own checkpoints, the others link to it again, and the run
// reaches its env_steps stop with exit 0; the summary's restart names the process, the
// checkpoint each replica started from and what was lost. With `restart: {max: 0}` the same kill
// ends the run naming the process. A multi-agent cluster in actor mode (no checkpoints) restarts
// its killed inference server from scratch and reaches its stop.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/state_stream.hpp"
#include "monitoring/http_get.hpp"
#include "nodes/actor_checkpoint.hpp"
#include "tests/support/cluster_files.hpp"
#include "tests/support/launched_processes.hpp"
#include "tests/support/shipped_config.hpp"

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

using testing::eventually;
using testing::read_text_file;
using testing::recorded_pids;
using testing::wait_exit;

constexpr const char* kStop = "env_steps: 4800";  // 300 rounds: 0.3 s of logical time

class Recovery : public ::testing::Test {
 protected:
  void TearDown() override { testing::remove_unless_failed(dir_); }
  void SetUp() override {
    if (!TAGFLOW_HAS_TORCH)
      GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
    dir_ = fs::path(::testing::TempDir()) /
           ("tagflow_recovery_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    base_port_ = testing::free_local_cluster_ports();
    ASSERT_GT(base_port_, 0) << "no free port range";
  }

  /// The shortened local cluster, with `checkpoint` and `restart` ("" for none), as DIR/NAME.
  std::string cluster_file(const std::string& name, const std::string& checkpoint,
                           const std::string& restart) {
    testing::LocalClusterOptions options;
    options.stop = kStop;
    options.port = testing::local_cluster_ports_from(base_port_);
    options.checkpoint = checkpoint;
    options.restart = restart;
    // A replay that holds fewer transitions than the run inserts before its first checkpoints (16
    // a round): they save a table that has evicted, whose sampling order a restore must keep as
    // it was (a restart from one once changed the digest).
    options.min_size = 100;
    options.params = {{"replay", "capacity: 200"}};
    std::string text = testing::local_cluster_yaml(options);
    // Restarted processes load LibTorch again: on a loaded machine that alone can take longer
    // than the file's 2 s heartbeat and 30 s join limits, which would end a run this test expects
    // to recover.
    const std::string heartbeat = "heartbeat_timeout: 2s\n";
    const std::size_t at = text.find(heartbeat);
    EXPECT_NE(at, std::string::npos) << "configs/local.yaml has no " << heartbeat;
    if (at != std::string::npos) {
      text.replace(at, heartbeat.size(), "heartbeat_timeout: 10s\n  join_timeout: 180s\n");
    }
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  pid_t up(const std::vector<std::string>& args, const std::string& tag) {
    std::vector<std::string> argv{std::string(TAGFLOW_BIN_DIR) + "/tagflow", "up"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--quiet");
    return testing::spawn_with_output(argv, dir_ / (tag + ".out"), dir_ / (tag + ".err"));
  }
  std::string err(const std::string& tag) const { return read_text_file(dir_ / (tag + ".err")); }

  /// The first sample of metric `family` on the metrics endpoint at 127.0.0.1:`port`, if it
  /// answers and has one.
  static std::optional<double> metric(int port, const std::string& family) {
    const std::optional<std::string> page =
        monitoring::http_get("127.0.0.1", static_cast<std::uint16_t>(port), "/metrics", 1s);
    const std::size_t at = page ? page->find("\n" + family + "{") : std::string::npos;
    if (at == std::string::npos) return std::nullopt;
    return std::atof(page->c_str() + page->find("} ", at) + 2);
  }

  nlohmann::json summary(const fs::path& logs) const {
    return nlohmann::json::parse(read_text_file(logs / "summary.json"), nullptr, false);
  }

  /// The digest of an uninterrupted run of `file` (logs in DIR/TAG).
  std::string uninterrupted_digest(const std::string& file, const std::string& tag) {
    const fs::path logs = dir_ / tag;
    EXPECT_EQ(wait_exit(up({file, "--log-dir", logs.string()}, tag), 150s), 0) << err(tag);
    const nlohmann::json json = summary(logs);
    // Two runs that both failed to write one must not compare equal: the placeholder names its run.
    const std::string digest = json.is_discarded()
                                   ? "(no summary of " + tag + ")"
                                   : json.value("digest", "(no digest in " + tag + ")");
    EXPECT_EQ(digest.size(), 16U) << tag << ": " << digest;
    return digest;
  }

  /// The shortened local cluster in actor mode with `restart`, as DIR/NAME.
  std::string actor_cluster_file(const std::string& name, const std::string& restart) {
    testing::LocalClusterOptions options;
    options.mode = "actor";
    // Long enough that on an idle machine the samplers are still at work when the victim is
    // killed (with 6,000 the first sampler had sometimes reached its share by then, and the run
    // had ended).
    options.stop = "env_steps: 10000";
    options.port = testing::local_cluster_ports_from(base_port_);
    options.checkpoint = "{every: 300ms}";
    options.restart = restart;
    std::ofstream(dir_ / name) << testing::local_cluster_yaml(options);
    return (dir_ / name).string();
  }

  /// Starts the run (actor mode), waits until `victim` wrote a checkpoint and the learner one
  /// after its first update (so every link is up: its minibatches need transitions, which need
  /// the inference server's actions), then kills `victim`'s process with SIGKILL; the
  /// launcher's pid.
  pid_t up_and_kill_actor(const std::string& file, const fs::path& logs,
                          const std::string& victim) {
    const pid_t launcher = up({file, "--log-dir", logs.string()}, victim);
    const auto checkpoint = [&](const std::string& replica) {
      try {
        return nodes::read_actor_checkpoint((logs / "checkpoints" / (replica + ".ckpt")).string(),
                                            replica);
      } catch (const StateError&) {  // being replaced: try again
        return std::optional<nodes::ActorCheckpointFile>();
      }
    };
    EXPECT_TRUE(eventually(
        [&] {
          // Training under way, and a checkpoint of the victim from after its start (so the
          // one it restarts from has counted work, whatever the timing).
          const auto learner = checkpoint("learner");
          const auto own = checkpoint(victim);
          return learner && learner->count > 0 && own && own->count > 0;
        },
        90s))
        << err(victim);
    const auto pids = recorded_pids(logs);
    EXPECT_EQ(pids.count(victim), 1U) << err(victim);
    if (pids.count(victim) == 1) {
      EXPECT_EQ(::kill(pids.at(victim), SIGKILL), 0);
    }
    return launcher;
  }

  fs::path dir_;
  int base_port_ = 0;
};

/// Complete checkpoints (with a manifest) under LOGS/checkpoints.
std::vector<fs::path> complete_checkpoints(const fs::path& logs) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(logs / "checkpoints", ec)) {
    if (fs::exists(entry.path() / "manifest")) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) {
    return std::stoll(a.filename().string()) < std::stoll(b.filename().string());
  });
  return out;
}

TEST_F(Recovery, CheckpointsLeaveTheDigestAsItIsAndKeepTheNewestComplete) {
  const std::string plain = uninterrupted_digest(cluster_file("plain.yaml", "", ""), "plain");
  const std::string with =
      uninterrupted_digest(cluster_file("ckpt.yaml", "{every: 20ms, keep: 2}", ""), "ckpt");
  EXPECT_EQ(with, plain);
  const std::vector<fs::path> kept = complete_checkpoints(dir_ / "ckpt");
  ASSERT_EQ(kept.size(), 2U);
  const std::string manifest = read_text_file(kept.back() / "manifest");
  for (const std::string part : {"sampler-0", "sampler-1", "replay", "learner", "inference"}) {
    EXPECT_NE(manifest.find("part " + part + " "), std::string::npos) << manifest;
    EXPECT_TRUE(fs::exists(kept.back() / (part + ".ckpt"))) << part;
  }
  EXPECT_TRUE(fs::exists(kept.back() / "replay.table"));
}

TEST_F(Recovery, KillingAnyProcessAfterACheckpointEndsWithTheUninterruptedDigest) {
  const std::string file = cluster_file("ckpt.yaml", "{every: 20ms, keep: 2}", "{max: 2}");
  const std::string expected = uninterrupted_digest(file, "reference");
  for (const std::string victim : {"sampler-1", "replay", "learner", "inference", "coordinator"}) {
    SCOPED_TRACE(victim);
    const fs::path logs = dir_ / ("logs-" + victim);
    const pid_t launcher = up({file, "--log-dir", logs.string()}, victim);
    ASSERT_TRUE(eventually([&] { return !complete_checkpoints(logs).empty(); }, 60s))
        << err(victim);
    const auto pids = recorded_pids(logs);
    ASSERT_EQ(pids.count(victim), 1U);
    ASSERT_EQ(::kill(pids.at(victim), SIGKILL), 0);
    ASSERT_EQ(wait_exit(launcher, 150s), 0) << err(victim);
    const nlohmann::json json = summary(logs);
    ASSERT_FALSE(json.is_discarded()) << err(victim);
    EXPECT_EQ(json.value("digest", ""), expected) << err(victim);
    ASSERT_TRUE(json.contains("restarts")) << err(victim);  // only there after a restart
    EXPECT_EQ(json.at("restarts")[0].value("process", ""), victim);
    EXPECT_FALSE(json.at("restarts")[0].at("resumed_from_ns").is_null()) << err(victim);
  }
}

// Restarted processes read the cluster file again: edited during the run (another seed), a
// restart would have continued the run's checkpoint with the new file and ended with a digest
// neither file gives. The run ends instead, naming the file and the copy it started with, its
// checkpoints kept; put back, the file resumes to the uninterrupted run's digest.
TEST_F(Recovery, AFileEditedDuringTheRunIsNotRestartedFromAndResumesOncePutBack) {
  const std::string file = cluster_file("edited.yaml", "{every: 20ms, keep: 2}", "{max: 2}");
  const std::string expected = uninterrupted_digest(file, "reference");
  const std::string original = read_text_file(file);
  const fs::path logs = dir_ / "logs-edited";
  const pid_t launcher = up({file, "--log-dir", logs.string()}, "edited");
  ASSERT_TRUE(eventually([&] { return !complete_checkpoints(logs).empty(); }, 60s))
      << err("edited");
  std::string edited = original;
  testing::replace_once(edited, "seed: 7", "seed: 8", file);
  std::ofstream(file) << edited;
  const auto pids = recorded_pids(logs);
  ASSERT_EQ(pids.count("replay"), 1U);
  ASSERT_EQ(::kill(pids.at("replay"), SIGKILL), 0);
  EXPECT_EQ(wait_exit(launcher, 150s), 1) << err("edited");
  EXPECT_NE(err("edited").find("tagflow up: replay killed by signal 9; no restart: " + file +
                               " changed since the run started (" +
                               (logs / "cluster.yaml").string() + " is the file it started with)"),
            std::string::npos)
      << err("edited");
  EXPECT_FALSE(complete_checkpoints(logs).empty());
  std::ofstream(file) << original;
  ASSERT_EQ(wait_exit(up({file, "--resume", logs.string()}, "put-back"), 150s), 0)
      << err("put-back");
  EXPECT_EQ(summary(logs).value("digest", ""), expected) << err("put-back");

  // Finished now: resumed again, it says so and runs nothing (it ran again from its last
  // checkpoint), leaving the run's files as they are; --summary gets the run's summary.
  const auto ended = fs::last_write_time(logs / "summary.json");
  const auto files = std::distance(fs::directory_iterator(logs), fs::directory_iterator());
  const fs::path copy = dir_ / "finished-summary.json";
  ASSERT_EQ(
      wait_exit(up({file, "--resume", logs.string(), "--summary", copy.string()}, "again"), 60s), 0)
      << err("again");
  EXPECT_NE(err("again").find("tagflow up: --resume " + logs.string() + ": that run finished (" +
                              (logs / "summary.json").string() + ": stop env_steps, digest " +
                              expected + "): nothing to resume"),
            std::string::npos)
      << err("again");
  EXPECT_EQ(fs::last_write_time(logs / "summary.json"), ended);
  EXPECT_EQ(std::distance(fs::directory_iterator(logs), fs::directory_iterator()), files);
  EXPECT_EQ(read_text_file(copy), read_text_file(logs / "summary.json"));
}

// A run started with --mode actor from a reactor-mode file keeps no checkpoint --resume can
// take: resumed, it started over in reactor mode. The run directory says which mode it ran in
// (LOG_DIR/mode), and --resume refuses another.
TEST_F(Recovery, AnActorModeRunIsNotResumedInReactorMode) {
  const std::string file = cluster_file("modes.yaml", "{every: 20ms, keep: 2}", "");
  const fs::path logs = dir_ / "logs-actor";
  ASSERT_EQ(wait_exit(up({file, "--mode", "actor", "--log-dir", logs.string()}, "actor"), 150s), 0)
      << err("actor");
  EXPECT_EQ(read_text_file(logs / "mode"), "actor\n");
  EXPECT_EQ(wait_exit(up({file, "--resume", logs.string()}, "resumed"), 60s), 2) << err("resumed");
  EXPECT_NE(err("resumed").find("tagflow up: --resume " + logs.string() +
                                ": that run ran in actor mode (" + (logs / "mode").string() +
                                "), not in reactor mode"),
            std::string::npos)
      << err("resumed");
}

// Parts are written by a thread of each federate while its reactions go on: a part that cannot be
// written is not lost in that thread but ends the run, naming the directory, and the
// checkpoints before it stay complete. A regular file where checkpoint 1 s's directory goes
// (put there once the first checkpoint, at 100 ms, is under way: a run's log directory starts
// empty) makes every federate's part fail there.
TEST_F(Recovery, APartThatCannotBeWrittenEndsTheRunNamingWhereAndKeepsTheOnesBefore) {
  const std::string file = cluster_file("ckpt.yaml", "{every: 100ms, keep: 20}", "");
  std::string text = read_text_file(file);
  testing::replace_once(text, kStop, "env_steps: 80000", file);  // 5 s of logical time
  std::ofstream(file) << text;
  const fs::path logs = dir_ / "logs";
  const fs::path blocked = logs / "checkpoints" / "1000000000";
  const pid_t launcher = up({file, "--log-dir", logs.string()}, "blocked");
  ASSERT_TRUE(eventually([&] { return fs::exists(logs / "checkpoints" / "100000000"); }, 120s))
      << err("blocked");
  std::ofstream(blocked) << "not a directory";
  EXPECT_NE(wait_exit(launcher, 150s), 0) << err("blocked");
  const std::string said = err("blocked");
  EXPECT_NE(said.find("cannot write its part of the checkpoint at logical time 1000000000 ns: " +
                      blocked.string() + ": cannot create"),
            std::string::npos)
      << said;
  EXPECT_TRUE(fs::is_regular_file(blocked));
  // 100 to 900 ms: every part reported, each manifest written.
  const auto complete = complete_checkpoints(logs);
  EXPECT_EQ(complete.size(), 9U) << said;
  for (const fs::path& t : complete) EXPECT_LT(std::stoll(t.filename().string()), 1000000000);
}

// The window between a federate's part and the manifest: the replay (the biggest part) is killed
// while a checkpoint after the first is incomplete. The run resumes from a complete one, older
// than the one being written, and ends as the uninterrupted run does.
TEST_F(Recovery, AKillDuringACheckpointWriteResumesFromTheOneBefore) {
  const std::string file = cluster_file("ckpt.yaml", "{every: 20ms, keep: 2}", "{max: 1}");
  const std::string expected = uninterrupted_digest(file, "reference");
  bool caught = false;
  for (int trial = 0; trial < 3 && !caught; ++trial) {
    const fs::path logs = dir_ / ("logs-" + std::to_string(trial));
    const pid_t launcher = up({file, "--log-dir", logs.string()}, "trial");
    ASSERT_TRUE(eventually([&] { return !complete_checkpoints(logs).empty(); }, 60s))
        << err("trial");
    const auto pids = recorded_pids(logs);
    std::string writing;
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (writing.empty() && std::chrono::steady_clock::now() < deadline) {
      std::error_code ec;
      for (const auto& entry : fs::directory_iterator(logs / "checkpoints", ec)) {
        if (!fs::exists(entry.path() / "manifest") && fs::exists(entry.path() / "sampler-0.ckpt")) {
          writing = entry.path().filename().string();
        }
      }
      if (writing.empty()) std::this_thread::sleep_for(200us);
    }
    if (!writing.empty()) ::kill(pids.at("replay"), SIGKILL);
    ASSERT_EQ(wait_exit(launcher, 150s), 0) << err("trial");
    const nlohmann::json json = summary(logs);
    ASSERT_FALSE(json.is_discarded()) << err("trial");
    EXPECT_EQ(json.value("digest", ""), expected) << err("trial");
    if (writing.empty() || !json.contains("restarts") || json.at("restarts").empty()) continue;
    const auto& restart = json.at("restarts")[0];
    if (restart.at("resumed_from_ns").is_null()) continue;
    caught = restart.at("resumed_from_ns").get<std::int64_t>() < std::stoll(writing);
  }
  EXPECT_TRUE(caught) << "no kill landed between a part and its manifest in 3 runs";
}

TEST_F(Recovery, ResumeContinuesARunWhoseLauncherDiedAndRefusesACorruptNewestPart) {
  const std::string file = cluster_file("ckpt.yaml", "{every: 20ms, keep: 2}", "");
  const std::string expected = uninterrupted_digest(file, "reference");
  const fs::path logs = dir_ / "logs";
  const pid_t launcher = up({file, "--log-dir", logs.string()}, "first");
  ASSERT_TRUE(eventually([&] { return complete_checkpoints(logs).size() >= 2; }, 60s))
      << err("first");
  ::kill(launcher, SIGKILL);  // its children die with it (PR_SET_PDEATHSIG)
  (void)wait_exit(launcher, 30s);
  std::this_thread::sleep_for(500ms);
  const std::vector<fs::path> kept = complete_checkpoints(logs);
  ASSERT_EQ(kept.size(), 2U);
  const fs::path part = kept.back() / "learner.ckpt";
  {
    std::fstream corrupt(part, std::ios::in | std::ios::out | std::ios::binary);
    corrupt.seekp(40);
    corrupt.put('\x7f');
  }
  ASSERT_EQ(wait_exit(up({file, "--resume", logs.string()}, "resumed"), 150s), 0) << err("resumed");
  const std::string text = err("resumed");
  EXPECT_NE(text.find("refused checkpoint " + kept.back().filename().string() +
                      ": part learner: " + part.string() + ": corrupt (checksum mismatch)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("from the checkpoint at logical time " + kept.front().filename().string()),
            std::string::npos)
      << text;
  const nlohmann::json json = summary(logs);
  ASSERT_FALSE(json.is_discarded()) << text;
  EXPECT_EQ(json.value("digest", ""), expected);
}

TEST_F(Recovery, InActorModeAKilledProcessRestartsAloneFromItsCheckpointAndTheRunReachesItsStop) {
  const std::string file = actor_cluster_file("actor.yaml", "{max: 2}");
  for (const std::string victim : {"replay", "learner", "inference", "sampler-1"}) {
    SCOPED_TRACE(victim);
    const fs::path logs = dir_ / ("logs-" + victim);
    const pid_t launcher = up_and_kill_actor(file, logs, victim);
    ASSERT_EQ(wait_exit(launcher, 180s), 0) << err(victim);
    const nlohmann::json json = summary(logs);
    ASSERT_FALSE(json.is_discarded()) << err(victim);
    // The first sampler at its share (5000) stops the run.
    EXPECT_EQ(json.value("stop_reason", ""), "env_steps");
    EXPECT_GE(json.value("env_steps", 0), 5000);
    ASSERT_TRUE(json.contains("restarts")) << err(victim);
    ASSERT_EQ(json.at("restarts").size(), 1U) << json.dump(2);
    const nlohmann::json& restart = json.at("restarts")[0];
    EXPECT_EQ(restart.value("process", ""), victim);
    EXPECT_EQ(restart.value("how", ""), "killed by signal 9");
    ASSERT_EQ(restart.at("replicas").size(), 1U) << restart.dump(2);
    const nlohmann::json& replica = restart.at("replicas")[0];
    EXPECT_EQ(replica.value("replica", ""), victim);
    EXPECT_FALSE(replica.at("checkpoint").is_null()) << restart.dump(2);
    EXPECT_GT(replica.value("checkpoint_count", 0), 0) << restart.dump(2);
    EXPECT_TRUE(restart.at("messages_in_flight").is_number()) << restart.dump(2);
    // The restarted process said what it started from; a process that had dialled it (the
    // replay's learner, the learner's inference server) dialled it again.
    const std::string log = read_text_file(logs / (victim + ".restart1.log"));
    EXPECT_NE(log.find(victim + ": restored from checkpoint"), std::string::npos) << log;
    const std::map<std::string, std::string> dialler{{"replay", "learner"},
                                                     {"learner", "inference"}};
    if (const auto it = dialler.find(victim); it != dialler.end()) {
      const std::string other = read_text_file(logs / (it->second + ".log"));
      EXPECT_NE(other.find("process " + victim + " is back: linked again"), std::string::npos)
          << other;
    }
    EXPECT_NE(read_text_file(dir_ / (victim + ".out")).find("restart: " + victim),
              std::string::npos);
  }
}

// A multi-agent cluster in actor mode (nothing of it can be checkpointed): kill -9 of the
// inference server while the env node waits for its answers. The launcher restarts it alone,
// from scratch; the env node asks the restarted server again for the joint step it was waiting
// on, and the run reaches its stop with exit 0.
TEST_F(Recovery, InActorModeAKilledInferenceServerOfAMultiAgentClusterRestartsAndTheRunGoesOn) {
  const auto port = [this](int offset) { return std::to_string(base_port_ + offset); };
  const fs::path file = dir_ / "marl.yaml";
  std::ofstream(file) << "cluster: marl-restart\nmode: actor\nseed: 5\n"
                      << "policies:\n  car: {hidden: \"16\", per_agent: true}\n"
                      << "nodes:\n"
                      << "  junction: {kind: multi_agent, data_port: " << port(0)
                      << ", metrics_port: " << port(1)
                      << ", params: {env: TrafficJunction4-v1, eval_episodes: 0}}\n"
                      << "  inference: {kind: inference, data_port: " << port(2) << "}\n"
                      << "connections:\n"
                      << "  - {from: junction.observations, to: inference.observations}\n"
                      << "  - {from: inference.actions, to: junction.actions, after: 0}\n"
                      << "stop: {env_steps: 6000, seconds: 150}\nrestart: {max: 1}\n";
  const fs::path logs = dir_ / "logs";
  const pid_t launcher = up({file.string(), "--log-dir", logs.string()}, "marl");
  ASSERT_TRUE(eventually(
      [&] { return metric(base_port_ + 1, "tagflow_env_steps_total").value_or(0) >= 500; }, 90s))
      << err("marl");
  const auto pids = recorded_pids(logs);
  ASSERT_EQ(pids.count("inference"), 1U) << err("marl");
  ASSERT_EQ(::kill(pids.at("inference"), SIGKILL), 0);
  ASSERT_EQ(wait_exit(launcher, 150s), 0) << err("marl");
  const nlohmann::json json = summary(logs);
  ASSERT_FALSE(json.is_discarded()) << err("marl");
  EXPECT_EQ(json.value("stop_reason", ""), "env_steps") << json.dump(2);
  EXPECT_GE(json.value("env_steps", 0), 6000);
  ASSERT_TRUE(json.contains("restarts")) << err("marl");
  ASSERT_EQ(json.at("restarts").size(), 1U) << json.dump(2);
  EXPECT_EQ(json.at("restarts")[0].value("process", ""), "inference");
  EXPECT_NE(err("marl").find("inference killed by signal 9; restart 1 of 1"), std::string::npos)
      << err("marl");
}

// A multi-agent cluster in actor mode that trains: kill -9 of the learner. It restarts from
// scratch and counts its weights versions from 1 again; the inference server loads them at once
// (its version drops below the dead learner's last), instead of serving the dead learner's
// weights until the new count passes them.
TEST_F(Recovery, InActorModeARestartedLearnersWeightsAreServedAtOnce) {
  const auto port = [this](int offset) { return std::to_string(base_port_ + offset); };
  const fs::path file = dir_ / "marl.yaml";
  std::ofstream(file) << "cluster: marl-learner-restart\nmode: actor\nseed: 5\n"
                      << "policies:\n  car: {hidden: \"16\"}\n"
                      << "nodes:\n"
                      << "  junction: {kind: multi_agent, data_port: " << port(0)
                      << ", params: {env: TrafficJunction4-v1, eval_episodes: 0}}\n"
                      << "  inference: {kind: inference, data_port: " << port(2)
                      << ", metrics_port: " << port(3) << ", params: {policies: all}}\n"
                      << "  replay: {kind: replay, data_port: " << port(4)
                      << ", params: {policies: all, capacity: 20000, min_size: 200, "
                      << "samples_per_insert: 4, batch_size: 32}}\n"
                      << "  learner: {kind: learner, data_port: " << port(6)
                      << ", params: {policies: all, learning_rate: 0.001}}\n"
                      << "connections:\n"
                      << "  - {from: junction.observations, to: inference.observations}\n"
                      << "  - {from: inference.actions, to: junction.actions, after: 0}\n"
                      << "  - {from: junction.transitions, to: replay.transitions}\n"
                      << "  - {from: replay.batches, to: learner.batches}\n"
                      << "  - {from: learner.priorities, to: replay.priorities, after: 0}\n"
                      << "  - {from: learner.weights, to: inference.weights, after: 0}\n"
                      << "stop: {env_steps: 8000, seconds: 150}\nrestart: {max: 1}\n";
  const fs::path logs = dir_ / "logs";
  const pid_t launcher = up({file.string(), "--log-dir", logs.string()}, "marl");
  const auto served_version = [&] { return metric(base_port_ + 3, "tagflow_weights_version"); };
  ASSERT_TRUE(eventually([&] { return served_version().value_or(0) >= 200; }, 90s)) << err("marl");
  const auto pids = recorded_pids(logs);
  ASSERT_EQ(pids.count("learner"), 1U) << err("marl");
  const double before = served_version().value_or(0);
  ASSERT_EQ(::kill(pids.at("learner"), SIGKILL), 0);
  EXPECT_TRUE(eventually(
      [&] {
        const std::optional<double> now = served_version();
        return now && *now > 0 && *now < before;
      },
      60s))
      << "the inference server kept version " << before << " or newer: " << err("marl");
  ASSERT_EQ(wait_exit(launcher, 150s), 0) << err("marl");
  EXPECT_NE(err("marl").find("learner killed by signal 9; restart 1 of 1: learner alone, from "
                             "scratch"),
            std::string::npos)
      << err("marl");
}

TEST_F(Recovery, InActorModeAKillWithNoRestartLeftEndsTheRunNamingTheProcess) {
  const std::string file = actor_cluster_file("actor.yaml", "{max: 0}");
  const fs::path logs = dir_ / "logs";
  const pid_t launcher = up_and_kill_actor(file, logs, "replay");
  EXPECT_EQ(wait_exit(launcher, 120s), 1) << err("replay");
  EXPECT_NE(err("replay").find("node replay failed (killed by signal 9"), std::string::npos)
      << err("replay");
  EXPECT_FALSE(fs::exists(logs / "summary.json"));
}

}  // namespace
}  // namespace tagflow::cli
