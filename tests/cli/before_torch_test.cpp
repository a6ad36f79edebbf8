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

TEST(BeforeTorch, TagflowRefusesABadTrainOptionWithoutStartingTagflowTorch) {
  const std::string missing = missing_torch();
  const std::string tagflow = "TAGFLOW_TORCH=" + missing + " " + tagflow_binary();
  for (const auto& [option, says] : std::vector<std::pair<std::string, std::string>>{
           {"--steps 0", "tagflow train: --steps: Value 0 not in range 1 to "},
           {"--batch-size 1000000", "--batch-size: Value 1000000 not in range 1 to 65536"},
           {"--seed -1", "--seed"},
           {"--binary-sum-tree", "--prioritized"},
           {"--no-such-option", "--no-such-option"},
           {"--numerics fast", "--numerics"},
           {"--algo ppo", "tagflow train: unknown --algo 'ppo' (known: dqn)"},
           {"--env Nope-v0", "Nope-v0"},
           {"--summary /proc/train.json", "--summary /proc/train.json: cannot write in /proc"}}) {
    const auto r = run_command(tagflow + " train " + option + " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << option << ": " << r.output;
    EXPECT_EQ(r.output.find("no-tagflow-torch"), std::string::npos) << option << ": " << r.output;
  }
  // What passes goes on to tagflow-torch, here missing; so does --help, whose text it prints.
  for (const std::string args : {"--steps 10 --env Acrobot-v1", "--help"}) {
    const auto r = run_command(tagflow + " train " + args + " 2>&1");
    EXPECT_EQ(r.exit_code, 127) << args << ": " << r.output;
    EXPECT_NE(r.output.find("cannot run " + missing), std::string::npos)
        << args << ": " << r.output;
  }
}

TEST(BeforeTorch, TagflowRefusesABadOnePlacementRunWithoutStartingTagflowTorch) {
  const std::string missing = missing_torch();
  const std::string up = "TAGFLOW_TORCH=" + missing + " " + tagflow_binary() + " up ";
  const std::string demo = std::string(TAGFLOW_SOURCE_DIR) + "/configs/local.yaml";
  const std::string bad = (fs::path(::testing::TempDir()) / "bad_single.yaml").string();
  std::ofstream(bad) << "cluster: x\nbogus: 1\n";
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {demo + " --placement single --workers 0", "tagflow up: --workers: Value 0 not in "},
           {demo + " --placement single --trace", "tagflow up: --trace records the processes"},
           {demo + " --placement single --log-dir x", "--log-dir holds the logs"},
           {demo + " --placement single --mode other", "--mode"},
           {demo + " --placement single --summary /proc/s.json",
            "--summary /proc/s.json: cannot write in /proc"},
           {bad + " --placement single", "tagflow up: " + bad + ":2: bogus: unknown key"},
           {"--placement single", "file is required"}}) {
    const auto r = run_command(up + args + " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << args << ": " << r.output;
    EXPECT_EQ(r.output.find("no-tagflow-torch"), std::string::npos) << args << ": " << r.output;
  }
  // A file and options that pass go on, as --help does.
  for (const std::string& args :
       {demo + " --placement single --quiet", std::string("--placement single --help")}) {
    const auto r = run_command(up + args + " 2>&1");
    EXPECT_EQ(r.exit_code, 127) << args << ": " << r.output;
    EXPECT_NE(r.output.find("cannot run " + missing), std::string::npos)
        << args << ": " << r.output;
  }
}

TEST(BeforeTorch, TagflowRefusesABadLibTorchBenchmarkRunWithoutStartingTagflowTorch) {
  const std::string missing = missing_torch();
  const std::string bench = "TAGFLOW_TORCH=" + missing + " " + tagflow_binary() + " bench ";
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"marl --bogus", "tagflow bench: The following argument was not expected: --bogus"},
           {"learner --only tj4",
            "tagflow bench: --only is for `tagflow bench paper` and `tagflow bench marl`, not "
            "learner"},
           {"serve --json /proc/b.json", "--json /proc/b.json: cannot write in /proc"}}) {
    const auto r = run_command(bench + args + " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << args << ": " << r.output;
    EXPECT_EQ(r.output.find("no-tagflow-torch"), std::string::npos) << args << ": " << r.output;
  }
  const auto passes = run_command(bench + "marl --quick --only tj4 2>&1");
  EXPECT_EQ(passes.exit_code, 127) << passes.output;
  EXPECT_NE(passes.output.find("cannot run " + missing), std::string::npos) << passes.output;
}

}  // namespace
}  // namespace tagflow::cli
