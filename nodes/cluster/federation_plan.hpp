// The federation a cluster file runs as in reactor mode (federation/PROTOCOL.md §0).
//
// One federate per node replica, named by replica_name() (sampler-0, sampler-1, replay, ...).
// The replica pairs are those of the link plan (link_plan.hpp: equal counts i→i, one to many),
// so the federation links exactly the replicas the other placements connect; when several
// connections join the same two replicas, the link carries their minimum delay
// (no delay < after 0 < after d). The coordinator address comes from coordinator.host/port, the
// heartbeat and join timeouts from coordinator.*_timeout, and CURVE keys from security.keys_dir
// (relative to the cluster file) when security.curve is on.
#pragma once

#include "federation/federation_spec.hpp"
#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cluster {

/// A validated FederationSpec for `config` (throws coordinator::FederationConfigError only on an
/// internal inconsistency: a ClusterConfig that loaded is always consistent).
[[nodiscard]] coordinator::FederationSpec federation_spec(const ClusterConfig& config);

}  // namespace tagflow::cluster
