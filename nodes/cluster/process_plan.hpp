// ProcessPlan: which replicas of a cluster file share one OS process (`process:` key).
//
// Every replica of every node group with the same `process` value runs in one process called by
// that value; a group without the key gives each of its replicas its own process, named by the
// replica name (sampler-0, replay, ...). The grouping is a placement choice only: in reactor mode
// every replica stays one federate, so it changes neither tags nor the digest.
//
// A Slurm host with `nodes: N` (SlurmRequest) deals its processes over its nodes in file order:
// its k-th process runs on node k mod N (the coordinator on node 0). Ports do not change: replica
// i of a group still listens on data_port + i, so every endpoint of a host stays distinct on
// whichever of its nodes it lands.
// Plain values; plan_processes() never throws for a config that loaded (load_cluster_config
// already checked hosts and names).
#pragma once

#include <string>
#include <vector>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cluster {

struct ProcessPlan {
  std::string name;                   // the `process` value, or the replica name
  std::string host;                   // a key of ClusterConfig::hosts
  std::vector<std::string> replicas;  // replica names, in file order
  bool needs_torch = false;           // hosts a learner or an inference replica
  int node = 0;                       // index among its host's Slurm nodes (0 otherwise)
};

/// Every process of the cluster, in file order of their first replica.
std::vector<ProcessPlan> plan_processes(const ClusterConfig& config);

/// The address `process` binds: its node's (HostConfig::node_addresses) on a Slurm host inside
/// the allocation, its host's otherwise.
std::string process_address(const ClusterConfig& config, const ProcessPlan& process);

/// Whether node (Slurm node, Kubernetes pod) `node` of `host` is where the coordinator runs: node
/// 0 of the coordinator's host (a host without nodes is its own node 0).
bool is_coordinator_node(const ClusterConfig& config, const std::string& host, int node);

/// Whether `process` runs beside the coordinator, started by the coordinator's launcher: on the
/// coordinator's node (is_coordinator_node()). Every other process's launcher hands its result
/// (and trace) to the coordinator (federation/PROTOCOL.md §8).
bool runs_with_coordinator(const ClusterConfig& config, const ProcessPlan& process);

/// The address of the process that hosts `replica` (process_address()); its host's when the
/// replica is unknown.
std::string replica_address(const ClusterConfig& config, const std::string& replica);

/// The process called `name`, or nullptr.
const ProcessPlan* find_process(const std::vector<ProcessPlan>& plans, const std::string& name);

/// The process among `plans` that hosts replica `replica`, or nullptr.
const ProcessPlan* process_of_replica(const std::vector<ProcessPlan>& plans,
                                      const std::string& replica);

/// The node group and index of replica `replica`, or {nullptr, -1}.
std::pair<const NodeConfig*, int> find_replica(const ClusterConfig& config,
                                               const std::string& replica);

}  // namespace tagflow::cluster
