// Scrape targets: the metrics endpoints of a cluster, as the cluster file places them.
//
// One target per process that has a metrics port: the coordinator (coordinator.metrics_port) and
// replica i of every node group (metrics_port + i), in file order, coordinator first. A process
// finds its own endpoint with find_scrape_target(config, its name) and listens on
// config.monitoring.bind at target.port; Prometheus scrapes target.address(): the host's address
// from `hosts` when the endpoints listen on every address (0.0.0.0 or ::), or when the file's
// processes run on several machines; the bind address when it is one address and every process
// runs on one machine (an endpoint on 127.0.0.1 or ::1 answers nowhere else).
// Pure functions over a validated ClusterConfig; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cluster {

struct ScrapeTarget {
  std::string process;               // coordinator, replay, sampler-0, ...: the `node` label
  std::string group;                 // the node group (or "coordinator") it belongs to
  std::string kind = "coordinator";  // the `kind` label: coordinator or the node kind
  std::string host;                  // reachable address of its host
  std::uint16_t port = 0;

  /// host:port ([host]:port for IPv6).
  std::string address() const;
};

/// True when metrics endpoints bound to `bind` (monitoring.bind) listen on every address of their
/// machine: 0.0.0.0 or ::.
bool binds_every_address(const std::string& bind);

/// True when every host of the file has one and the same address, or every host's address is a
/// loopback one (127.x.y.z, ::1, localhost), and none is a Slurm or Kubernetes host (whose nodes
/// are learned in the allocation): its processes run on one machine.
bool on_one_machine(const cluster::ClusterConfig& config);

/// Every metrics endpoint of the cluster (groups without metrics_port have none) when it runs in
/// `mode` (the coordinator's only in reactor mode); without one, in the file's mode.
std::vector<ScrapeTarget> scrape_targets(const cluster::ClusterConfig& config,
                                         std::optional<cluster::Mode> mode = std::nullopt);

/// The endpoint of the process called `process`; nullopt when it has none or does not exist.
std::optional<ScrapeTarget> find_scrape_target(const cluster::ClusterConfig& config,
                                               const std::string& process);

/// The endpoint of replica GROUP-K of a transient kind (nodes/kind/node_kind.hpp) for any K ≥ 0,
/// also beyond the group's replicas: where a replica that joined a running cluster (`tagflow
/// node --name GROUP-K --join`) serves its metrics (metrics_port + K). nullopt when GROUP is no
/// transient group with a metrics port, or the name does not end in "-K".
std::optional<ScrapeTarget> transient_scrape_target(const cluster::ClusterConfig& config,
                                                    const std::string& replica);

}  // namespace tagflow::cluster
