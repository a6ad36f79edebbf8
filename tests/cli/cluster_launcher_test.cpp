// Tests of cli/launch/cluster_launcher.hpp's supervision with stand-in processes: the launcher runs
// a shell script in place of the tagflow executable, and each stand-in does what a file of the
// test tells it (fail, crash, report a dead federate) or sleeps. So these tests check what the
// launcher does when a node fails, crashes or is interrupted — the error, the exit code, no process
// left — without running a cluster (tests/cli/up_command_test.cpp runs real ones).
#include "cli/launch/cluster_launcher.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include "common/loopback_ports.hpp"
#include "tests/support/cluster_files.hpp"
#include "tests/support/launched_processes.hpp"

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// Plays `tagflow coordinator ...` and `tagflow node ... --name P ...`: runs $BEHAVIOUR_DIR/P
// when it exists, then sleeps (a node that runs until it is stopped).
constexpr const char* kStandIn = R"(#!/bin/sh
name=coordinator
while [ $# -gt 0 ]; do
  if [ "$1" = "--name" ]; then name=$2; fi
  shift
done
echo "stand-in $name started"
if [ -f "$TAGFLOW_TEST_BEHAVIOUR_DIR/$name" ]; then . "$TAGFLOW_TEST_BEHAVIOUR_DIR/$name"; fi
exec sleep 60
)";

// Two samplers, a replay; the coordinator detects a silent federate after 200 ms.
constexpr const char* kCluster = R"(cluster: stand-ins
hosts:
  local: {address: 127.0.0.1}
coordinator: {host: local, port: 47600, heartbeat_interval: 50ms, heartbeat_timeout: 200ms}
nodes:
  sampler: {kind: sampler, replicas: 2, host: local, data_port: 47610}
  replay: {kind: replay, host: local, data_port: 47620}
connections:
  - {from: sampler.transitions, to: replay.transitions}
stop: {env_steps: 100}
)";

using testing::alive;
using testing::read_text_file;
using testing::recorded_pids;

class ClusterLauncher : public ::testing::Test {
 protected:
  void TearDown() override { testing::remove_unless_failed(dir_); }
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("cluster_launcher_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "behaviour");
    std::ofstream(dir_ / "tagflow") << kStandIn;
    fs::permissions(dir_ / "tagflow", fs::perms::owner_all);
    // The file's ports moved to a block claimed from the suite's other choosers of free ports
    // (common/loopback_ports.hpp): fixed ones collided with a test whose random block held them.
    const int base = free_loopback_port_range(30);
    ASSERT_GT(base, 0) << "no free block of loopback ports";
    std::string cluster = kCluster;
    for (const auto& [fixed, offset] :
         {std::pair<const char*, int>{"47600", 0}, {"47610", 10}, {"47620", 20}}) {
      cluster.replace(cluster.find(fixed), 5, std::to_string(base + offset));
    }
    std::ofstream(dir_ / "cluster.yaml") << cluster;
    ::setenv("TAGFLOW_TEST_BEHAVIOUR_DIR", (dir_ / "behaviour").c_str(), 1);
    options_.file = (dir_ / "cluster.yaml").string();
    options_.log_dir = (dir_ / "logs").string();
    options_.quiet = true;
    options_.tagflow = (dir_ / "tagflow").string();
  }
  void behave(const std::string& process, const std::string& script) {
    std::ofstream(dir_ / "behaviour" / process) << script << "\n";
  }
  /// Runs the launcher; returns its exit code and puts what it printed on stderr in `err`.
  int launch(std::string& err) {
    ::testing::internal::CaptureStderr();
    const int code = launch_cluster(options_);
    err = ::testing::internal::GetCapturedStderr();
    return code;
  }
  /// `started`: 4, the coordinator, sampler-0, sampler-1 and replay; 3 in actor mode (no
  /// coordinator).
  void expect_no_process_left(std::size_t started = 4) {
    const auto pids = recorded_pids(options_.log_dir);
    EXPECT_EQ(pids.size(), started);
    for (const auto& [name, pid] : pids) EXPECT_FALSE(alive(pid)) << name << " outlived the run";
  }

  fs::path dir_;
  LaunchOptions options_;
};

TEST_F(ClusterLauncher, ANodeThatExitsNonZeroEndsTheRunNamingItWithItsLastLines) {
  behave("sampler-1", "echo 'sampler-1: out of luck' >&2; exit 3");
  std::string err;
  EXPECT_EQ(launch(err), 1);
  EXPECT_NE(err.find("tagflow up: node sampler-1 failed (exit code 3)"), std::string::npos) << err;
  EXPECT_NE(err.find("last lines of " + options_.log_dir +
                     "/sampler-1.log:\n"
                     "  | stand-in sampler-1 started\n"
                     "  | sampler-1: out of luck\n"),
            std::string::npos)
      << err;
  EXPECT_NE(read_text_file(fs::path(options_.log_dir) / "sampler-1.log").find("out of luck"),
            std::string::npos);
  expect_no_process_left();
}

TEST_F(ClusterLauncher, ANodeKilledByASignalIsTheCauseNotTheFederatesThatFollowIt) {
  // sampler-0 dies; the others then fail as federates would (exit 4: another federate failed)
  // and the coordinator names the dead federate, as the real ones do.
  behave("sampler-0", "kill -9 $$");
  behave("replay", "sleep 0.3; echo 'tagflow node replay: federate sampler-0 failed' >&2; exit 4");
  behave("coordinator",
         "sleep 0.2; echo 'tagflow coordinator: run failed: federate sampler-0 failed "
         "(no heartbeat for 200 ms)' >&2; exit 1");
  std::string err;
  EXPECT_EQ(launch(err), 1);
  EXPECT_NE(err.find("tagflow up: node sampler-0 failed (killed by signal 9)"), std::string::npos)
      << err;
  EXPECT_NE(err.find("tagflow up: the coordinator reports: run failed: federate sampler-0 failed "
                     "(no heartbeat for 200 ms)"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("node replay failed"), std::string::npos) << err;
  expect_no_process_left();
}

TEST_F(ClusterLauncher, AHungNodeDeclaredDeadByTheCoordinatorIsTheOneNamed) {
  // replay hangs (it keeps sleeping); the coordinator declares it dead and the samplers stop
  // because of it (exit 4): the error names replay, not the first process that exited.
  behave("coordinator",
         "sleep 0.2; echo \"tagflow coordinator: run failed: federate 'replay' failed: no message "
         "or heartbeat for more than 200 ms\" >&2; exit 1");
  behave("sampler-0", "sleep 0.1; echo 'federate replay failed' >&2; exit 4");
  behave("sampler-1", "sleep 0.1; exit 4");
  std::string err;
  EXPECT_EQ(launch(err), 1);
  EXPECT_NE(err.find("tagflow up: node replay failed (declared dead by the coordinator)\n"
                     "tagflow up: last lines of " +
                     options_.log_dir + "/replay.log:\n  | stand-in replay started\n"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("tagflow up: the coordinator reports: run failed: federate 'replay' failed"),
            std::string::npos)
      << err;
  expect_no_process_left();
}

TEST_F(ClusterLauncher, ANodeRefusingItsParamsExitsTwoLikeABadFile) {
  behave("replay",
         "echo 'tagflow node replay: cluster.yaml:8: nodes.replay.params: bad' >&2; exit 2");
  std::string err;
  EXPECT_EQ(launch(err), 2);
  EXPECT_NE(err.find("tagflow up: node replay failed (exit code 2)"), std::string::npos) << err;
  EXPECT_NE(err.find("cluster.yaml:8: nodes.replay.params: bad"), std::string::npos) << err;
  expect_no_process_left();
}

TEST_F(ClusterLauncher, SigtermStopsEveryProcessAndExits130) {
  behave("replay", "trap '' TERM");  // ignores SIGTERM: only the SIGKILL after the grace ends it
  auto code = std::async(std::launch::async, [this] { return launch_cluster(options_); });
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (recorded_pids(options_.log_dir).size() < 4 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(recorded_pids(options_.log_dir).size(), 4U);
  ::kill(::getpid(), SIGTERM);  // the launcher's handler is installed while it runs
  EXPECT_EQ(code.get(), 130);
  expect_no_process_left();
}

// Actor mode: the first process to end cleanly ended the run. A process restarted during the run
// and still running 5 s later missed the stop (restarted just before the end, it linked to peers
// already stopping and waits for them to come back); the launcher stops it as Ctrl-C would and
// the run ends as a success.
TEST_F(ClusterLauncher, InActorModeARestartedProcessThatMissedTheStopIsStoppedAndTheRunSucceeds) {
  options_.mode = cluster::Mode::actor;
  std::ofstream(options_.file, std::ios::app) << "restart: {max: 1}\n";
  // Each stand-in copies a result of its own to where the launcher reads it.
  fs::create_directories(dir_ / "results");
  const auto result = [&](const std::string& name, const std::string& kind, const std::string& unit,
                          const std::string& reason) {
    std::ofstream(dir_ / "results" / (name + ".json"))
        << R"({"process": ")" << name << R"(", "mode": "actor", "seconds": 1.0, "stop_reason": ")"
        << reason << R"(", "cutoff": null, "replicas": [{"name": ")" << name << R"(", "kind": ")"
        << kind << R"(", "unit": ")" << unit
        << R"(", "count": 50, "episode_returns": [], "episodes": 0, "evaluations": [],)"
        << R"( "target_reached": false, "updates": 0, "weights_version": 0,)"
        << R"( "final_weights_hash": null, "mean_return": null, "channels": [)"
        << (kind == "sampler" ? R"({"port": "transitions", "channel": 0, "count": 0,)"
                                R"( "hash": "0000000000000000"})"
                              : "")
        << "]}]}";
    return "cp " + (dir_ / "results" / (name + ".json")).string() + " " + options_.log_dir + "/";
  };
  // sampler-0 ends the run once sampler-1 was restarted (1 s after its death).
  behave("sampler-0",
         "sleep 3; " + result("sampler-0", "sampler", "env_steps", "env_steps") + "; exit 0");
  behave("replay", "sleep 3.2; " + result("replay", "replay", "inserts", "") + "; exit 0");
  // sampler-1 dies at once; restarted, it never hears of the stop: only a SIGTERM ends it, and it
  // then writes its result.
  const std::string died = (dir_ / "sampler-1.died").string();
  behave("sampler-1", "if [ ! -f " + died + " ]; then touch " + died + "; kill -9 $$; fi; trap '" +
                          result("sampler-1", "sampler", "env_steps", "signal") +
                          "; exit 0' TERM; sleep 60 & wait");
  std::string err;
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(launch(err), 0) << err;
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_NE(err.find("tagflow up: sampler-1 killed by signal 9; restart 1 of 1"), std::string::npos)
      << err;
  EXPECT_NE(err.find("tagflow up: sampler-1 (restarted) still running 5 s after the run ended "
                     "(sampler-0 ended first): it missed the stop; stopped as Ctrl-C would\n"),
            std::string::npos)
      << err;
  EXPECT_GE(took, 8s);
  EXPECT_LT(took, 50s);  // not the 60 s a hung process gets in reactor mode
  const std::string summary = read_text_file(fs::path(options_.log_dir) / "summary.json");
  EXPECT_NE(summary.find(R"("stop_reason": "env_steps")"), std::string::npos) << summary;
  EXPECT_NE(summary.find(R"("process": "sampler-1")"), std::string::npos) << summary;  // restart
  expect_no_process_left(3);
}

TEST_F(ClusterLauncher, TheLogDirectoryHoldsEveryProcessLog) {
  behave("coordinator", "exit 5");
  std::string err;
  EXPECT_EQ(launch(err), 1);
  EXPECT_NE(err.find("tagflow up: the coordinator failed (exit code 5)"), std::string::npos) << err;
  EXPECT_NE(err.find("tagflow up: host local: coordinator, sampler-0, sampler-1, replay"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("tagflow up: logs in " + options_.log_dir + "/"), std::string::npos) << err;
  for (const std::string name : {"coordinator", "sampler-0", "sampler-1", "replay"}) {
    EXPECT_TRUE(fs::exists(fs::path(options_.log_dir) / (name + ".log"))) << name;
  }
}

TEST_F(ClusterLauncher, ABadClusterFileExitsTwoBeforeStartingAnything) {
  std::ofstream(dir_ / "cluster.yaml") << "cluster: broken\nnodes:\n  sampler: {kind: toaster}\n";
  std::string err;
  EXPECT_EQ(launch(err), 2);
  EXPECT_NE(err.find("cluster.yaml:3"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(options_.log_dir));
}

}  // namespace
}  // namespace tagflow::cli
