// The Prometheus configuration that scrapes a whole cluster (`tagflow monitoring
// prometheus-config FILE`).
//
// The output is a complete prometheus.yml: a `global` section and one scrape job whose static
// targets are scrape_targets(config), each labelled node, kind, group (its node group), mode and
// cluster. `honor_labels: true` keeps the node/kind/mode labels the processes export themselves
// (identical values) instead of renaming them exported_node, ...; `up` gets the target labels,
// so the dashboard can tell which process is down.
// A pure function of its arguments; thread-safe. It does not validate the config again.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cluster {

struct ScrapeConfigOptions {
  std::chrono::milliseconds scrape_interval{5000};
  std::string job_name;  // empty: "tagflow-" + the cluster's name
  /// The mode the cluster runs in (`tagflow up --mode`); nullopt: the file's.
  std::optional<cluster::Mode> mode;
};

/// The prometheus.yml text for the cluster.
std::string prometheus_scrape_config(const cluster::ClusterConfig& config,
                                     const ScrapeConfigOptions& options = {});

/// 5000ms → "5s", 1500ms → "1500ms" (Prometheus duration syntax).
std::string prometheus_duration(std::chrono::milliseconds duration);

}  // namespace tagflow::cluster
