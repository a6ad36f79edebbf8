// Every cluster file shipped in configs/ loads (parse + validation), plans its processes, and is
// listed in configs/README.md.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/process_plan.hpp"

namespace tagflow::cluster {
namespace {

std::vector<std::filesystem::path> shipped_configs() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(TAGFLOW_SOURCE_DIR) + "/configs")) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(Configs, EveryShippedClusterFileLoadsAndPlansItsProcesses) {
  const auto files = shipped_configs();
  ASSERT_GE(files.size(), 3U);  // local, two-host, atari
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    ClusterConfig config;
    try {
      config = load_cluster_config(file.string());
    } catch (const ConfigError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    EXPECT_FALSE(config.name.empty());
    const std::vector<ProcessPlan> processes = plan_processes(config);
    EXPECT_FALSE(processes.empty());
    for (const ProcessPlan& process : processes) {
      EXPECT_EQ(config.hosts.count(process.host), 1U) << process.name;
    }
  }
}

TEST(Configs, TheReadmeListsEveryShippedClusterFile) {
  std::ifstream in(std::string(TAGFLOW_SOURCE_DIR) + "/configs/README.md");
  std::stringstream text;
  text << in.rdbuf();
  for (const auto& file : shipped_configs()) {
    EXPECT_NE(text.str().find("`" + file.filename().string() + "`"), std::string::npos)
        << file.filename() << " is not in configs/README.md";
  }
}

// The single-host demos can run side by side: no port of one is a port of another (two-host.yaml
// and slurm.yaml are local.yaml split over two machines and keep its ports on purpose).
TEST(Configs, TheSingleHostDemosUseDistinctPorts) {
  std::map<int, std::string> owner;
  for (const auto& file : shipped_configs()) {
    if (file.filename() == "two-host.yaml" || file.filename() == "slurm.yaml" ||
        file.filename() == "kubernetes.yaml")
      continue;
    const ClusterConfig config = load_cluster_config(file.string());
    std::vector<int> ports = {config.coordinator.port, config.coordinator.metrics_port};
    for (const NodeConfig& node : config.nodes) {
      for (int i = 0; i < node.replicas; ++i) {
        ports.push_back(node.data_port + i);
        if (node.metrics_port != 0) ports.push_back(node.metrics_port + i);
      }
    }
    for (const int port : ports) {
      if (port == 0) continue;
      const auto [it, fresh] = owner.emplace(port, file.filename().string());
      EXPECT_TRUE(fresh || it->second == file.filename().string())
          << "port " << port << " is in " << it->second << " and " << file.filename();
    }
  }
}

TEST(Configs, TheTwoHostClusterSplitsActingFromLearning) {
  const ClusterConfig config =
      load_cluster_config(std::string(TAGFLOW_SOURCE_DIR) + "/configs/two-host.yaml");
  ASSERT_EQ(config.hosts.size(), 2U);
  EXPECT_EQ(config.coordinator.host, "b");
  EXPECT_EQ(config.monitoring.bind, "0.0.0.0");
  for (const ProcessPlan& process : plan_processes(config)) {
    const bool acting = process.name.rfind("sampler", 0) == 0 || process.name == "inference";
    EXPECT_EQ(process.host, acting ? "a" : "b") << process.name;
  }
}

TEST(Configs, TheAtariClusterRunsPixelPongBehindAtariPreprocessingForAFixedNumberOfSteps) {
  const ClusterConfig config =
      load_cluster_config(std::string(TAGFLOW_SOURCE_DIR) + "/configs/atari.yaml");
  const NodeConfig* sampler = config.find_node("sampler");
  ASSERT_NE(sampler, nullptr);
  EXPECT_EQ(sampler->params.at("env"), "PixelPong-v0");
  ASSERT_TRUE(config.stop.env_steps.has_value());
  EXPECT_GT(*config.stop.env_steps, 0);
  EXPECT_FALSE(config.stop.target_return.has_value());
}

}  // namespace
}  // namespace tagflow::cluster
