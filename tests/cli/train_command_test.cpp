// `tagflow train` as users run it: handed to tagflow-torch, prints progress and a summary,
// writes the run summary JSON, reproduces its digest.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/run_command.hpp"

namespace tagflow::cli {
namespace {

using testing::run_command;
using testing::tagflow_binary;

/// `tagflow train` with `env` (VAR=value ...) in its environment.
nlohmann::json run_env(const std::string& env, const std::string& name, const std::string& extra) {
  const std::string path = ::testing::TempDir() + name;
  std::filesystem::remove(path);
  const auto result = run_command((env.empty() ? "" : "env " + env + " ") + tagflow_binary() +
                                  " train --env CartPole-v1 --algo dqn --seed 5 --steps 2000"
                                  " --hidden 32 --learning-starts 300 --train-every 50"
                                  " --updates-per-round 10 --eval-episodes 3 --summary " +
                                  path + " " + extra + " 2>&1");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("BLAS: "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("mean_return "), std::string::npos) << result.output;
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

nlohmann::json train(const std::string& name, const std::string& extra) {
  return run_env("", name, extra);
}

TEST(TrainCommand, WritesTheRunSummaryAndReproducesItsDigest) {
  const nlohmann::json first = train("train_a.json", "");
  const nlohmann::json second = train("train_b.json", "--quiet");
  for (const char* key : {"mean_return", "env_steps", "seconds", "digest", "eval_returns"}) {
    EXPECT_TRUE(first.contains(key)) << key;
  }
  EXPECT_EQ(first["env_steps"], 2000);
  EXPECT_EQ(first["eval_returns"].size(), 3U);
  EXPECT_EQ(first["digest"].get<std::string>().size(), 16U);
  EXPECT_EQ(first["digest"], second["digest"]);
  EXPECT_EQ(first["mean_return"], second["mean_return"]);
}

TEST(TrainCommand, PinsTheKernelsUnlessToldNative) {
  // The digest must not depend on the kernels a user's shell asks for under portable (the
  // default), and does under native (common/numerics.hpp).
  const nlohmann::json portable = train("train_portable.json", "");
  const nlohmann::json old_cpu = run_env(
      "OPENBLAS_CORETYPE=Sandybridge ATEN_CPU_CAPABILITY=default", "train_old_cpu.json", "");
  EXPECT_EQ(portable["numerics"]["mode"], "portable");
  EXPECT_EQ(old_cpu["digest"], portable["digest"]);
  EXPECT_EQ(old_cpu["numerics"], portable["numerics"]);
  const nlohmann::json native = run_env("OPENBLAS_CORETYPE=Sandybridge ATEN_CPU_CAPABILITY=default",
                                        "train_native.json", "--numerics native");
  EXPECT_EQ(native["numerics"]["mode"], "native");
  EXPECT_EQ(native["numerics"]["blas_core"], "Sandybridge");
  EXPECT_EQ(native["numerics"]["aten_capability"], "default");
}

TEST(TrainCommand, UnknownAlgorithmOrEnvironmentIsAClearError) {
  const auto algo = run_command(tagflow_binary() + " train --algo ppo 2>&1");
  EXPECT_EQ(algo.exit_code, 2) << algo.output;
  EXPECT_NE(algo.output.find("unknown --algo 'ppo'"), std::string::npos) << algo.output;
  const auto env = run_command(tagflow_binary() + " train --env Nope-v0 --steps 10 2>&1");
  EXPECT_EQ(env.exit_code, 2) << env.output;
  EXPECT_NE(env.output.find("Nope-v0"), std::string::npos) << env.output;
}

// A negative seed wrapped to 2^64 - 1 and trained; a sum tree without prioritized replay was
// taken and ignored. Both are bad options now, refused before training.
TEST(TrainCommand, ANegativeSeedOrATreeWithoutPrioritizedReplayIsRefused) {
  const auto seed = run_command(tagflow_binary() + " train --seed -1 --steps 10 2>&1");
  EXPECT_EQ(seed.exit_code, 2) << seed.output;
  EXPECT_NE(seed.output.find("--seed"), std::string::npos) << seed.output;
  const auto tree = run_command(tagflow_binary() + " train --binary-sum-tree --steps 10 2>&1");
  EXPECT_EQ(tree.exit_code, 2) << tree.output;
  EXPECT_NE(tree.output.find("--prioritized"), std::string::npos) << tree.output;
}

// Out-of-range numbers trained (an epsilon of 1.5, a negative clipping norm ignored) or failed
// naming a setting no option has (`TrainConfig.replay_capacity is out of range` for a batch of a
// million); each is refused naming the option and its range, before training.
TEST(TrainCommand, EveryNumberIsRefusedOutOfItsRangeNamingTheOption) {
  for (const auto& [option, says] : std::vector<std::pair<std::string, std::string>>{
           {"--steps 0", "tagflow train: --steps: Value 0 not in range 1 to "},
           {"--batch-size 1000000", "--batch-size: Value 1000000 not in range 1 to 65536"},
           {"--epsilon-end 1.5", "--epsilon-end: Value 1.5 not in range 0"},
           {"--max-grad-norm -1", "--max-grad-norm: Value -1 not in range 0"},
           {"--epsilon-end nan", "--epsilon-end: not a finite number: nan"},  // NaN passes ranges
           {"--max-grad-norm inf", "--max-grad-norm: not a finite number: inf"},
           {"--final-lr-fraction 5", "--final-lr-fraction: Value 5 not in range"},
           {"--eval-every -1", "--eval-every: Value -1 not in range 0 to "},
           {"--target-sync 0", "--target-sync: Value 0 not in range 1 to "}}) {
    const auto r = run_command(tagflow_binary() + " train " + option + " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << option << ": " << r.output;
  }
}

TEST(TrainCommand, TopLevelHelpListsTrain) {
  const auto help = run_command(tagflow_binary() + " --help 2>&1");
  EXPECT_NE(help.output.find("train"), std::string::npos) << help.output;
}

}  // namespace
}  // namespace tagflow::cli
