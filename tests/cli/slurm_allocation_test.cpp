// Tests of cli/launch/slurm_allocation.hpp: a launcher finds its component from SLURM_PROCID and
// SLURM_NTASKS_HET_GROUP_k, and its node among its component's.
#include "cli/launch/slurm_allocation.hpp"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

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

}  // namespace
}  // namespace tagflow::cli
