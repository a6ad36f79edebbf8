// NodeKind: everything tagflow knows about one kind of node, declared once, in the kind's own
// folder (nodes/<kind>/<kind>_kind.cpp), and listed in the registry (nodes/kind/registry.hpp).
//
// A descriptor says:
//   - its name (the `kind:` of a node group in a cluster file) and its ports (what connections
//     may name), each with the message it carries (a connection joins ports that carry the same);
//   - what its replicas count (the unit of ReplicaResult::count: env_steps, inserts, ...) and the
//     reason a replica gives when its own stop condition is met ("" when it has none);
//   - its roles, as flags the layers above read instead of naming kinds: it steps an env (shares
//     `stop.env_steps`, its returns make the run's), it trains (its final weights, updates and
//     evaluations make the run's result), it publishes evaluations of the trained weights, it is
//     transient (its replicas may join and leave a running cluster), it may host policies of a
//     multi-agent file, it needs LibTorch, its federate reads the network on a thread of its own,
//     its state can be checkpointed;
//   - its metric families (monitoring/metric_catalogue.hpp: MetricSpec with id Metric::node_kind);
//   - configure(): its parameter reader and checks and its seed derivation, filling the kind's
//     part of a ReplicaConfig (nodes/kind/replica_config.hpp) from the cluster file;
//   - reactor(): its replica as a reactor in an environment, behind a ReplicaBinding;
//   - actor(): its replica as a CAF actor; actor_result(): the kind's figures in the result of
//     an actor replica, read from its ReplicaReport.
// Kinds that need LibTorch leave reactor/actor null in the torch-free library; the torch library
// fills them in (install_torch_kinds(), nodes/kind/torch_registry.hpp) before any is built. The
// other kinds' actor() is null too until install_actor_kinds() (nodes/kind/actor_registry.hpp),
// which the actor host calls before its first spawn, so that this library builds without CAF.
//
// Descriptors are immutable after start-up; reading them is thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "monitoring/metric_catalogue.hpp"

namespace caf {
class actor;
class actor_system;
}  // namespace caf

namespace tagflow::reactors {
class Environment;
}  // namespace tagflow::reactors

namespace tagflow::cluster {
struct ClusterConfig;
}  // namespace tagflow::cluster

namespace tagflow::nodes {

struct ReplicaConfig;
struct ClusterFacts;
struct ReplicaSetup;
struct ReplicaSpawnSetup;
struct ReplicaReport;
struct ReplicaResult;
class ReplicaBinding;

/// A port of a kind and the message it carries, by the name of the port that message is named
/// after: `{"experience", "transitions"}` is an output carrying transitions; a bare name carries
/// its own message. A connection joins an output to an input carrying the same.
struct PortSpec {
  PortSpec(const char* port) : name(port), carries(port) {}  // NOLINT: a bare name is a port
  PortSpec(const char* port, const char* message) : name(port), carries(message) {}
  std::string name;
  std::string carries;
  /// An input the node works on and nothing else feeds (a replay's transitions, a learner's
  /// batches): a file that connects nothing to it is refused
  /// (nodes/cluster/cluster_validation.cpp).
  bool needed = false;
  /// An output only a node of a multi-agent file (`policies:`) sends on (the inference service's
  /// logged episodes): connecting it in another file is refused.
  bool multi_agent_only = false;
};

/// `port`, carrying `message`, as an output only a multi-agent file's node sends on.
[[nodiscard]] inline PortSpec multi_agent_output(const char* port, const char* message) {
  PortSpec spec(port, message);
  spec.multi_agent_only = true;
  return spec;
}

/// `port` as an input a node of its kind needs fed (PortSpec::needed).
[[nodiscard]] inline PortSpec needed_input(const char* port) {
  PortSpec spec(port);
  spec.needed = true;
  return spec;
}

struct NodeKind {
  std::string name;
  std::vector<PortSpec> inputs;
  std::vector<PortSpec> outputs;
  std::string count_unit;
  std::string count_family;  // the metric family that counts it (what a launcher's probe reads)
  std::string own_stop_reason;

  bool steps_env = false;
  bool trains = false;
  bool publishes_evaluations = false;
  bool transient = false;
  bool hosts_policies = false;
  bool needs_torch = false;
  bool network_thread = false;
  bool checkpointable = true;

  /// A multi-agent env node: it steps an env and hosts policies.
  [[nodiscard]] bool multi_agent_env() const { return steps_env && hosts_policies; }

  std::vector<monitoring::MetricSpec> metrics;

  /// Fills the kind's part of `replica` (its name, group, index, seed and params are set):
  /// reads and checks every param (nodes::ParamError naming node and param), derives seeds.
  void (*configure)(ReplicaConfig& replica, const cluster::ClusterConfig& config,
                    const ClusterFacts& facts) = nullptr;
  std::unique_ptr<ReplicaBinding> (*reactor)(const ReplicaSetup& setup,
                                             reactors::Environment& env) = nullptr;
  caf::actor (*actor)(caf::actor_system& system, const ReplicaSpawnSetup& setup) = nullptr;
  void (*actor_result)(const ReplicaConfig& replica, const ReplicaReport& report,
                       ReplicaResult& result) = nullptr;

  /// The port of that name, or null.
  [[nodiscard]] const PortSpec* input(const std::string& port) const;
  [[nodiscard]] const PortSpec* output(const std::string& port) const;
  [[nodiscard]] bool has_input(const std::string& port) const { return input(port) != nullptr; }
  [[nodiscard]] bool has_output(const std::string& port) const { return output(port) != nullptr; }
};

/// The ports' names, in their order.
[[nodiscard]] std::vector<std::string> port_names(const std::vector<PortSpec>& ports);

/// A metric family of a node kind (a helper for the descriptors).
[[nodiscard]] monitoring::MetricSpec kind_metric(monitoring::MetricType type, std::string name,
                                                 std::string help, std::string unit = "",
                                                 std::vector<std::string> labels = {},
                                                 std::vector<double> buckets = {});

}  // namespace tagflow::nodes
