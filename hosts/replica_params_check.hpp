// check_replica_params: every replica's params of a cluster file checked at once, before any
// process starts (`tagflow up`), so that a bad param (a negative `capacity`) is an error naming
// the file and the line, not a process that dies after every other one started.
//
// It builds each replica's ReplicaConfig (nodes/kind/replica_config.hpp): every kind's params,
// the learner's network and optimiser included, and the env every sampler group names (one env
// for all, with a state when the file checkpoints). A TorchScript file is checked by the process
// that loads it.
// Errors: cluster::ConfigError "FILE:LINE: nodes.NODE.params: node 'NODE': param 'P' (line L):
// ...". Pure function of the file; thread-safe.
#pragma once

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::hosts {

/// Throws cluster::ConfigError for the first replica whose params are refused.
void check_replica_params(const cluster::ClusterConfig& config);

}  // namespace tagflow::hosts
