// ReplicaBinding: one node replica's reactor inside a reactors::Environment, seen the same way by
// every placement (the in-process cluster and the federated process host).
//
// A kind's reactor() (nodes/kind/node_kind.hpp) creates the reactor of a replica from its
// ReplicaConfig (nodes/kind/replica_config.hpp: params, seeds, stop condition, evaluation,
// checkpoint path — what actor mode builds its actors from too) and the port widths of the link
// plan, and returns its binding: its ports by (name, channel) for the placement to connect, live
// progress counters, and its ReplicaResult after the run (channel hashes as of the cutoff:
// process_result.hpp). make_replica() asks the replica's kind; kinds that need LibTorch have
// their factory only in torch binaries (nodes/kind/torch_registry.hpp).
//
// Errors: ParamError for a bad param (naming node and param), std::invalid_argument for an env
// that does not exist or a kind the factory cannot build. Bindings are used from the thread that
// declares and runs the environment; progress() may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/state_stream.hpp"
#include "nodes/channel_digest.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/link_plan.hpp"
#include "nodes/kind/process_result.hpp"
#include "nodes/kind/replica_config.hpp"
#include "nodes/node_metrics.hpp"
#include "reactors/reactors.hpp"

namespace tagflow::nodes {

struct ReplicaSetup {
  ReplicaConfig config;  // nodes/kind/replica_config.hpp: the same in every placement and mode
  const cluster::LinkPlan* links = nullptr;
  std::chrono::nanoseconds round_period = std::chrono::milliseconds(1);
  nodes::NodeMetrics* metrics = nullptr;  // optional; must outlive the run
  /// Built in a scratch environment only to check that it builds (federated_process.cpp): a
  /// kind starts nothing outside the environment then (no inference service).
  bool trial = false;
};

/// The setup of replica `name` of `config` (replica_config(); throws as it does).
[[nodiscard]] ReplicaSetup replica_setup(const cluster::ClusterConfig& config,
                                         const cluster::LinkPlan& links, const ClusterFacts& facts,
                                         const std::string& name);

/// Live counters for progress lines (relaxed reads of the reactors' atomics).
struct ReplicaProgress {
  std::int64_t env_steps = 0;
  double last_return = 0.0;
  std::int64_t updates = 0;
  double last_evaluation = std::numeric_limits<double>::quiet_NaN();  // NaN: none yet
  std::uint64_t weights_version = 0;
};

class ReplicaBinding {
 public:
  virtual ~ReplicaBinding() = default;
  [[nodiscard]] virtual const NodeKind& kind() const = 0;
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
  /// Checkpoints (docs/recovery.md), between tags only: the replica's whole state to `out`, and
  /// the bytes of files to write beside it as PREFIX.NAME (a replay table) to `files`, streamed
  /// there and completed later, perhaps on another thread. load_state() reads it back, with those
  /// files at `file_prefix`.NAME, into a replica built from the same setup, before its
  /// environment runs. The default throws std::logic_error: the kind cannot checkpoint
  /// (multi_agent, a policy bank); so does save for an env without a settable state. load_state
  /// throws StateError or the kind's own checkpoint error when the bytes do not fit.
  virtual void save_state(StateWriter& out, StateAttachments& files);
  virtual void load_state(StateReader& in, const std::string& file_prefix);
};

using ReplicaFactory =
    std::function<std::unique_ptr<ReplicaBinding>(const ReplicaSetup&, reactors::Environment&)>;

/// The binding of the setup's replica, from its kind's reactor(); std::invalid_argument for a
/// kind without one here (one that needs LibTorch, in a torch-free binary).
[[nodiscard]] std::unique_ptr<ReplicaBinding> make_replica(const ReplicaSetup& setup,
                                                           reactors::Environment& env);

/// For kinds' bindings: the link plan's width of input / output `port` of the setup's replica.
[[nodiscard]] std::size_t input_width(const ReplicaSetup& setup, const char* port);
[[nodiscard]] std::size_t output_width(const ReplicaSetup& setup, const char* port);

/// For kinds' bindings: a result named for `replica`, with its kind's name and count unit.
[[nodiscard]] ReplicaResult result_of(const std::string& replica, const NodeKind& kind);

/// For kinds' bindings: the live progress of a replica that steps an env.
[[nodiscard]] ReplicaProgress env_progress(const std::atomic<std::int64_t>& env_steps,
                                           const std::atomic<double>& last_return);

/// For kinds' bindings: std::invalid_argument "replica 'R' has no port 'P'".
[[noreturn]] void no_port(const std::string& replica, const std::string& port);

/// stop_reason() (nodes/kind/replica_config.hpp) of these replicas: each one that met its own
/// condition gives its kind's own_stop_reason.
[[nodiscard]] std::string stop_reason(const std::vector<std::unique_ptr<ReplicaBinding>>& replicas,
                                      bool timed_out);

/// The output channels of a reactor's ChannelDigests as ChannelResults (helper for bindings).
// (nodes/channel_digest.hpp)
void append_channels(std::vector<ChannelResult>& out, const std::string& port,
                     const nodes::ChannelDigests& digests, std::optional<reactors::Tag> cutoff);

}  // namespace tagflow::nodes

namespace tagflow::hosts {
using nodes::append_channels;
using nodes::make_replica;
using nodes::replica_setup;
using nodes::ReplicaBinding;
using nodes::ReplicaFactory;
using nodes::ReplicaProgress;
using nodes::ReplicaSetup;
using nodes::stop_reason;
}  // namespace tagflow::hosts
