// ReplicaMetrics: the metrics of one hosted replica, set up the same way by every process host
// (the federated process, the actor process): its own registry with the labels node (the replica
// name), kind and mode; its kind's families (nodes::NodeMetrics); and, when the file gives its
// node group a metrics_port, an HTTP endpoint on metrics_port + the replica's index — also for a
// sampler that joined as GROUP-K (nodes/cluster/scrape_targets.hpp gives Prometheus the same
// address). A process hosting several replicas has one ReplicaMetrics per replica.
//
// An endpoint that cannot start (its port taken) is reported through `log` and the replica runs
// without it: a run does not depend on its metrics. Not copyable or movable (the node families
// point into the registry). Thread-safety: as ProcessMetrics.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "monitoring/metrics_endpoint.hpp"
#include "monitoring/process_metrics.hpp"
#include "nodes/kind/replica_config.hpp"
#include "nodes/node_metrics.hpp"

namespace tagflow::hosts {

class ReplicaMetrics {
 public:
  /// `serve`: start the endpoint now when the group has a metrics_port (else serve() does).
  ReplicaMetrics(const cluster::ClusterConfig& config, const ReplicaConfig& replica, bool serve,
                 const std::function<void(const std::string&)>& log);
  /// Starts the endpoint when the group has a metrics_port and it was not tried yet: a host that
  /// registers series of its own first (a reactor federate's per-peer series) calls it after
  /// them, so that the first scrape already has them.
  void serve();
  ReplicaMetrics(const ReplicaMetrics&) = delete;
  ReplicaMetrics& operator=(const ReplicaMetrics&) = delete;

  [[nodiscard]] monitoring::ProcessMetrics& process() { return process_; }
  [[nodiscard]] nodes::NodeMetrics& node() { return node_; }
  /// The endpoint's port, or 0 when it does not serve.
  [[nodiscard]] std::uint16_t port() const { return endpoint_ ? endpoint_->port() : 0; }

 private:
  monitoring::ProcessMetrics process_;
  nodes::NodeMetrics node_;
  std::unique_ptr<monitoring::MetricsEndpoint> endpoint_;
  std::string bind_;
  std::uint16_t port_ = 0;  // until serve() tried it
  std::string name_;
  std::function<void(const std::string&)> log_;
};

}  // namespace tagflow::hosts
