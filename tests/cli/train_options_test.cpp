// `tagflow train`'s options are parsed and checked by `tagflow` itself before it hands the command
// to tagflow-torch (cli/train_options.hpp), so a refusal costs no LibTorch start. Pointed at a
// tagflow-torch that does not exist (TAGFLOW_TORCH, cli/paths.cpp), `tagflow` shows which
// commands it refuses itself and which go on: those fail for want of tagflow-torch.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/run_command.hpp"

namespace tagflow::cli {
namespace {

namespace fs = std::filesystem;
using testing::run_command;
using testing::tagflow_binary;

TEST(TrainOptions, TagflowRefusesABadOptionWithoutStartingTagflowTorch) {
  const std::string missing = (fs::path(::testing::TempDir()) / "no-tagflow-torch").string();
  fs::remove(missing);
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

}  // namespace
}  // namespace tagflow::cli
