// Checks of a parsed cluster file that look across sections: connection endpoints, zero-delay
// cycles and port clashes (see cluster_config.hpp). Internal to nodes/cluster.
#pragma once

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cluster {

/// Throws ConfigError on the first problem found.
void validate_topology(const ClusterConfig& config);

}  // namespace tagflow::cluster
