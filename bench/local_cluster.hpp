// The local demo cluster (configs/local.yaml's nodes: two samplers acting through an inference
// server, a replay, a DQN learner) on free ports, run as processes by `tagflow up` (the launcher
// beside this binary) for benchmarks that compare whole runs (recovery, trace).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace tagflow::bench {

/// Ports the file uses from its base: the cluster's 12, then the learner's metrics endpoint.
inline constexpr int kLocalClusterPorts = 13;
inline constexpr int kLocalLearnerMetrics = 12;  // offset of the learner's metrics port

/// The connections section of configs/local.yaml (samplers acting through the inference server,
/// the learner's priorities and weights back with `after: 0`), for hand-written cluster files
/// with the same node groups (this file's, and the tests').
inline constexpr const char* kLocalClusterConnections =
    "connections:\n"
    "  - {from: sampler.observations, to: inference.observations}\n"
    "  - {from: inference.actions, to: sampler.actions, after: 0}\n"
    "  - {from: sampler.transitions, to: replay.transitions}\n"
    "  - {from: replay.batches, to: learner.batches}\n"
    "  - {from: learner.priorities, to: replay.priorities, after: 0}\n"
    "  - {from: learner.weights, to: inference.weights, after: 0}\n";

/// The file, named `cluster`, on ports from `base`, stopping after `env_steps`; `extra`
/// (top-level keys) is appended.
[[nodiscard]] std::string local_cluster_file(const std::string& cluster, int base,
                                             std::int64_t env_steps, const std::string& extra = "");

/// What a finished run's summary says.
struct LocalRun {
  double seconds = 0.0;  // the processes' own run time
  std::int64_t env_steps = 0;
  std::string digest;
};

/// Runs `tagflow up` on `yaml` (written to DIR/NAME.yaml, logs in DIR/NAME, output in
/// DIR/NAME.log) with `flags` added, and reads its summary. Throws std::runtime_error when the run
/// fails.
LocalRun up_local(const std::filesystem::path& dir, const std::string& name,
                  const std::string& yaml, const std::string& flags = "");

}  // namespace tagflow::bench
