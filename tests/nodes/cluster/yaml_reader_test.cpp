// Tests of the file checks of nodes/cluster/yaml_reader.hpp, through the cluster loader: what
// yaml-cpp accepts silently (a key given twice, a NUL, a file of any size) is refused with the
// file, the line and the key.
#include "nodes/cluster/yaml_reader.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace tagflow::cluster {
namespace {

constexpr const char* kValidYaml = R"(cluster: t
seed: 7
nodes:
  sampler: {kind: sampler, data_port: 7000}
  replay: {kind: replay, data_port: 7100, params: {capacity: 1000}}
connections:
  - {from: sampler.transitions, to: replay.transitions}
stop: {env_steps: 1000}
)";

/// The message of the ConfigError that parsing `text` raises ("" when it parses).
std::string yaml_error_of(const std::string& text) {
  try {
    parse_cluster_config(text, "c.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(YamlReader, TheValidFileParses) { EXPECT_EQ(yaml_error_of(kValidYaml), ""); }

TEST(YamlReader, AKeyGivenTwiceIsRefusedAtItsSecondLine) {
  EXPECT_EQ(yaml_error_of(std::string(kValidYaml) + "seed: 8\n"),
            "c.yaml:9: seed: duplicate key (it appears earlier in the same map)");
  const std::string nested = R"(cluster: t
nodes:
  sampler: {kind: sampler, data_port: 7000, data_port: 7001}
stop: {env_steps: 1}
)";
  EXPECT_EQ(
      yaml_error_of(nested),
      "c.yaml:3: nodes.sampler.data_port: duplicate key (it appears earlier in the same map)");
}

TEST(YamlReader, ANulInTheFileOrInAValueIsRefused) {
  std::string raw = kValidYaml;
  raw.insert(raw.find("seed"), std::string(1, '\0'));
  EXPECT_EQ(yaml_error_of(raw), "c.yaml:2: (file): a NUL byte (the file is not text)");
  std::string quoted = kValidYaml;
  quoted.replace(0, 10, "cluster: \"a\\0b\"\n");
  EXPECT_EQ(yaml_error_of(quoted), "c.yaml:1: cluster: a NUL character in 'a\\x00b'");
}

TEST(YamlReader, AFileOverTheSizeCapIsRefusedBeforeItIsParsed) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tagflow-big-" + std::to_string(::getpid()));
  {
    std::ofstream out(file);
    out << kValidYaml << "# " << std::string(kMaxClusterFileBytes, 'x') << "\n";
  }
  try {
    (void)load_cluster_config(file.string());
    ADD_FAILURE() << "a file over the cap was parsed";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), file.string() +
                                         ":0: (file): larger than the cluster file limit of " +
                                         std::to_string(kMaxClusterFileBytes) + " bytes");
  }
  std::filesystem::remove(file);
}

TEST(YamlReader, AliasesThatMultiplyTheTreeAreRefused) {
  // Each level repeats the one below ten times: 10^7 nodes from a few hundred bytes.
  std::string bomb = std::string(kValidYaml) + "x0: &a0 [v, v, v, v, v, v, v, v, v, v]\n";
  for (int i = 1; i <= 7; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    bomb += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 10; ++k) bomb += ", " + prev;
    bomb += "]\n";
  }
  EXPECT_NE(yaml_error_of(bomb).find("too many nodes"), std::string::npos) << yaml_error_of(bomb);
}

}  // namespace
}  // namespace tagflow::cluster
