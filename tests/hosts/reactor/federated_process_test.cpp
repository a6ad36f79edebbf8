// A shortened local cluster run as separate `tagflow node` processes plus `tagflow coordinator`
// (real processes, real sockets) gives the digest of `tagflow up --placement single` on the same
// file, whatever the grouping of replicas into processes; a killed sampler ends every other
// process with exit 4 and an error naming it.
//
// The file is configs/local.yaml stopping at 2400 env steps, its loops closed by `after: 0` as
// shipped.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "common/loopback_ports.hpp"
#include "hosts/run_combine.hpp"
#include "nodes/cluster/process_plan.hpp"
#include "tests/support/cluster_files.hpp"
#include "tests/support/run_command.hpp"

namespace tagflow::hosts {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A base port with base .. base+99 free (the file's ports, shifted by base - 7600) and
/// base+1860 .. base+1959 (their metrics ports), both claimed for this process
/// (common/loopback_ports.hpp).
int free_port_block() {
  std::mt19937 random(static_cast<unsigned>(::getpid()));
  // Below the kernel's ephemeral range: a port there may become an outgoing connection's.
  const int blocks = std::max(1, (ephemeral_port_floor() - 2000 - 20000) / 100);
  for (int attempt = 0; attempt < 50; ++attempt) {
    const int base = 20000 + static_cast<int>(random() % static_cast<unsigned>(blocks)) * 100;
    bool all = true;
    for (int p = base; p < base + 100 && all; ++p) all = loopback_port_free(p);
    for (int p = base + 1860; p < base + 1960 && all; ++p) all = loopback_port_free(p);
    if (all && claim_port_blocks(base, 100) && claim_port_blocks(base + 1860, 100)) return base;
  }
  return 0;
}

/// The shortened local.yaml (2400 env steps, no seconds limit) with its ports moved to the free
/// block at `base`; tests edit the options further.
testing::LocalClusterOptions shortened(int base) {
  testing::LocalClusterOptions options;
  options.keep_seconds_limit = false;
  options.port = [base](int port) { return port - 7600 + base; };
  return options;
}

std::string cluster_file(int base) { return testing::local_cluster_yaml(shortened(base)); }

/// Starts `args` with stdout/stderr into `log`; returns the pid.
pid_t spawn(const std::vector<std::string>& args, const fs::path& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

/// Waits for every pid (killing all of them after `limit`); returns pid -> exit code (-1: killed).
std::map<pid_t, int> wait_all(const std::vector<pid_t>& pids, std::chrono::seconds limit) {
  std::map<pid_t, int> codes;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (codes.size() < pids.size()) {
    for (const pid_t pid : pids) {
      if (codes.count(pid) != 0) continue;
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        codes[pid] = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      for (const pid_t pid : pids) {
        if (codes.count(pid) == 0) ::kill(pid, SIGKILL);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling child exit
  }
  return codes;
}

class FederatedCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = free_port_block();
    ASSERT_NE(base_, 0) << "no free port block";
    dir_ = fs::path(::testing::TempDir()) / ("federated_cluster_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }

  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);  // keep the logs of a failed run
  }

  /// Runs the file as coordinator + one `tagflow node` per process; returns the combined digest.
  std::string run_processes(const std::string& text, const std::string& name) {
    const fs::path file = dir_ / (name + ".yaml");
    std::ofstream(file) << text;
    const cluster::ClusterConfig config = cluster::load_cluster_config(file.string());
    const std::string bin = testing::tagflow_binary();
    std::vector<pid_t> pids;
    std::map<pid_t, std::string> names;
    pids.push_back(
        spawn({bin, "coordinator", "--config", file.string()}, dir_ / (name + "-coordinator.log")));
    names[pids.back()] = "coordinator";
    std::vector<std::string> processes;
    for (const cluster::ProcessPlan& p : cluster::plan_processes(config)) {
      processes.push_back(p.name);
      pids.push_back(spawn({bin, "node", "--config", file.string(), "--name", p.name, "--result",
                            (dir_ / (name + "-" + p.name + ".json")).string()},
                           dir_ / (name + "-" + p.name + ".log")));
      names[pids.back()] = p.name;
    }
    for (const auto& [pid, code] : wait_all(pids, std::chrono::seconds(120))) {
      EXPECT_EQ(code, 0) << names[pid] << " failed:\n"
                         << read(dir_ / (name + "-" + names[pid] + ".log"));
    }
    std::vector<ProcessResult> results;
    for (const std::string& p : processes) {
      results.push_back(ProcessResult::from_json(read(dir_ / (name + "-" + p + ".json"))));
      EXPECT_TRUE(results.back().cutoff.has_value()) << p;
    }
    const RunSummary summary = combine_results(config, results, "process");
    EXPECT_EQ(summary.stop_reason, "env_steps");
    EXPECT_GE(summary.env_steps, 2400);
    EXPECT_GT(summary.updates, 0);
    return summary.digest_hex();
  }

  std::string run_single(const std::string& text) {
    const fs::path file = dir_ / "single.yaml";
    std::ofstream(file) << text;
    const fs::path summary = dir_ / "single.json";
    const auto run =
        testing::run_command(testing::tagflow_binary() + " up " + file.string() +
                             " --placement single --quiet --summary " + summary.string() + " 2>&1");
    EXPECT_EQ(run.exit_code, 0) << run.output;
    const std::string json = read(summary);
    const auto at = json.find("\"digest\": \"");
    if (at == std::string::npos) {
      ADD_FAILURE() << json;
      return "";
    }
    return json.substr(at + 11, 16);
  }

  int base_ = 0;
  fs::path dir_;
};

TEST_F(FederatedCluster, OneProcessPerReplicaAndOtherGroupingsGiveTheSingleProcessDigest) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  const std::string text = cluster_file(base_);
  const std::string single = run_single(text);
  ASSERT_EQ(single.size(), 16U);

  EXPECT_EQ(run_processes(text, "each"), single);

  // replay + learner in one process, the samplers in another, inference alone.
  testing::LocalClusterOptions grouped = shortened(base_);
  grouped.process = {{"replay", "trainer"}, {"learner", "trainer"}, {"sampler", "actors"}};
  EXPECT_EQ(run_processes(testing::local_cluster_yaml(grouped), "grouped"), single);

  // Everything in one process (still one federate per replica).
  testing::LocalClusterOptions one = shortened(base_);
  for (const char* kind : {"sampler", "replay", "learner", "inference"}) {
    one.process[kind] = "everything";
  }
  EXPECT_EQ(run_processes(testing::local_cluster_yaml(one), "one"), single);
}

TEST_F(FederatedCluster, AKilledSamplerEndsTheOthersWithExitFourNamingIt) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  testing::LocalClusterOptions endless = shortened(base_);
  endless.stop = "env_steps: 1000000000";
  const std::string text = testing::local_cluster_yaml(endless);
  const fs::path file = dir_ / "killed.yaml";
  std::ofstream(file) << text;
  const std::string bin = testing::tagflow_binary();
  std::map<std::string, pid_t> pids;
  pids["coordinator"] =
      spawn({bin, "coordinator", "--config", file.string()}, dir_ / "killed-coordinator.log");
  for (const char* p : {"sampler-0", "sampler-1", "replay", "learner", "inference"}) {
    pids[p] = spawn({bin, "node", "--config", file.string(), "--name", p},
                    dir_ / (std::string("killed-") + p + ".log"));
  }
  // Kill sampler-1 once the federation runs (every process has reported joining).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const auto all_joined = [&] {
    for (const char* p : {"sampler-0", "sampler-1", "replay", "learner", "inference"}) {
      if (read(dir_ / (std::string("killed-") + p + ".log")).find("joined") == std::string::npos)
        return false;
    }
    return true;
  };
  while (!all_joined() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // polling the logs
  }
  ASSERT_TRUE(all_joined()) << read(dir_ / "killed-coordinator.log");
  ::kill(pids["sampler-1"], SIGKILL);
  std::vector<pid_t> all;
  for (const auto& [name, pid] : pids) all.push_back(pid);
  const std::map<pid_t, int> codes = wait_all(all, std::chrono::seconds(60));
  for (const char* p : {"sampler-0", "replay", "learner", "inference"}) {
    const std::string log = read(dir_ / (std::string("killed-") + p + ".log"));
    EXPECT_EQ(codes.at(pids[p]), 4) << p << ":\n" << log;
    EXPECT_NE(log.find("tagflow node " + std::string(p) + ":"), std::string::npos) << log;
    EXPECT_NE(log.find("sampler-1"), std::string::npos) << p << ":\n" << log;
  }
  EXPECT_EQ(codes.at(pids["coordinator"]), 1);
  EXPECT_NE(read(dir_ / "killed-coordinator.log").find("sampler-1"), std::string::npos);
}

TEST_F(FederatedCluster, AnUnknownProcessNameExitsTwoNamingIt) {
  const fs::path file = dir_ / "unknown.yaml";
  std::ofstream(file) << cluster_file(base_);
  const auto run = testing::run_command(testing::tagflow_binary() + " node --config " +
                                        file.string() + " --name nobody 2>&1");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("tagflow node nobody: no process 'nobody'"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("sampler-0"), std::string::npos) << run.output;
}

TEST_F(FederatedCluster, ABadParamExitsTwoBeforeJoining) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  testing::LocalClusterOptions bad = shortened(base_);
  bad.params["inference"] = "max_batch: 0";
  const std::string text = testing::local_cluster_yaml(bad);
  const fs::path file = dir_ / "bad.yaml";
  std::ofstream(file) << text;
  const auto run = testing::run_command(testing::tagflow_binary() + " node --config " +
                                        file.string() + " --name inference 2>&1");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("tagflow node inference:"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("max_batch"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace tagflow::hosts
