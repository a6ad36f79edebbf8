// Policies and the agent → policy mapping of a multi-agent cluster file, and which replica hosts
// which policy.
//
// A file with a `multi_agent` node names its policies and maps agents to them (the format is in
// configs/README.md):
//
//   policies:
//     car: {hidden: "64", per_agent: true}   # car_0 ... car_{n-1}, one per agent
//   agents: {"*": car}                       # optional: agent index (or "*") → policy
//
// The usual conventions (RLlib's policy mapping, PettingZoo's per-agent dicts) are all one of:
//   - one policy per agent: a `per_agent: true` policy, or n policies mapped one to one;
//   - one shared policy: a single policy with no `agents:` key;
//   - groups: `agents: {0: north, 1: north, 2: south, "*": rest}`.
// A policy serving more than one agent sees the agent's index as an input feature: its input is
// the agent's observation followed by a one-hot of the agent index (n floats), unless
// `agent_id_input: false`.
//
// Hosting: a multi-agent node hosts every policy; an inference, learner or replay group hosts the
// policies its `policies` param lists ("all" by default), split over its replicas in contiguous
// blocks (replica r of R takes entries [r·P/R, (r+1)·P/R)). Learners and replays host exactly one
// policy per replica. A connection between two policy-hosting groups links each pair of replicas
// that host a policy in common (nodes/cluster/link_plan.hpp); each agent's data travels only to
// the replicas of its policy.
//
// Errors: ConfigError (file, line, key) for an unknown agent or policy, an agent with no policy, a
// policy no agent uses, a bad key or value. Plain values; thread-safe to read.
#pragma once

#include <string>
#include <vector>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cluster {

class YamlReader;

/// Fills config.policies and config.agent_policy from the top-level `policies:` and `agents:`
/// keys (after the nodes were parsed: the env comes from the multi-agent node).
void parse_policies(const YamlReader& top, ClusterConfig& config);

/// The policies (indices into config.policies, ascending) that replica `index` of `node` hosts;
/// empty for a kind that hosts none or a file without policies.
[[nodiscard]] std::vector<int> hosted_policies(const ClusterConfig& config, const NodeConfig& node,
                                               int index);

/// True when both ends of `connection` host policies: the link plan pairs replicas by policy.
[[nodiscard]] bool routed_by_policy(const ClusterConfig& config,
                                    const ConnectionConfig& connection);

/// Checks each policy-hosting group's `policies` param and replica count (ConfigError naming the
/// param's line).
void validate_policy_hosting(const ClusterConfig& config);

}  // namespace tagflow::cluster
