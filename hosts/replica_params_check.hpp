// check_replica_params: every replica's params of a cluster file checked at once, before any
// process starts (`tagflow up`), so that a bad param (a negative `capacity`) is an error naming
// the file and the line, not a process that dies after every other one started.
//
// It builds each replica's ReplicaConfig (nodes/kind/replica_config.hpp): the sampler's and the
// replay's params in full, the learner's evaluation params, and the env named by the first
// sampler. The LibTorch params of the learner and the inference server (network, optimiser,
// TorchScript file) are checked by the process that links LibTorch, when it builds them.
// Errors: cluster::ConfigError "FILE:LINE: nodes.NODE.params: node 'NODE': param 'P' (line L):
// ...". Pure function of the file; thread-safe.
#pragma once

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::hosts {

/// Throws cluster::ConfigError for the first replica whose params are refused.
void check_replica_params(const cluster::ClusterConfig& config);

}  // namespace tagflow::hosts
