// Multi-agent clusters end to end through `tagflow up`, as a user runs them:
//   - configs/marl-serve.yaml (TrafficJunction10-v1, ten policies on two inference servers),
//     shortened, gives one digest on every run and in every placement: one process, one process
//     per replica, and both servers grouped into one process;
//   - a shortened configs/marl.yaml trains in both modes (reactor mode: the same digest in one
//     process and as processes), its summary carries the evaluation beside random play and the
//     exported policies, and a serve file loads those files back;
//   - shortened configs/marl-vdn.yaml and configs/marl-per-agent.yaml give one digest in one
//     process and as processes;
//   - a policy file that does not fit is refused at start, naming the policy.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/run_command.hpp"
#include "tests/support/shipped_config.hpp"

namespace tagflow::hosts {
namespace {

/// The 1-based line of `text` that begins with `prefix` (0 when none does).
int line_of(const std::string& text, const std::string& prefix) {
  int line = 1;
  for (std::size_t at = 0; at < text.size(); ++line) {
    if (text.compare(at, prefix.size(), prefix) == 0) return line;
    const std::size_t end = text.find('\n', at);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return 0;
}

namespace fs = std::filesystem;

using testing::read_text_file;

/// The shipped file `name` with each (from, to) edit applied (an edit that finds nothing fails),
/// on free ports of its own: tests of this file run beside each other.
std::string shipped(const std::string& name,
                    const std::vector<std::pair<std::string, std::string>>& edits) {
  std::string text = read_text_file(fs::path(TAGFLOW_SOURCE_DIR) / "configs" / name);
  for (const auto& [from, to] : edits) testing::replace_once(text, from, to, name);
  return testing::on_free_ports(text, name);
}

class MarlCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tagflow_marl_cluster_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Runs `text` with `tagflow up ARGS` and returns its summary (empty on failure).
  nlohmann::json up(const std::string& label, const std::string& text, const std::string& args) {
    const fs::path file = dir_ / (label + ".yaml");
    std::ofstream(file) << text;
    const fs::path summary = dir_ / (label + ".json");
    // Processes write their logs in DIR/LABEL-logs, a new directory per run (one process writes
    // none).
    const std::string logs = args.find("single") == std::string::npos
                                 ? " --log-dir " + (dir_ / (label + "-logs")).string()
                                 : std::string();
    const auto run =
        testing::run_command(testing::tagflow_binary() + " up " + file.string() + " " + args +
                             " --quiet --summary " + summary.string() + logs + " 2>&1");
    EXPECT_EQ(run.exit_code, 0) << label << ":\n" << run.output;
    if (run.exit_code != 0) return {};
    return nlohmann::json::parse(read_text_file(summary));
  }

  fs::path dir_;
};

TEST_F(MarlCluster, TheServeFileGivesOneDigestOnEveryRunAndInEveryPlacement) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "inference needs tagflow-torch";
  // The shipped file stops on wall time only; the test adds a step limit.
  const std::string serve =
      shipped("marl-serve.yaml", {{"seconds: 3600", "env_steps: 400\n  seconds: 3600"}});
  const nlohmann::json single = up("single", serve, "--placement single");
  ASSERT_FALSE(single.empty());
  EXPECT_EQ(single["env_steps"], 400);
  EXPECT_EQ(single["stop_reason"], "env_steps");
  const std::string digest = single["digest"];
  EXPECT_EQ(up("again", serve, "--placement single")["digest"], digest);
  EXPECT_EQ(up("processes", serve, "")["digest"], digest);
  const std::string grouped =
      shipped("marl-serve.yaml", {{"seconds: 3600", "env_steps: 400\n  seconds: 3600"},
                                  {"    replicas: 2 ", "    process: servers\n    replicas: 2 "}});
  EXPECT_EQ(up("grouped", grouped, "")["digest"], digest);
  // The servers answered every agent: 400 joint steps of ten agents.
  EXPECT_EQ(single["nodes"]["inference-0"]["count"].get<int>() +
                single["nodes"]["inference-1"]["count"].get<int>(),
            4000);
}

// Actor mode as processes: the servers connect to the env node one by one, and every one of them
// must be asked in the first round; the stop the env node decides reaches both servers, the one
// whose answer completed the last step too, so the run ends at its step limit.
TEST_F(MarlCluster, ActorModeAsProcessesAsksEveryServerAndEndsAtItsStepLimit) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "inference needs tagflow-torch";
  const std::string serve = shipped(
      "marl-serve.yaml",
      {{"mode: reactor", "mode: actor"}, {"seconds: 3600", "env_steps: 300\n  seconds: 600"}});
  const nlohmann::json summary = up("actor-processes", serve, "");
  ASSERT_FALSE(summary.empty());
  EXPECT_EQ(summary["env_steps"], 300);
  EXPECT_EQ(summary["stop_reason"], "env_steps");
  // Each server answered its five cars at every joint step, and stopped with the env node.
  for (const char* server : {"inference-0", "inference-1"}) {
    EXPECT_EQ(summary["nodes"][server]["count"], 1500) << server;
    const nlohmann::json process = nlohmann::json::parse(
        read_text_file(dir_ / "actor-processes-logs" / (std::string(server) + ".json")));
    EXPECT_EQ(process["stop_reason"], "env_steps") << server;
  }
}

TEST_F(MarlCluster, TrainingInBothModesExportsPoliciesThatAServeFileLoadsBack) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "learners need tagflow-torch";
  const fs::path exported = dir_ / "policies";
  for (const std::string mode : {"reactor", "actor"}) {
    const std::string train = shipped(
        "marl.yaml", {{"mode: reactor", "mode: " + mode},
                      {"env_steps: 250000", "env_steps: 1500"},
                      {"eval_every: 25000, eval_episodes: 20", "eval_every: 0, eval_episodes: 3"},
                      {"min_size: 500", "min_size: 100"},
                      {"export_dir: runs/marl-policies", "export_dir: " + exported.string()}});
    const nlohmann::json summary = up("train-" + mode, train, "--placement single");
    ASSERT_FALSE(summary.empty()) << mode;
    EXPECT_EQ(summary["env_steps"], 1500) << mode;
    EXPECT_GT(summary["updates"].get<int>(), 0) << mode;
    const nlohmann::json& figures = summary["multi_agent"];
    EXPECT_EQ(figures["episodes"], 3) << mode;
    EXPECT_EQ(summary["mean_return"], figures["mean_return"]) << mode;
    // The random policy plays the same seeds in both modes.
    EXPECT_LT(figures["random_return"].get<double>(), 0.0) << mode;
    EXPECT_GE(figures["random_collisions_per_episode"].get<double>(), 0.0) << mode;
    // Success: an episode without a collision; three episodes give thirds.
    for (const char* rate : {"success_rate", "random_success_rate"}) {
      const double value = figures[rate].get<double>();
      EXPECT_GE(value, 0.0) << mode << " " << rate;
      EXPECT_LE(value, 1.0) << mode << " " << rate;
      EXPECT_NEAR(value * 3.0, std::round(value * 3.0), 1e-9) << mode << " " << rate;
    }
    if (figures["collisions_per_episode"].get<double>() == 0.0) {
      EXPECT_EQ(figures["success_rate"].get<double>(), 1.0) << mode;
    }
    if (figures["success_rate"].get<double>() == 1.0) {
      EXPECT_EQ(figures["collisions_per_episode"].get<double>(), 0.0) << mode;
    }
    // One policy shared by the four cars: one file.
    ASSERT_EQ(summary["policies"].size(), 1U) << mode;
    EXPECT_EQ(summary["policies"]["car"], (exported / "car.pt").string());
    EXPECT_TRUE(fs::is_regular_file(exported / "car.pt"));
    EXPECT_EQ(summary["digest_reproducible"], mode == "reactor");
    if (mode == "reactor") {
      // As processes (the env node, the server, the replays and learners grouped in one): the
      // learners train the same weights, whatever process they share.
      EXPECT_EQ(up("train-processes", train, "")["digest"], summary["digest"]);
    }
  }

  // The exported file served: a TrafficJunction4-v1 serve file naming it for every car, whose node
  // gives the policy the same input as marl.yaml's (time_input, then the car's index).
  const std::string policies =
      "policies:\n  car: {hidden: \"64\", torchscript: " + (exported / "car.pt").string() + "}\n";
  const std::string serve =
      shipped("marl-serve.yaml",
              {{"policies:\n  car: {hidden: \"64\", per_agent: true}\n", policies},
               {"env: TrafficJunction10-v1", "env: TrafficJunction4-v1, time_input: true"},
               {"replicas: 2", "replicas: 1"},  // one policy: one server
               {"seconds: 3600", "env_steps: 200\n  seconds: 3600"}});
  const nlohmann::json served = up("serve-exported", serve, "--placement single");
  ASSERT_FALSE(served.empty());
  EXPECT_EQ(served["env_steps"], 200);
}

// configs/marl-vdn.yaml (joint transitions to one VDN learner) and configs/marl-per-agent.yaml
// (four learners), shortened: each gives one digest in one process and as processes.
TEST_F(MarlCluster, TheVdnAndPerCarFilesTrainToOneDigestInOneProcessAndAsProcesses) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "learners need tagflow-torch";
  const fs::path exported = dir_ / "policies";
  for (const std::string name : {"marl-vdn.yaml", "marl-per-agent.yaml"}) {
    const bool vdn = name == "marl-vdn.yaml";
    const std::string train = shipped(
        name,
        {{vdn ? "env_steps: 250000" : "env_steps: 500000", "env_steps: 1500"},
         {"eval_every: 50000, eval_episodes: 20", "eval_every: 0, eval_episodes: 3"},
         {"min_size: 500", "min_size: 100"},
         {vdn ? "runs/marl-vdn-policies" : "runs/marl-per-agent-policies", exported.string()}});
    const nlohmann::json single = up("single", train, "--placement single");
    ASSERT_FALSE(single.empty()) << name;
    EXPECT_EQ(single["env_steps"], 1500) << name;
    EXPECT_GT(single["updates"].get<int>(), 0) << name;
    EXPECT_EQ(single["policies"].size(), vdn ? 1U : 4U) << name;
    EXPECT_EQ(up("processes-" + name, train, "")["digest"], single["digest"]) << name;
  }
}

TEST_F(MarlCluster, APolicyFileThatDoesNotFitIsRefusedAtStartNamingThePolicy) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "inference needs tagflow-torch";
  std::ofstream(dir_ / "not-a-policy.pt") << "not a TorchScript file";
  const std::string text =
      shipped("marl-serve.yaml", {{"policies:\n  car: {hidden: \"64\", per_agent: true}\n",
                                   "policies:\n  car: {hidden: \"64\"}\n"
                                   "  odd: {torchscript: " +
                                       (dir_ / "not-a-policy.pt").string() +
                                       "}\n"
                                       "agents: {3: odd, \"*\": car}\n"}});
  const fs::path file = dir_ / "misfit.yaml";
  std::ofstream(file) << text;
  const auto run = testing::run_command(testing::tagflow_binary() + " up " + file.string() +
                                        " --placement single --quiet 2>&1");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  // The file, the line of odd's torchscript and its key.
  const std::string where = file.string() + ":" + std::to_string(line_of(text, "  odd: ")) +
                            ": policies.odd.torchscript: ";
  EXPECT_NE(run.output.find(where), std::string::npos) << where << "\n" << run.output;
}

}  // namespace
}  // namespace tagflow::hosts
