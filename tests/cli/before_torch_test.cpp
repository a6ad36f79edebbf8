// `tagflow train`, `tagflow up FILE --placement single` and `tagflow bench` of a LibTorch benchmark
// are parsed and checked by `tagflow` itself, the cluster file loaded, before it hands them to
// tagflow-torch (cli/train_options.hpp, cli/launch/up_single_options.hpp,
// cli/torch_bench_options.hpp), so a refusal costs no LibTorch start. Pointed at a
// tagflow-torch that does not exist (TAGFLOW_TORCH, cli/paths.cpp), `tagflow` shows which command
// lines it refuses itself and which go on: those fail for want of tagflow-torch.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/run_command.hpp"

namespace tagflow::cli {
namespace {

namespace fs = std::filesystem;
using testing::run_command;
using testing::tagflow_binary;

/// A tagflow-torch path where there is none.
std::string missing_torch() {
  const std::string missing = (fs::path(::testing::TempDir()) / "no-tagflow-torch").string();
  fs::remove(missing);
  return missing;
}

/// `tagflow COMMAND` with tagflow-torch at missing_torch().
std::string tagflow_without_torch(const std::string& command) {
  return "TAGFLOW_TORCH=" + missing_torch() + " " + tagflow_binary() + " " + command + " ";
}

using Refusals = std::vector<std::pair<std::string, std::string>>;

/// Each command line of `refused` (ARGS, what the refusal says) exits 2 with its refusal, never
/// trying tagflow-torch.
void expect_refused_here(const std::string& command, const Refusals& refused) {
  for (const auto& [args, says] : refused) {
    const auto r = run_command(tagflow_without_torch(command) + args + " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << args << ": " << r.output;
    EXPECT_EQ(r.output.find("no-tagflow-torch"), std::string::npos) << args << ": " << r.output;
  }
}

/// Each command line of `passing` goes on to tagflow-torch, which is missing: exit 127.
void expect_handed_on(const std::string& command, const std::vector<std::string>& passing) {
  for (const std::string& args : passing) {
    const auto r = run_command(tagflow_without_torch(command) + args + " 2>&1");
    EXPECT_EQ(r.exit_code, 127) << args << ": " << r.output;
    EXPECT_NE(r.output.find("cannot run " + missing_torch()), std::string::npos)
        << args << ": " << r.output;
  }
}

TEST(BeforeTorch, TagflowRefusesABadTrainOptionWithoutStartingTagflowTorch) {
  expect_refused_here(
      "train",
      {{"--steps 0", "tagflow train: --steps: Value 0 not in range 1 to "},
       {"--batch-size 1000000", "--batch-size: Value 1000000 not in range 1 to 65536"},
       {"--seed -1", "--seed"},
       {"--binary-sum-tree", "--prioritized"},
       {"--no-such-option", "--no-such-option"},
       {"--numerics fast", "--numerics"},
       {"--algo ppo", "tagflow train: unknown --algo 'ppo' (known: dqn)"},
       {"--env Nope-v0", "Nope-v0"},
       {"--summary /proc/train.json", "--summary /proc/train.json: cannot write in /proc"}});
  // What passes goes on to tagflow-torch, here missing; so does --help, whose text it prints.
  expect_handed_on("train", {"--steps 10 --env Acrobot-v1", "--help"});
}

TEST(BeforeTorch, TagflowRefusesABadOnePlacementRunWithoutStartingTagflowTorch) {
  const std::string demo = std::string(TAGFLOW_SOURCE_DIR) + "/configs/local.yaml";
  const std::string bad = (fs::path(::testing::TempDir()) / "bad_single.yaml").string();
  std::ofstream(bad) << "cluster: x\nbogus: 1\n";
  expect_refused_here(
      "up", {{demo + " --placement single --workers 0", "tagflow up: --workers: Value 0 not in "},
             {demo + " --placement single --trace", "tagflow up: --trace records the processes"},
             {demo + " --placement single --log-dir x", "--log-dir holds the logs"},
             {demo + " --placement single --mode other", "--mode"},
             {demo + " --placement single --summary /proc/s.json",
              "--summary /proc/s.json: cannot write in /proc"},
             {bad + " --placement single", "tagflow up: " + bad + ":2: bogus: unknown key"},
             {"--placement single", "file is required"}});
  // A file and options that pass go on, as --help does.
  expect_handed_on("up", {demo + " --placement single --quiet", "--placement single --help"});
}

TEST(BeforeTorch, TagflowRefusesABadLibTorchBenchmarkRunWithoutStartingTagflowTorch) {
  expect_refused_here(
      "bench",
      {{"marl --bogus", "tagflow bench: The following argument was not expected: --bogus"},
       {"learner --only tj4",
        "tagflow bench: --only is for `tagflow bench paper` and `tagflow bench marl`, not learner"},
       {"marl --print", "tagflow bench: --print is for `tagflow bench paper`, not marl"},
       {"serve --json /proc/b.json", "--json /proc/b.json: cannot write in /proc"}});
  expect_handed_on("bench", {"marl --quick --only tj4"});
}

// An empty value is refused by every option that takes one (cli/commands.hpp,
// refuse_empty_values), in tagflow's own commands and in those it hands to tagflow-torch:
// `--summary
// ''` would otherwise read as no summary wanted, `--log-dir ''` as the default directory.
TEST(BeforeTorch, AnEmptyValueIsRefusedByEveryOptionThatTakesOne) {
  const std::string demo = std::string(TAGFLOW_SOURCE_DIR) + "/configs/local.yaml";
  expect_refused_here("up", {{demo + " --summary ''", "tagflow up: --summary: an empty value"},
                             {demo + " --log-dir ''", "tagflow up: --log-dir: an empty value"},
                             {"''", "tagflow up: file: an empty value"},
                             {demo + " --placement single --summary ''", "--summary: an empty"}});
  expect_refused_here("train", {{"--summary ''", "tagflow train: --summary: an empty value"},
                                {"--save-policy ''", "--save-policy: an empty value"}});
  expect_refused_here("bench", {{"paper --json ''", "tagflow bench: --json: an empty value"},
                                {"marl --json ''", "tagflow bench: --json: an empty value"}});
  expect_refused_here("coordinator",
                      {{"--config " + demo + " --stats ''", "--stats: an empty value"}});
  expect_refused_here("env", {{"step --env ''", "tagflow env step: --env: an empty value"}});
  expect_refused_here("slurm", {{"''", "tagflow slurm: file: an empty value"}});
  // tagflow-torch run by itself says the same.
  const std::string torch = std::string(TAGFLOW_BIN_DIR) + "/tagflow-torch";
  if (fs::exists(torch)) {
    const auto r = run_command(torch + " train --summary '' 2>&1");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--summary: an empty value"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace tagflow::cli
