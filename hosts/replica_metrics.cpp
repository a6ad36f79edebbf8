#include "hosts/replica_metrics.hpp"

namespace tagflow::hosts {

ReplicaMetrics::ReplicaMetrics(const cluster::ClusterConfig& config, const ReplicaConfig& replica,
                               bool serve, const std::function<void(const std::string&)>& log)
    : process_({replica.name, replica.kind->name, cluster::to_string(config.mode)},
               replica.kind->metrics),
      node_(process_) {
  // An inference service gateway (reactor mode) is ready once its policies are loaded: it says so.
  if (config.mode == cluster::Mode::reactor && replica.params.has("gateway_port") &&
      !replica.policies.empty()) {
    process_.set_ready(false);
  }
  if (replica.group->metrics_port == 0) return;
  bind_ = config.monitoring.bind;
  port_ = static_cast<std::uint16_t>(replica.group->metrics_port + replica.index);
  name_ = replica.name;
  log_ = log;
  if (serve) this->serve();
}

void ReplicaMetrics::serve() {
  if (endpoint_ || port_ == 0) return;
  try {
    endpoint_ = std::make_unique<monitoring::MetricsEndpoint>(process_, bind_, port_);
  } catch (const monitoring::MonitoringError& e) {
    if (log_) log_("no metrics endpoint for " + name_ + ": " + e.what());
  }
  port_ = 0;  // tried once
}

}  // namespace tagflow::hosts
