// Tracing a real run (tracing/README.md): `tagflow up --trace` on a cluster of three node
// processes and a coordinator leaves one Chrome trace with every process, worker and message in
// it, each send before its receive; `tagflow trace summary` reads it; two runs that part on
// purpose (a sampler reseeded from an env step) are told apart by `tagflow diff`, at the tag and
// on the connection where they part, and two runs of the same file match. Ctrl-C on a run still
// leaves every process's trace, merged, and SIGTERM to a process waiting to join its file; a
// SIGKILLed process's missing file is named.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/cluster_files.hpp"
#include "tests/support/launched_processes.hpp"

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

using testing::read_text_file;

/// Two samplers (local policy, two processes) feeding one replay: three node processes without
/// LibTorch. `sampler_params` is added to the samplers' params.
std::string traced_cluster(int base, const std::string& trace,
                           const std::string& sampler_params = "", const std::string& extra = "") {
  std::ostringstream yaml;
  yaml << "cluster: traced\nmode: reactor\nseed: 11\n"
       << "hosts:\n  local: {address: 127.0.0.1}\n"
       << "coordinator: {host: local, port: " << base << "}\n"
       << "nodes:\n"
       << "  sampler:\n    kind: sampler\n    replicas: 2\n    data_port: " << base + 1
       << "\n    params: {env: CartPole-v1, num_envs: 8, policy: local, epsilon_start: 1.0, "
          "epsilon_end: 0.1, epsilon_decay_steps: 2000"
       << sampler_params << "}\n"
       << "  replay:\n    kind: replay\n    data_port: " << base + 3
       << "\n    params: {capacity: 5000, selector: uniform, min_size: 100, batch_size: 32}\n"
       << "connections:\n  - {from: sampler.transitions, to: replay.transitions}\n"
       << "stop: {env_steps: 1600, seconds: 120}\n"
       << "trace: " << trace << "\n"
       << extra;
  return yaml.str();
}

class Traced : public ::testing::Test {
 protected:
  void TearDown() override { testing::remove_unless_failed(dir_); }
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("trace_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    base_ = testing::free_local_cluster_ports();
    ASSERT_GT(base_, 0) << "no free port range";
  }
  /// Runs `tagflow ARGS...`; its exit code, stdout and stderr in files named after `tag`.
  int tagflow(const std::vector<std::string>& args, const std::string& tag) {
    std::vector<std::string> argv{std::string(TAGFLOW_BIN_DIR) + "/tagflow"};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::wait_exit(
        testing::spawn_with_output(argv, dir_ / (tag + ".out"), dir_ / (tag + ".err")), 150s);
  }
  std::string out(const std::string& tag) { return read_text_file(dir_ / (tag + ".out")); }
  std::string err(const std::string& tag) { return read_text_file(dir_ / (tag + ".err")); }
  std::string file(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  /// `tagflow up` of the traced cluster running until stopped, its run directory DIR/run; its
  /// pid once every federate joined (`running` false when that did not come within 60 s).
  pid_t start_long_run(bool& running) {
    // Each thread keeps its latest 20,000 events: the default 200,000 made a second of this run
    // a 160 MB trace, whose parsing cost more CPU than the rest of a test.
    std::string yaml = traced_cluster(base_, "{events: 20000}");
    yaml.replace(yaml.find("env_steps: 1600"), 15, "env_steps: 100000000");  // until stopped
    const std::string cluster = file("long.yaml", yaml);
    const fs::path run = dir_ / "run";
    const pid_t up = testing::spawn_with_output({std::string(TAGFLOW_BIN_DIR) + "/tagflow", "up",
                                                 cluster, "--log-dir", run.string(), "--quiet"},
                                                dir_ / "up.out", dir_ / "up.err");
    running = testing::eventually(
        [&] {
          return read_text_file(run / "coordinator.log").find("all federates joined") !=
                 std::string::npos;
        },
        60s);
    return up;
  }
  fs::path dir_;
  int base_ = 0;
};

TEST_F(Traced, AThreeProcessRunLeavesOneChromeTraceWithEveryProcessWorkerAndMessage) {
  const std::string cluster = file(
      "traced.yaml", traced_cluster(base_, "false", "", "checkpoint: {every: 20ms, keep: 2}\n"));
  const fs::path run = dir_ / "run";
  ASSERT_EQ(tagflow({"up", cluster, "--trace", "--log-dir", run.string(), "--quiet"}, "up"), 0)
      << err("up");
  EXPECT_NE(err("up").find("trace.json"), std::string::npos) << err("up");

  const nlohmann::json trace = nlohmann::json::parse(read_text_file(run / "trace.json"));
  ASSERT_TRUE(trace.at("traceEvents").is_array());
  std::map<int, std::string> processes;                    // pid → name
  std::map<std::pair<int, int>, std::string> threads;      // (pid, tid) → name
  std::map<std::string, std::size_t> kinds;                // cat → events
  std::map<std::string, std::pair<double, double>> flows;  // id → (start ts, finish ts)
  std::map<std::string, std::string> flow_names;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;  // thread → spans
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X") {
      const double ts = e.at("ts").get<double>();
      spans[{e.at("pid"), e.at("tid")}].emplace_back(ts, ts + e.at("dur").get<double>());
    }
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "process_name") {
      processes[e.at("pid")] = e.at("args").at("name");
    } else if (ph == "M" && e.at("name") == "thread_name") {
      threads[{e.at("pid"), e.at("tid")}] = e.at("args").at("name");
    } else if (ph == "X" || ph == "i") {
      ++kinds[e.value("cat", "")];
      EXPECT_TRUE(e.contains("args")) << e.dump();
    } else if (ph == "s" || ph == "f") {
      const std::string id = e.at("id").is_string() ? e.at("id").get<std::string>()
                                                    : std::to_string(e.at("id").get<long>());
      (ph == "s" ? flows[id].first : flows[id].second) = e.at("ts").get<double>();
      if (ph == "s") flow_names[id] = e.value("name", "");
    }
  }
  std::set<std::string> names;
  for (const auto& [pid, name] : processes) names.insert(name);
  for (const std::string process : {"coordinator", "sampler-0", "sampler-1", "replay"}) {
    EXPECT_EQ(names.count(process), 1U) << process << " has no track";
  }
  std::set<std::string> thread_names;
  for (const auto& [key, name] : threads) thread_names.insert(name);
  for (const std::string worker : {"sampler-0 worker 0", "sampler-1 worker 0", "replay worker 0"}) {
    EXPECT_EQ(thread_names.count(worker), 1U) << worker << " has no track";
  }
  EXPECT_GT(kinds["reaction"], 100U);
  EXPECT_GT(kinds["send"], 100U);
  EXPECT_GT(kinds["receive"], 100U);
  EXPECT_GT(kinds["control_send"], 10U);
  EXPECT_GE(kinds["checkpoint"], 3U * 4U);  // every 20 ms of 100 ms, by each of three federates
  // Every message's arrow starts before it ends, after the clocks are aligned; both links and the
  // coordinator's messages have arrows.
  std::size_t from_sampler_0 = 0, from_sampler_1 = 0;
  for (const auto& [id, ends] : flows) {
    EXPECT_LE(ends.first, ends.second) << "flow " << id << " (" << flow_names[id] << ")";
    if (flow_names[id].find("sampler-0") == 0) ++from_sampler_0;
    if (flow_names[id].find("sampler-1") == 0) ++from_sampler_1;
  }
  EXPECT_GT(from_sampler_0, 50U);
  EXPECT_GT(from_sampler_1, 50U);
  EXPECT_TRUE(trace.at("metadata").contains("clock_alignment")) << trace.at("metadata").dump();
  // The spans of one thread nest (a viewer draws a track's slices as a stack): each that starts
  // inside another ends inside it. A socket owner's wait for a grant's data messages overlapped
  // the scheduler's wait for the grant. Times are microseconds to the nanosecond.
  for (auto& [thread, list] : spans) {
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<std::pair<double, double>> open;
    std::size_t crossing = 0;
    std::string first;
    for (const auto& span : list) {
      while (!open.empty() && open.back().second <= span.first + 0.002) open.pop_back();
      if (!open.empty() && span.second > open.back().second + 0.002) {
        if (crossing++ == 0) {
          first = std::to_string(span.first) + "+" + std::to_string(span.second - span.first) +
                  " crosses the end of " + std::to_string(open.back().first) + "+" +
                  std::to_string(open.back().second - open.back().first);
        }
        continue;
      }
      open.push_back(span);
    }
    EXPECT_EQ(crossing, 0U) << threads[thread] << ": " << first;
  }

  ASSERT_EQ(tagflow({"trace", "summary", run.string()}, "summary"), 0) << err("summary");
  for (const std::string federate : {"sampler-0", "sampler-1", "replay"}) {
    EXPECT_NE(out("summary").find(federate), std::string::npos) << out("summary");
  }
  const std::string svg = read_text_file(run / "trace-summary.svg");
  EXPECT_EQ(svg.rfind("<svg", 0), 0U) << svg.substr(0, 200);
}

TEST_F(Traced, AnActorModeRunRecordsEachHandlerAndEachMessageBetweenActors) {
  std::string yaml = traced_cluster(base_, "true");
  yaml.replace(yaml.find("mode: reactor"), 13, "mode: actor");
  // No learner takes minibatches here: the replay must not owe any, or it withholds its credit.
  yaml.replace(yaml.find("min_size: 100,"), 14, "min_size: 4000,");
  const std::string cluster = file("actors.yaml", yaml);
  const fs::path run = dir_ / "run";
  ASSERT_EQ(tagflow({"up", cluster, "--log-dir", run.string(), "--quiet"}, "up"), 0) << err("up");
  const nlohmann::json trace = nlohmann::json::parse(read_text_file(run / "trace.json"));
  std::set<std::string> processes;
  std::map<std::string, std::size_t> handlers;  // name → spans
  std::map<std::string, std::pair<double, double>> flows;
  std::map<std::string, std::string> flow_names;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "process_name") processes.insert(e["args"]["name"]);
    if (ph == "X" && e.at("cat") == "handler") ++handlers[e.at("name")];
    if (ph == "s" || ph == "f") {
      const std::string id = e.at("id").dump();
      (ph == "s" ? flows[id].first : flows[id].second) = e.at("ts").get<double>();
      if (ph == "s") flow_names[id] = e.value("name", "");
    }
  }
  EXPECT_EQ(processes, (std::set<std::string>{"sampler-0", "sampler-1", "replay"}));
  // Actor mode stops on the samplers' own counts, so how many messages the replay took varies
  // (1,600 env steps of 8 envs are at most 200): each one it handled has its arrow.
  const std::size_t handled = handlers["replay TransitionsMessage"];
  EXPECT_GE(handled, 50U);
  EXPECT_GE(handlers["sampler-0 Credit"] + handlers["sampler-1 Credit"], 50U);
  std::size_t to_replay = 0;
  for (const auto& [id, ends] : flows) {
    EXPECT_LE(ends.first, ends.second) << flow_names[id];
    const std::string& name = flow_names[id];
    if (name.rfind("sampler-0 → replay", 0) == 0 || name.rfind("sampler-1 → replay", 0) == 0) {
      ++to_replay;
    }
  }
  EXPECT_GE(to_replay, handled);  // the transitions, and the samplers' offers
}

TEST_F(Traced, CtrlCOnAReactorRunStillLeavesEveryProcesssTraceMerged) {
  bool running = false;
  const pid_t up = start_long_run(running);
  const fs::path run = dir_ / "run";
  std::this_thread::sleep_for(1s);  // rounds to record
  ::kill(up, SIGINT);
  ASSERT_TRUE(running) << err("up");
  ASSERT_EQ(testing::wait_exit(up, 60s), 130) << err("up");
  EXPECT_NE(err("up").find("trace of 4 processes"), std::string::npos) << err("up");
  EXPECT_EQ(err("up").find("no trace file from"), std::string::npos) << err("up");
  for (const std::string process : {"coordinator", "sampler-0", "sampler-1", "replay"}) {
    EXPECT_TRUE(fs::exists(run / "trace" / (process + ".trace.json")))
        << process << "'s log:\n"
        << read_text_file(run / (process + ".log"));
  }
  const nlohmann::json trace = nlohmann::json::parse(read_text_file(run / "trace.json"));
  std::set<std::string> processes;
  std::map<std::string, std::size_t> kinds;  // cat → events
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "process_name") processes.insert(e["args"]["name"]);
    if (ph == "X" || ph == "i") ++kinds[e.value("cat", "")];
  }
  EXPECT_EQ(processes, (std::set<std::string>{"coordinator", "sampler-0", "sampler-1", "replay"}));
  EXPECT_GT(kinds["reaction"], 100U);
  EXPECT_GT(kinds["send"], 10U);
  EXPECT_GT(kinds["control_send"], 10U);
}

// A process SIGKILLed during a traced run leaves no trace file: the launcher merges the others'
// and names the one missing (tracing/README.md, "The files a traced run leaves").
TEST_F(Traced, TheLauncherNamesAProcessThatLeftNoTraceFile) {
  bool running = false;
  const pid_t up = start_long_run(running);
  const fs::path run = dir_ / "run";
  if (!running) ::kill(up, SIGKILL);
  ASSERT_TRUE(running) << err("up");
  const std::map<std::string, pid_t> pids = testing::recorded_pids(run);
  ASSERT_EQ(pids.count("sampler-1"), 1U) << read_text_file(run / "pids");
  ASSERT_EQ(::kill(pids.at("sampler-1"), SIGKILL), 0);
  EXPECT_EQ(testing::wait_exit(up, 60s), 1) << err("up");
  EXPECT_NE(err("up").find("trace of 3 processes"), std::string::npos) << err("up");
  EXPECT_NE(err("up").find("tagflow up: no trace file from sampler-1: stopped before it recorded"),
            std::string::npos)
      << err("up");
}

// A process stopped while it starts leaves its trace file: in reactor mode the replay waiting for
// a coordinator that never comes, in actor mode a sampler waiting for its replay.
TEST_F(Traced, AProcessStoppedWhileItWaitsForItsPeersLeavesItsTraceFile) {
  for (const std::string mode : {"reactor", "actor"}) {
    std::string yaml = traced_cluster(base_, "true");
    yaml.replace(yaml.find("mode: reactor"), 13, "mode: " + mode);
    const std::string cluster = file(mode + ".yaml", yaml);
    const std::string process = mode == "reactor" ? "replay" : "sampler-0";
    const fs::path trace = dir_ / ("trace-" + mode);
    const pid_t node =
        testing::spawn_with_output({std::string(TAGFLOW_BIN_DIR) + "/tagflow", "node", "--config",
                                    cluster, "--name", process, "--trace", trace.string()},
                                   dir_ / "node.out", dir_ / "node.err");
    std::this_thread::sleep_for(2s);  // past its start (reading its file takes milliseconds)
    ASSERT_EQ(::kill(node, SIGTERM), 0);
    EXPECT_EQ(testing::wait_exit(node, 30s), 128 + SIGTERM) << mode << ": " << err("node");
    const std::string text = read_text_file(trace / (process + ".trace.json"));
    ASSERT_FALSE(text.empty()) << mode << ": no trace file; " << err("node");
    const nlohmann::json written = nlohmann::json::parse(text);
    EXPECT_EQ(written.at("format"), "tagflow-trace-1");
    EXPECT_EQ(written.at("process"), process);
  }
}

/// The tag of the `index`-th message `sender` sent to `receiver` in a run (its values.tsv).
std::string nth_tag(const fs::path& run, const std::string& sender, const std::string& receiver,
                    std::size_t index) {
  std::ifstream in(run / "trace" / (sender + ".values.tsv"));
  std::string line;
  std::size_t seen = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string time, micro, to;
    fields >> time >> micro >> to;
    if (to != receiver) continue;
    if (seen++ == index) return time;
  }
  return "(no such message)";
}

TEST_F(Traced, DiffNamesTheTagAndConnectionWhereAReseededSamplerParts) {
  const std::string trace = "{digests: true, events: 20000}";
  const std::string same = file("same.yaml", traced_cluster(base_, trace));
  // From env step 400 on (the 50th step of 8 envs), each sampler explores with another seed.
  const std::string reseeded =
      file("reseeded.yaml", traced_cluster(base_, trace, ", reseed_at_step: 400, reseed: 99"));
  const fs::path a = dir_ / "a", b = dir_ / "b", c = dir_ / "c";
  ASSERT_EQ(tagflow({"up", same, "--log-dir", a.string(), "--quiet"}, "a"), 0) << err("a");
  ASSERT_EQ(tagflow({"up", same, "--log-dir", b.string(), "--quiet"}, "b"), 0) << err("b");
  ASSERT_EQ(tagflow({"up", reseeded, "--log-dir", c.string(), "--quiet"}, "c"), 0) << err("c");

  EXPECT_EQ(tagflow({"diff", a.string(), b.string()}, "same"), 0) << out("same") << err("same");

  ASSERT_EQ(tagflow({"diff", a.string(), c.string()}, "parted"), 1)
      << out("parted") << err("parted");
  const std::string said = out("parted");
  // Both samplers part at the same step; sampler-0 comes first among equal tags.
  const std::string tag = nth_tag(a, "sampler-0", "replay", 49);
  EXPECT_NE(said.find(tag), std::string::npos) << "expected tag " << tag << " in:\n" << said;
  EXPECT_NE(said.find("sampler-0"), std::string::npos) << said;
  EXPECT_NE(said.find("replay"), std::string::npos) << said;
  EXPECT_NE(said.find("transitions"), std::string::npos) << said;
  // The messages before it were the same in both runs.
  EXPECT_EQ(nth_tag(a, "sampler-0", "replay", 48), nth_tag(c, "sampler-0", "replay", 48));
}

/// Two samplers of their own groups feeding one replay, one of them `after: 3ms`, stopping at
/// `steps` env steps.
std::string delayed_cluster(int base, std::int64_t steps) {
  std::ostringstream yaml;
  yaml << "cluster: delayed\nmode: reactor\nseed: 11\n"
       << "hosts:\n  local: {address: 127.0.0.1}\n"
       << "coordinator: {host: local, port: " << base << "}\n"
       << "nodes:\n";
  for (const auto& [name, port] : {std::pair{"early", 1}, std::pair{"late", 2}}) {
    yaml << "  " << name << ":\n    kind: sampler\n    data_port: " << base + port
         << "\n    params: {env: CartPole-v1, num_envs: 8, policy: local}\n";
  }
  yaml << "  replay:\n    kind: replay\n    data_port: " << base + 3
       << "\n    params: {capacity: 5000, selector: uniform, min_size: 100, batch_size: 32}\n"
       << "connections:\n  - {from: early.transitions, to: replay.transitions}\n"
       << "  - {from: late.transitions, to: replay.transitions, after: 3ms}\n"
       << "stop: {env_steps: " << steps << ", seconds: 120}\n"
       << "trace: {digests: true, events: 20000}\n";
  return yaml.str();
}

// Runs of one file stopped at different steps match up to where the shorter one ends, its
// cutoff: the delayed sampler's last messages arrive 3 ms after it, and the other sampler's
// rounds after the cutoff are the longer run's, not missing from the shorter.
TEST_F(Traced, RunsStoppedAtDifferentStepsMatchUpToTheShorterRunsCutoff) {
  const std::string shorter = file("shorter.yaml", delayed_cluster(base_, 1600));
  const std::string longer = file("longer.yaml", delayed_cluster(base_, 2400));
  const fs::path a = dir_ / "a", b = dir_ / "b";
  ASSERT_EQ(tagflow({"up", shorter, "--log-dir", a.string(), "--quiet"}, "a"), 0) << err("a");
  ASSERT_EQ(tagflow({"up", longer, "--log-dir", b.string(), "--quiet"}, "b"), 0) << err("b");
  ASSERT_EQ(tagflow({"diff", a.string(), b.string()}, "diff"), 0) << out("diff") << err("diff");
  EXPECT_NE(out("diff").find("where run A ends; run B sent"), std::string::npos) << out("diff");
  ASSERT_EQ(tagflow({"diff", b.string(), a.string()}, "back"), 0) << out("back") << err("back");
  EXPECT_NE(out("back").find("where run B ends; run A sent"), std::string::npos) << out("back");
}

TEST_F(Traced, DiffOfRunsRecordedWithoutDigestsSaysHowToRecordThem) {
  const std::string cluster = file("plain.yaml", traced_cluster(base_, "true"));
  const fs::path a = dir_ / "a";
  ASSERT_EQ(tagflow({"up", cluster, "--log-dir", a.string(), "--quiet"}, "a"), 0) << err("a");
  EXPECT_EQ(tagflow({"diff", a.string(), a.string()}, "diff"), 2);
  EXPECT_NE(err("diff").find("digests"), std::string::npos) << err("diff") << out("diff");
}

}  // namespace
}  // namespace tagflow::cli
