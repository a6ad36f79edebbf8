#include "bench/local_cluster.hpp"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace tagflow::bench {

namespace fs = std::filesystem;

std::string local_cluster_file(const std::string& cluster, int base, std::int64_t env_steps,
                               const std::string& extra) {
  const auto port = [base](int offset) { return std::to_string(base + offset); };
  std::string text =
      "cluster: " + cluster +
      "\nmode: reactor\nseed: 7\n"
      "hosts:\n  local: {address: 127.0.0.1}\n"
      "coordinator: {host: local, port: " +
      port(0) +
      ", heartbeat_timeout: 10s, "
      "join_timeout: 180s}\n"
      "nodes:\n"
      "  sampler:\n    kind: sampler\n    replicas: 2\n    data_port: " +
      port(2) +
      "\n    params: {env: CartPole-v1, num_envs: 8, policy: inference, epsilon_start: 1.0, "
      "epsilon_end: 0.04, epsilon_decay_steps: 4000}\n"
      "  replay:\n    kind: replay\n    data_port: " +
      port(6) +
      "\n    params: {capacity: 50000, selector: uniform, min_size: 1000, samples_per_insert: 32, "
      "batch_size: 64, max_batches_per_call: 8}\n"
      "  learner:\n    kind: learner\n    data_port: " +
      port(8) + "\n    metrics_port: " + port(kLocalLearnerMetrics) +
      "\n    params: {algo: dqn, hidden: \"64,64\", learning_rate: 0.001, gamma: 0.99, "
      "target_update: 128}\n"
      "  inference:\n    kind: inference\n    data_port: " +
      port(10) + "\n    params: {max_batch: 64, max_wait: 1ms}\n" + kLocalClusterConnections +
      "stop: {env_steps: " + std::to_string(env_steps) + "}\n";
  return text + extra;
}

LocalRun up_local(const fs::path& dir, const std::string& name, const std::string& yaml,
                  const std::string& flags) {
  const fs::path self = fs::read_symlink("/proc/self/exe");
  std::ofstream(dir / (name + ".yaml")) << yaml;
  const fs::path logs = dir / name;
  const std::string command = (self.parent_path() / "tagflow").string() + " up " +
                              (dir / (name + ".yaml")).string() + " --quiet --log-dir " +
                              logs.string() + " " + flags + " > " +
                              (dir / (name + ".log")).string() + " 2>&1";
  if (std::system(command.c_str()) != 0) {
    throw std::runtime_error("tagflow up of the " + name + " run failed (see " +
                             (dir / (name + ".log")).string() + ")");
  }
  std::ifstream in(logs / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(in);
  return {summary.at("seconds").get<double>(), summary.at("env_steps").get<std::int64_t>(),
          summary.at("digest").get<std::string>()};
}

}  // namespace tagflow::bench
