// ReplicaBinding: one node replica's reactor inside a reactors::Environment, seen the same way by
// every placement (the in-process cluster and the federated process host).
//
// A ReplicaFactory creates the reactor of a replica from the cluster file (params, seed, the
// port widths of the link plan, the stop condition) and returns its binding: its ports by
// (name, channel) for the placement to connect, live progress counters, and its ReplicaResult
// after the run (channel hashes as of the cutoff: process_result.hpp). make_torch_free_replica()
// builds samplers and replays; learners and inference servers need LibTorch
// (nodes/torch_replicas.hpp). Seeds: replica i of the g-th node group (1-based, file order)
// gets seed * 1000003 + g * 1000 + i, whatever process it runs in.
//
// Errors: ParamError for a bad param (naming node and param), std::invalid_argument for an env
// that does not exist or a kind the factory cannot build. Bindings are used from the thread that
// declares and runs the environment; progress() may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/link_plan.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/process_result.hpp"
#include "reactors/reactors.hpp"

namespace tagflow::nodes {

/// Facts every replica of a cluster shares: the env of the first sampler group and the
/// learner's network shape.
struct ClusterFacts {
  std::string env_id = "CartPole-v1";
  int observation_size = 0;
  int num_actions = 0;
  std::string hidden = "64,64";   // the first learner's `hidden` param
  std::size_t sampler_count = 0;  // sampler replicas in the whole cluster

  /// Throws cluster::ConfigError when the cluster has no sampler.
  static ClusterFacts of(const cluster::ClusterConfig& config);
};

struct ReplicaSetup {
  const cluster::ClusterConfig* config = nullptr;
  const cluster::LinkPlan* links = nullptr;
  const ClusterFacts* facts = nullptr;
  const cluster::NodeConfig* group = nullptr;
  int index = 0;     // replica index within its group
  std::string name;  // replica name
  std::chrono::nanoseconds round_period = std::chrono::milliseconds(1);
  NodeMetrics* metrics = nullptr;  // optional; must outlive the run
};

/// The setup of replica `name` of `config` (throws std::invalid_argument for an unknown name).
[[nodiscard]] ReplicaSetup replica_setup(const cluster::ClusterConfig& config,
                                         const cluster::LinkPlan& links, const ClusterFacts& facts,
                                         const std::string& name);

/// The seed of replica `index` of `group` (see above).
[[nodiscard]] std::uint64_t replica_seed(const cluster::ClusterConfig& config,
                                         const cluster::NodeConfig& group, int index);

/// Live counters for progress lines (relaxed reads of the reactors' atomics).
struct ReplicaProgress {
  std::int64_t env_steps = 0;
  double last_return = 0.0;
  std::int64_t updates = 0;
  double last_evaluation = 0.0;
  std::uint64_t weights_version = 0;
};

class ReplicaBinding {
 public:
  virtual ~ReplicaBinding() = default;
  [[nodiscard]] virtual cluster::NodeKind kind() const = 0;
  /// Output `port`, channel `channel` (a port of the kind, channel < its link-plan width).
  [[nodiscard]] virtual reactors::PortBase& output(const std::string& port,
                                                   std::size_t channel) = 0;
  [[nodiscard]] virtual reactors::PortBase& input(const std::string& port, std::size_t channel) = 0;
  [[nodiscard]] virtual ReplicaProgress progress() const = 0;
  /// After the run: counts, returns and channel hashes of values sent at tags < cutoff
  /// (every value without a cutoff).
  [[nodiscard]] virtual ReplicaResult result(std::optional<reactors::Tag> cutoff) = 0;
  /// True once this replica requested the stop because its own condition was met
  /// (target_return or its env_steps share).
  [[nodiscard]] virtual bool reached_stop_condition() const = 0;
};

using ReplicaFactory =
    std::function<std::unique_ptr<ReplicaBinding>(const ReplicaSetup&, reactors::Environment&)>;

/// Samplers and replays; std::invalid_argument for the kinds that need LibTorch.
[[nodiscard]] std::unique_ptr<ReplicaBinding> make_torch_free_replica(const ReplicaSetup& setup,
                                                                      reactors::Environment& env);

/// "target_return" when a learner reached it, else "env_steps" when a sampler finished its
/// share, else "seconds" when `timed_out`, else "" (stopped by another process).
[[nodiscard]] std::string stop_reason(const std::vector<std::unique_ptr<ReplicaBinding>>& replicas,
                                      bool timed_out);

/// The output channels of a reactor's ChannelDigests as ChannelResults (helper for bindings).
class ChannelDigests;
void append_channels(std::vector<ChannelResult>& out, const std::string& port,
                     const ChannelDigests& digests, std::optional<reactors::Tag> cutoff);

}  // namespace tagflow::nodes
