// How the links of the link plan (nodes/cluster/link_plan.hpp) become actor-mode links: for each
// link, which replica starts it and towards which peer (actors/control_messages.hpp).
//
// Rule: the sending replica offers its output (connect → Offer → Credit) — except when the
// receiver is of a transient kind (a sampler: nodes/kind/node_kind.hpp), which starts its own
// input links (it subscribes to weights by granting the learner a credit; its `actions` arrive as
// replies to its observations and need no step). So everything a transient replica needs is
// started by itself, and it can join a running cluster and leave it without anyone else changing
// their wiring.
// Pure function over plain values; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/link_plan.hpp"

namespace tagflow::hosts {

struct WiringStep {
  std::string initiator;  // replica that receives (connect, port, peer) from its host
  std::string port;       // the initiator's port (an output, or a sampler's input)
  std::string peer;       // replica at the other end
};

[[nodiscard]] std::vector<WiringStep> plan_wiring(const cluster::ClusterConfig& config,
                                                  const cluster::LinkPlan& links);

/// The kind of replica `name` (a replica of the file, or a joining replica `GROUP-K`;
/// std::invalid_argument for anything else).
[[nodiscard]] const nodes::NodeKind& replica_kind(const cluster::ClusterConfig& config,
                                                  const std::string& name);

}  // namespace tagflow::hosts
