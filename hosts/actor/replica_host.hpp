// ReplicaHost: the node actors one OS process hosts in actor mode, from spawn to results.
//
// Shared by the in-process actor cluster (hosts/actor/actor_cluster.hpp: every replica of the file)
// and the actor process host (hosts/actor/actor_process.hpp: the replicas of one process). It
// spawns each replica (hosts/actor/replica_spawner.hpp), hands the wiring steps whose initiator it
// hosts to that actor, waits until its actors have ended — they end on a StopRun that floods the
// cluster, or when asked to stop/leave — and turns their reports into hosts::ReplicaResult.
//
// Stop rules while waiting: `seconds` of wall time → StopRun{"seconds"} to its actors; an
// external request (request_stop(), e.g. from SIGTERM) → StopRun, or leave_atom for samplers
// when `leave_on_request` is set (a joined sampler leaves, the cluster goes on); once one of its
// actors has ended, the others get `grace` to end on the flood before they are sent StopRun.
// Thread-safety: construct, spawn, wire and wait from one thread; request_stop() from any thread
// (it only sets an atomic flag); progress() reads atomics and may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "hosts/actor/actor_wiring.hpp"
#include "hosts/actor/replica_spawner.hpp"
#include "nodes/kind/process_result.hpp"
#include "nodes/replica_report.hpp"

namespace tagflow::hosts {

struct HostedReplica {
  ReplicaConfig
      config;  // what it was spawned from: name, kind, group, index... (replica_config.hpp)
  caf::actor handle;
  std::shared_ptr<nodes::ReplicaReport> report;
};

struct WaitOptions {
  std::optional<double> seconds;                // the file's stop.seconds
  std::chrono::milliseconds grace{3000};        // see above
  bool leave_on_request = false;                // samplers leave instead of stopping
  std::function<void(double elapsed)> on_tick;  // every `tick` while waiting
  std::chrono::milliseconds tick{250};
};

class ReplicaHost {
 public:
  ReplicaHost(caf::actor_system& system, const cluster::ClusterConfig& config,
              const hosts::ClusterFacts& facts);

  /// Spawns replica `name` (a replica of the file, or a joining sampler GROUP-K).
  HostedReplica& spawn(const std::string& name, nodes::NodeMetrics* metrics = nullptr);
  /// Spawns the replica `config` describes (replica_config() of this host's file), with
  /// `recovery` (checkpoints, a state to start from, lost peers: nodes/actor_checkpoint.hpp).
  HostedReplica& spawn(ReplicaConfig config, nodes::NodeMetrics* metrics = nullptr,
                       nodes::ActorRecovery recovery = {});
  [[nodiscard]] std::vector<HostedReplica>& replicas() { return replicas_; }
  [[nodiscard]] HostedReplica* find(const std::string& name);

  /// Sends (connect, port, peer) to the hosted initiator of `step`.
  void wire(const WiringStep& step, const caf::actor& peer);

  /// Blocks until every hosted actor has ended; returns the wall time waited.
  double wait(const WaitOptions& options);
  void request_stop() { stop_requested_.store(true); }

  /// The results of the hosted replicas (after wait()). `channels` lists, per replica, its
  /// output channels of the link plan (actor mode keeps no channel hashes: count and hash 0).
  [[nodiscard]] std::vector<ReplicaResult> results(const cluster::LinkPlan& links) const;
  /// Why the hosted replicas stopped (after wait()): stop_reason() of nodes/kind/replica_config.hpp
  /// over the reasons their reports recorded.
  [[nodiscard]] std::string stop_reason() const;

 private:
  caf::actor_system& system_;
  const cluster::ClusterConfig& config_;
  const hosts::ClusterFacts& facts_;
  std::vector<HostedReplica> replicas_;
  std::atomic<bool> stop_requested_{false};
};

}  // namespace tagflow::hosts
