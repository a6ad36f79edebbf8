// Elasticity across processes: `tagflow up` runs a cluster in actor mode as separate `tagflow node`
// processes; a sampler joins it mid-run (`tagflow node --join`) and leaves on SIGTERM. The
// launcher's progress line counts the joined sampler while it is in and no longer once it left;
// the learner keeps updating after it left; the run ends normally (stop: seconds) and the
// summary's env steps include the joined sampler's (a node entry of its own).
#include <gtest/gtest.h>
#include <algorithm>

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

#include <nlohmann/json.hpp>

#include "common/loopback_ports.hpp"
#include "nodes/kind/process_result.hpp"
#include "tests/support/cluster_files.hpp"

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
  // SIGTERM first: the launcher then stops the processes it started.
  ~Process() {
    if (pid_ <= 0 || exited_) return;
    ::kill(pid_, SIGTERM);
    if (wait(std::chrono::seconds(10)) < 0) {
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

// The newest weights version on the launcher's progress lines (-1 before the first).
long long newest_weights(const fs::path& log) {
  const std::string text = read_file(log);
  const std::string needle = " | weights v";
  const auto at = text.rfind(needle);
  return at == std::string::npos ? -1 : std::atoll(text.c_str() + at + needle.size());
}

// Lines of `text` holding `part`.
int lines_with(const std::string& text, const std::string& part) {
  int count = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) count += line.find(part) != std::string::npos;
  return count;
}

TEST(ActorElasticity, SamplerJoinsAndLeavesWhileTheLearnerKeepsGoingAndTheLauncherShowsIt) {
  const fs::path dir =
      fs::temp_directory_path() / ("tagflow-elastic-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Free and claimed from the other tests running beside this one (common/loopback_ports.hpp).
  const int base = tagflow::free_loopback_port_range(20);
  ASSERT_GT(base, 0) << "no 20 free loopback ports in a row";
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
             port(4) + ", metrics_port: " + port(14) +
             ", params: {min_size: 200, samples_per_insert: 8, batch_size: 32}}\n"
             "  learner: {kind: learner, host: local, process: core, data_port: " +
             port(5) + ", metrics_port: " + port(15) +
             ", params: {hidden: \"32,32\", eval_every: 100000}}\n"
             "  inference: {kind: inference, host: local, process: core, data_port: " +
             port(6) + ", metrics_port: " + port(16) + ", params: {max_wait: 1ms}}\n" +
             tagflow::testing::kLocalClusterConnections + "stop: {seconds: 20}\n";
  const std::string tagflow = std::string(TAGFLOW_BIN_DIR) + "/tagflow";
  const std::string config = (dir / "cluster.yaml").string();
  const fs::path logs = dir / "logs";
  // stderr is a file, so the launcher prints its progress line as a new line every second.
  Process up({tagflow, "up", config, "--log-dir", logs.string(), "--summary",
              (dir / "summary.json").string()},
             dir / "up.log");
  // The launcher's children log quietly; its own progress line shows the learner's weights.
  ASSERT_TRUE(
      wait_for([&] { return newest_weights(dir / "up.log") > 0; }, std::chrono::seconds(60)))
      << "the learner never updated; launcher:\n"
      << read_file(dir / "up.log") << "\ncore log:\n"
      << read_file(logs / "core.log");

  // A second sampler joins the running cluster, steps, and the launcher counts it.
  // It holds the run's keys (the launcher minted them: the cluster is closed, TLS).
  Process joiner(
      {tagflow, "node", "--config", config, "--name", "sampler-1", "--result",
       (dir / "sampler-1.json").string(), "--join", "--run-keys", (logs / "keys").string()},
      dir / "sampler-1.log");
  ASSERT_TRUE(wait_for(
      [&] { return progress_value(dir / "sampler-1.log", "sampler-1", "env_steps") >= 800; },
      std::chrono::seconds(30)))
      << "the joined sampler did not step; its log:\n"
      << read_file(dir / "sampler-1.log");
  ASSERT_TRUE(
      wait_for([&] { return lines_with(read_file(dir / "up.log"), "samplers 2/2 (1 joined)") > 0; },
               std::chrono::seconds(10)))
      << "the progress line never showed the joined sampler:\n"
      << read_file(dir / "up.log");
  // Two more rounds: the launcher has seen at least the 800 steps the joiner logged.
  const int rounds = lines_with(read_file(dir / "up.log"), " | samplers ");
  ASSERT_TRUE(
      wait_for([&] { return lines_with(read_file(dir / "up.log"), " | samplers ") >= rounds + 2; },
               std::chrono::seconds(10)));
  joiner.signal(SIGTERM);
  EXPECT_EQ(joiner.wait(std::chrono::seconds(10)), 0) << read_file(dir / "sampler-1.log");

  // The run goes on to its `seconds` stop; the progress line no longer counts the one that left.
  EXPECT_EQ(up.wait(std::chrono::seconds(40)), 0) << read_file(dir / "up.log");
  const std::string progress = read_file(dir / "up.log");
  const auto last_joined = progress.rfind("(1 joined)");
  ASSERT_NE(last_joined, std::string::npos);
  EXPECT_NE(progress.find("samplers 1/1\n", last_joined), std::string::npos) << progress;

  const auto joined = tagflow::hosts::ProcessResult::from_json(read_file(dir / "sampler-1.json"));
  ASSERT_EQ(joined.replicas.size(), 1U);
  EXPECT_EQ(joined.mode, "actor");
  EXPECT_GE(joined.replicas[0].count, 800);
  // The weights that chose the joined sampler's last actions: the learner's updates when it left.
  const auto updates_at_leave = static_cast<double>(joined.replicas[0].weights_version);
  EXPECT_GT(updates_at_leave, 0);
  const auto core_result = tagflow::hosts::ProcessResult::from_json(read_file(logs / "core.json"));
  EXPECT_EQ(core_result.stop_reason, "seconds");
  const auto learner = std::find_if(core_result.replicas.begin(), core_result.replicas.end(),
                                    [](const auto& r) { return r.kind == "learner"; });
  ASSERT_NE(learner, core_result.replicas.end()) << "core.json has no learner";
  EXPECT_GT(static_cast<double>(learner->updates), updates_at_leave + 50);

  // The summary: the joined sampler is a node of its own, with the steps the launcher last saw
  // (at least the 800 it had logged before the last two rounds, at most what it did), and the
  // env steps are those of both samplers.
  const nlohmann::json summary = nlohmann::json::parse(read_file(dir / "summary.json"));
  ASSERT_TRUE(summary.at("nodes").contains("sampler-1")) << summary.dump(2);
  const nlohmann::json& entry = summary.at("nodes").at("sampler-1");
  EXPECT_EQ(entry.at("kind"), "sampler");
  EXPECT_GE(entry.at("count").get<std::int64_t>(), 800);
  EXPECT_LE(entry.at("count").get<std::int64_t>(), joined.replicas[0].count);
  const auto file_sampler =
      tagflow::hosts::ProcessResult::from_json(read_file(logs / "sampler.json"));
  ASSERT_EQ(file_sampler.replicas.size(), 1U);
  EXPECT_EQ(summary.at("env_steps").get<std::int64_t>(),
            file_sampler.replicas[0].count + entry.at("count").get<std::int64_t>());
  EXPECT_NE(read_file(dir / "up.log").find("sampler-1 (joined): "), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
