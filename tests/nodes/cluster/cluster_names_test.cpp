// Tests of nodes/cluster/cluster_names.hpp, and that the loader applies the rule: the cluster's
// name becomes the run's log directory, so it must never be a path.
#include "nodes/cluster/cluster_names.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cluster {
namespace {

TEST(ClusterNames, AcceptsLettersDigitsAndSeparators) {
  EXPECT_TRUE(is_safe_cluster_name("cartpole-dqn"));
  EXPECT_TRUE(is_safe_cluster_name("Atari_2.v1"));
  EXPECT_TRUE(is_safe_cluster_name("7"));
  EXPECT_TRUE(is_safe_cluster_name(std::string(kMaxClusterNameChars, 'a')));
}

TEST(ClusterNames, RefusesPathsDotsControlCharactersAndOverlongNames) {
  for (const std::string& name : std::vector<std::string>{
           "../../../tmp/x", "..", ".", ".hidden", "-x", "a/b", "a b", "a\nb", "", "caf\xc3\xa9",
           std::string("a\0b", 3), std::string(kMaxClusterNameChars + 1, 'a')}) {
    EXPECT_FALSE(is_safe_cluster_name(name)) << name;
  }
}

TEST(ClusterNames, TheLoaderRefusesAnUnsafeNameNamingTheFileAndLine) {
  const std::string text = R"(seed: 1
cluster: ../../../tmp/x
nodes:
  sampler: {kind: sampler, data_port: 7000}
stop: {env_steps: 1}
)";
  try {
    (void)parse_cluster_config(text, "c.yaml");
    ADD_FAILURE() << "an unsafe cluster name was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("c.yaml:2: cluster: cluster names are 1 to 64", 0), 0U)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("got '../../../tmp/x'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tagflow::cluster
