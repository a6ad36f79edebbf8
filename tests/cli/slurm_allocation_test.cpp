// Tests of cli/launch/slurm_allocation.hpp: a launcher finds its component from SLURM_PROCID and
// SLURM_NTASKS_HET_GROUP_k, and its node among its component's; Slurm's tools are read from their
// stdout, their warnings kept apart.
#include "cli/launch/slurm_allocation.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>

#include "tests/support/run_command.hpp"

namespace tagflow::cli {
namespace {

EnvLookup env_of(const std::map<std::string, std::string>& values) {
  return [values](const char* name) -> const char* {
    const auto it = values.find(name);
    return it == values.end() ? nullptr : it->second.c_str();
  };
}

std::vector<std::string> expand(const std::string& list) {
  if (list == "c[1-3]") return {"c1", "c2", "c3"};
  return {list};
}

std::map<std::string, std::string> two_components(const std::string& rank,
                                                  const std::string& node) {
  return {{"SLURM_PROCID", rank},
          {"SLURM_HET_SIZE", "2"},
          {"SLURM_NTASKS_HET_GROUP_0", "3"},
          {"SLURM_JOB_NODELIST_HET_GROUP_0", "c[1-3]"},
          {"SLURM_NTASKS_HET_GROUP_1", "1"},
          {"SLURM_JOB_NODELIST_HET_GROUP_1", "g7"},
          {"SLURMD_NODENAME", node}};
}

TEST(SlurmAllocation, TheComponentIsTheOneWhoseRanksHoldTheProcid) {
  const SlurmPlace second = slurm_place(env_of(two_components("3", "g7")), expand);
  EXPECT_EQ(second.component, 1);
  EXPECT_EQ(second.node, 0);
  const SlurmPlace first = slurm_place(env_of(two_components("1", "c2")), expand);
  EXPECT_EQ(first.component, 0);
  EXPECT_EQ(first.node, 1);
  EXPECT_EQ(first.node_name, "c2");
  ASSERT_EQ(first.nodes.size(), 2U);
  EXPECT_EQ(first.nodes[0].size(), 3U);
}

TEST(SlurmAllocation, AJobOfOneComponentReadsTheJobsNodeList) {
  const SlurmPlace place = slurm_place(env_of({{"SLURM_PROCID", "2"},
                                               {"SLURM_NTASKS", "3"},
                                               {"SLURM_JOB_NODELIST", "c[1-3]"},
                                               {"SLURMD_NODENAME", "c3"}}),
                                       expand);
  EXPECT_EQ(place.component, 0);
  EXPECT_EQ(place.node, 2);
}

TEST(SlurmAllocation, OutsideAJobStepItSaysWhichVariableIsMissing) {
  try {
    (void)slurm_place(env_of({}), expand);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "not inside a Slurm job step: SLURM_PROCID is not set");
  }
  EXPECT_THROW((void)slurm_place(env_of(two_components("4", "g7")), expand), std::runtime_error);
}

TEST(SlurmAllocation, TheAddressesVariableListsEveryComponentsNodesInOrder) {
  const SlurmPlace place = slurm_place(env_of(two_components("0", "c1")), expand);
  EXPECT_EQ(addresses_value({"act", "learn"}, place,
                            [](const std::string& node) { return "ip-" + node; }),
            "act=ip-c1,ip-c2,ip-c3;learn=ip-g7");
}

TEST(SlurmAllocation, AToolsWarningsAreKeptApartFromWhatIsReadBack) {
  const SlurmToolResult ok =
      run_slurm_tool("sh -c 'echo \"sbatch: warning: x\" >&2; echo 4242; echo late >&2'");
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.output, "4242\n");
  EXPECT_EQ(ok.errors, "sbatch: warning: x\nlate\n");
  const SlurmToolResult failed =
      run_slurm_tool("sh -c 'echo out; echo \"no controller\" >&2; exit 3'");
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_EQ(failed.said(), "no controller\nout\n");
}

// `tagflow slurm --submit` prints the job id sbatch gave, not a warning sbatch printed first
// (sinfo and sbatch are stand-ins on PATH that print what a controller would).
TEST(SlurmAllocation, SubmitPrintsTheJobIdAndPassesSbatchsWarningsOn) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("slurm_submit_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "bin");
  const auto tool = [&](const std::string& name, const std::string& body) {
    std::ofstream(dir / "bin" / name) << "#!/bin/sh\n" << body;
    fs::permissions(dir / "bin" / name, fs::perms::owner_all);
  };
  tool("sinfo", "echo 'sinfo: warning: old client' >&2\necho 'debug* 4'\n");
  tool("sbatch", "echo 'sbatch: warning: x' >&2\necho '4242;cluster'\n");
  const testing::CommandResult r =
      testing::run_command("cd " + dir.string() + " && PATH=" + (dir / "bin").string() + ":$PATH " +
                           testing::tagflow_binary() + " slurm " + TAGFLOW_SOURCE_DIR +
                           "/configs/slurm.yaml --submit 2> err.txt");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "4242\n");
  std::ifstream in(dir / "err.txt");
  const std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(err.find("sinfo: warning: old client\n"), std::string::npos) << err;
  EXPECT_NE(err.find("sbatch: warning: x\n"), std::string::npos) << err;
  EXPECT_NE(err.find("tagflow slurm: submitted job 4242 (squeue -j 4242)"), std::string::npos)
      << err;
  // An sbatch that fails: exit 1, and what it said a line each, not one line of "\n"s.
  tool("sbatch",
       "echo 'sbatch: error: no controller' >&2\necho 'sbatch: error: giving up' >&2\n"
       "exit 1\n");
  const testing::CommandResult failed =
      testing::run_command("cd " + dir.string() + " && PATH=" + (dir / "bin").string() + ":$PATH " +
                           testing::tagflow_binary() + " slurm " + TAGFLOW_SOURCE_DIR +
                           "/configs/slurm.yaml --submit 2> err.txt");
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  std::ifstream again(dir / "err.txt");
  const std::string said((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
  EXPECT_NE(said.find("tagflow slurm: sbatch failed (exit 1):\n  | sbatch: error: no controller\n"
                      "  | sbatch: error: giving up\n"),
            std::string::npos)
      << said;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tagflow::cli
