// SlurmAllocation: where one `tagflow slurm-node` launcher stands inside the job that
// `tagflow slurm` submitted (cli/launch/slurm_script.hpp), found from the variables Slurm gives
// every task of the step:
//   1. the component: no variable names it, so it is derived from SLURM_PROCID (the task's rank
//      in the whole step) and SLURM_NTASKS_HET_GROUP_k (each component's tasks, in order): the
//      component whose ranks hold SLURM_PROCID. A job of one component (no SLURM_HET_SIZE) has
//      SLURM_NTASKS tasks.
//   2. the nodes of every component: SLURM_JOB_NODELIST_HET_GROUP_k (SLURM_JOB_NODELIST for one
//      component), expanded by `scontrol show hostnames`;
//   3. this launcher's node: SLURMD_NODENAME's place in its component's nodes (one task per
//      node), which is also the node index processes are dealt to (cluster/process_plan.hpp).
// Then every node name is resolved to its address (the resolver's, e.g. /etc/hosts or DNS) and
// given to the processes as TAGFLOW_NODE_ADDRESSES (cluster_config.hpp).
//
// slurm_place() and addresses_value() are pure over the functions they are given. Errors:
// std::runtime_error with a message for the user.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace tagflow::cli {

struct SlurmPlace {
  int component = 0;                            // index among the job's components
  int node = 0;                                 // index among its component's nodes
  std::string node_name;                        // SLURMD_NODENAME
  std::vector<std::vector<std::string>> nodes;  // every component's node names, in order
};

/// Reads a variable (nullptr when unset).
using EnvLookup = std::function<const char*(const char*)>;
/// Expands a Slurm node list ("n[1-3],gpu7") into names.
using NodeListExpander = std::function<std::vector<std::string>(const std::string&)>;

SlurmPlace slurm_place(const EnvLookup& env, const NodeListExpander& expand);

struct SlurmToolResult {
  int exit_code = -1;  // -1: it did not exit normally
  std::string output;  // its stdout: what is read back (an id, partitions, node names)
  std::string errors;  // its stderr (warnings, the reason it failed), never mixed into output
  /// Both, for a message: stderr first.
  [[nodiscard]] std::string said() const { return errors + output; }
};

/// Runs a Slurm client command line (`sinfo ...`, `sbatch ...`) through /bin/sh, its stdout and
/// stderr read apart (stderr through a temporary file).
SlurmToolResult run_slurm_tool(const std::string& command);

/// `scontrol show hostnames LIST`; throws when it fails.
std::vector<std::string> scontrol_hostnames(const std::string& list);

/// The IPv4 address `name` resolves to, or its IPv6 one when it has no IPv4 address
/// (transport::resolve_preferring_ipv4); throws when it resolves to none.
std::string resolve_node_address(const std::string& name);

/// "HOST=ADDR,ADDR;HOST=ADDR" for `hosts[k]` (component k's host) and the nodes of `place`,
/// each node's address from `resolve`.
std::string addresses_value(const std::vector<std::string>& hosts, const SlurmPlace& place,
                            const std::function<std::string(const std::string&)>& resolve);

}  // namespace tagflow::cli
