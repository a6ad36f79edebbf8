// Elasticity across processes: a cluster in actor mode runs as separate `tagflow node` processes;
// a sampler joins it mid-run (`--join`) and leaves on SIGTERM; the learner keeps updating after it
// left and the run ends normally (stop: seconds), every process exiting 0.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "nodes/process_result.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The latest `key=N` value in the progress lines of a node's log (-1 if none yet).
long long progress_value(const fs::path& log, const std::string& replica, const std::string& key) {
  const std::string text = read_file(log);
  const std::string needle = " " + replica + " " + key + "=";
  const auto at = text.rfind(needle);
  if (at == std::string::npos) return -1;
  return std::atoll(text.c_str() + at + needle.size());
}

bool wait_for(const std::function<bool()>& condition, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return condition();
}

class Process {
 public:
  Process(const std::vector<std::string>& args, const fs::path& log) {
    pid_ = ::fork();
    if (pid_ == 0) {
      std::freopen(log.c_str(), "w", stderr);
      std::freopen(log.c_str(), "a", stdout);
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      std::_Exit(127);
    }
  }
  ~Process() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  void signal(int sig) const { ::kill(pid_, sig); }
  // Exit status, or -1 when it did not exit within `limit`.
  int wait(std::chrono::seconds limit) {
    const auto deadline = Clock::now() + limit;
    while (Clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
};

TEST(ActorElasticity, SamplerJoinsAndLeavesWhileTheLearnerKeepsGoing) {
  const fs::path dir =
      fs::temp_directory_path() / ("tagflow-elastic-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const int base = 21000 + (::getpid() % 400) * 20;
  const auto port = [&](int offset) { return std::to_string(base + offset); };
  std::ofstream(dir / "cluster.yaml")
      << "cluster: elastic\nmode: actor\nseed: 3\n"
         "hosts:\n  local: {address: 127.0.0.1}\n"
         "coordinator: {host: local, port: " +
             port(0) +
             "}\n"
             "nodes:\n"
             "  sampler: {kind: sampler, replicas: 1, host: local, data_port: " +
             port(1) + ", metrics_port: " + port(10) +
             ", params: {num_envs: 8, policy: inference}}\n"
             "  replay: {kind: replay, host: local, process: core, data_port: " +
             port(4) +
             ", params: {min_size: 200, samples_per_insert: 8, batch_size: 32}}\n"
             "  learner: {kind: learner, host: local, process: core, data_port: " +
             port(5) + ", metrics_port: " + port(15) +
             ", params: {hidden: \"32,32\", eval_every: 100000}}\n"
             "  inference: {kind: inference, host: local, process: core, data_port: " +
             port(6) +
             ", params: {max_wait: 1ms}}\n"
             "connections:\n"
             "  - {from: sampler.observations, to: inference.observations}\n"
             "  - {from: inference.actions, to: sampler.actions, after: 0}\n"
             "  - {from: sampler.transitions, to: replay.transitions}\n"
             "  - {from: replay.batches, to: learner.batches}\n"
             "  - {from: learner.priorities, to: replay.priorities, after: 0}\n"
             "  - {from: learner.weights, to: inference.weights, after: 0}\n"
             "stop: {seconds: 20}\n";
  const std::string tagflow = std::string(TAGFLOW_BIN_DIR) + "/tagflow";
  const std::string config = (dir / "cluster.yaml").string();
  const auto node = [&](const std::string& name, bool join) {
    std::vector<std::string> args{tagflow,  "node", "--config", config,
                                  "--name", name,   "--result", (dir / (name + ".json")).string()};
    if (join) args.push_back("--join");
    return args;
  };
  Process core(node("core", false), dir / "core.log");
  Process sampler0(node("sampler", false), dir / "sampler.log");
  ASSERT_TRUE(wait_for([&] { return progress_value(dir / "core.log", "learner", "updates") > 0; },
                       std::chrono::seconds(60)))
      << "the learner never updated; core log:\n"
      << read_file(dir / "core.log");

  // A second sampler joins the running cluster, steps, and leaves on SIGTERM.
  Process joiner(node("sampler-1", true), dir / "sampler-1.log");
  ASSERT_TRUE(wait_for(
      [&] { return progress_value(dir / "sampler-1.log", "sampler-1", "env_steps") >= 800; },
      std::chrono::seconds(30)))
      << "the joined sampler did not step; its log:\n"
      << read_file(dir / "sampler-1.log");
  joiner.signal(SIGTERM);
  EXPECT_EQ(joiner.wait(std::chrono::seconds(10)), 0) << read_file(dir / "sampler-1.log");

  // The run goes on to its `seconds` stop; everyone ends normally.
  EXPECT_EQ(sampler0.wait(std::chrono::seconds(40)), 0) << read_file(dir / "sampler.log");
  EXPECT_EQ(core.wait(std::chrono::seconds(40)), 0) << read_file(dir / "core.log");

  const auto joined = tagflow::nodes::ProcessResult::from_json(read_file(dir / "sampler-1.json"));
  ASSERT_EQ(joined.replicas.size(), 1U);
  EXPECT_EQ(joined.mode, "actor");
  EXPECT_GE(joined.replicas[0].count, 800);
  // The weights that chose the joined sampler's last actions: the learner's updates when it left.
  const auto updates_at_leave = static_cast<double>(joined.replicas[0].weights_version);
  EXPECT_GT(updates_at_leave, 0);
  const auto core_result = tagflow::nodes::ProcessResult::from_json(read_file(dir / "core.json"));
  EXPECT_EQ(core_result.stop_reason, "seconds");
  for (const auto& r : core_result.replicas) {
    if (r.kind == "learner") {
      EXPECT_GT(static_cast<double>(r.updates), updates_at_leave + 50);
    }
  }
  fs::remove_all(dir);
}

}  // namespace
