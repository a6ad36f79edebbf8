// `tagflow bench recovery`: what checkpoints cost (ARCHITECTURE §12). The local demo cluster
// (configs/local.yaml's nodes: 2 samplers acting through an inference server, replay, learner),
// stopped after a fixed number of env steps, runs twice as federated processes through
// `tagflow up` (the launcher beside this binary): without checkpoints, then with a checkpoint
// every E of logical time, E chosen from the first run so that one falls about every 5 s of wall
// time. Reported: env steps/s of both runs and their ratio; per node kind, the bytes and the
// milliseconds each checkpoint part took (from ROOT/<replica>.stats, written by every federate);
// and whether both runs ended with the same digest (1 = yes).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/benchmarks.hpp"
#include "common/loopback_ports.hpp"

namespace tagflow::bench {
namespace {

namespace fs = std::filesystem;

/// The local demo cluster on ports from `base` (12 of them), `checkpoint` added when not empty.
std::string cluster_file(int base, std::int64_t env_steps, const std::string& checkpoint) {
  const auto port = [base](int offset) { return std::to_string(base + offset); };
  std::string text =
      "cluster: recovery-bench\nmode: reactor\nseed: 7\n"
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
      port(8) +
      "\n    params: {algo: dqn, hidden: \"64,64\", learning_rate: 0.001, gamma: 0.99, "
      "target_update: 128}\n"
      "  inference:\n    kind: inference\n    data_port: " +
      port(10) +
      "\n    params: {max_batch: 64, max_wait: 1ms}\n"
      "connections:\n"
      "  - {from: sampler.observations, to: inference.observations}\n"
      "  - {from: inference.actions, to: sampler.actions, after: 0}\n"
      "  - {from: sampler.transitions, to: replay.transitions}\n"
      "  - {from: replay.batches, to: learner.batches}\n"
      "  - {from: learner.priorities, to: replay.priorities, after: 0}\n"
      "  - {from: learner.weights, to: inference.weights, after: 0}\n"
      "stop: {env_steps: " +
      std::to_string(env_steps) + "}\n";
  if (!checkpoint.empty()) text += "checkpoint: " + checkpoint + "\n";
  return text;
}

struct Run {
  double seconds = 0.0;  // the summary's (the processes' own run time)
  std::int64_t env_steps = 0;
  std::string digest;
};

Run up(const fs::path& dir, const std::string& name, const std::string& yaml) {
  const fs::path self = fs::read_symlink("/proc/self/exe");
  std::ofstream(dir / (name + ".yaml")) << yaml;
  const fs::path logs = dir / name;
  const std::string command = (self.parent_path() / "tagflow").string() + " up " +
                              (dir / (name + ".yaml")).string() + " --quiet --log-dir " +
                              logs.string() + " > " + (dir / (name + ".log")).string() + " 2>&1";
  if (std::system(command.c_str()) != 0) {
    throw std::runtime_error("tagflow up of the " + name + " run failed (see " +
                             (dir / (name + ".log")).string() + ")");
  }
  std::ifstream in(logs / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(in);
  return {summary.at("seconds").get<double>(), summary.at("env_steps").get<std::int64_t>(),
          summary.at("digest").get<std::string>()};
}

}  // namespace

BenchReport run_recovery_bench(const BenchOptions& options) {
  const std::int64_t env_steps = options.quick ? 3200 : 40000;
  const fs::path dir =
      fs::temp_directory_path() / ("tagflow_recovery_bench_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const int base = free_loopback_port_range(12);
  if (base < 0) throw std::runtime_error("no 12 consecutive free loopback ports");
  BenchReport report("recovery");

  const Run plain = up(dir, "none", cluster_file(base, env_steps, ""));
  // 16 env steps per 1 ms round: the logical time the run covered, and an E near 5 s of wall.
  const double logical_ms = static_cast<double>(plain.env_steps) / 16.0;
  const double wall_target = options.quick ? 1.0 : 5.0;
  const auto every_ms = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(logical_ms * wall_target / plain.seconds));
  const Run checked =
      up(dir, "checkpoints",
         cluster_file(base, env_steps, "{every: " + std::to_string(every_ms) + "ms, keep: 2}"));

  report.add("checkpoint_every_logical", static_cast<double>(every_ms), "ms");
  report.add("none_env_steps_per_s", static_cast<double>(plain.env_steps) / plain.seconds,
             "steps/s");
  report.add("checkpoints_env_steps_per_s",
             static_cast<double>(checked.env_steps) / checked.seconds, "steps/s");
  report.add_ratio("checkpoints/none", "checkpoints_env_steps_per_s", "none_env_steps_per_s");
  report.add("same_digest", checked.digest == plain.digest ? 1.0 : 0.0, "bool");

  // Per kind: the federates' totals (a kind's replicas summed).
  std::map<std::string, std::map<std::string, double>> kinds;
  for (const auto& entry : fs::directory_iterator(dir / "checkpoints" / "checkpoints")) {
    if (entry.path().extension() != ".stats") continue;
    std::string kind = entry.path().stem().string();
    kind = kind.substr(0, kind.find('-'));
    std::ifstream in(entry.path());
    std::string key;
    double value = 0;
    while (in >> key >> value) kinds[kind][key] += value;
  }
  for (const auto& [kind, totals] : kinds) {
    const double parts = std::max(1.0, totals.at("parts"));
    report.add(kind + "_bytes_per_checkpoint", totals.at("bytes") / parts, "bytes");
    report.add(kind + "_ms_per_checkpoint", 1000.0 * totals.at("seconds") / parts, "ms");
  }
  fs::remove_all(dir);
  return report;
}

}  // namespace tagflow::bench
