// LinkPlan: which output channel of which replica feeds which input channel of which replica.
//
// Shared by every placement (one process, one process per replica, any grouping) so that channel
// numbers, and with them the digest, are the same everywhere. For each connection of the file,
// in file order:
//   - groups with equal replica counts connect replica i to replica i;
//   - a single replica fans out to (or in from) every replica of the other group, in replica
//     order;
//   - between two groups that host policies of a multi-agent file, each pair of replicas that
//     host a policy in common, in (from, to) replica order (nodes/cluster/policy_config.hpp);
// (other shapes are rejected by load_cluster_config). Every port is a multiport: each link takes
// the next free channel of its output and of its input, in the order above. Each link keeps its
// connection's `after` delay. Plain values; thread-safe to read.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cluster {

struct LinkEnd {
  std::string replica;  // replica name, e.g. sampler-1
  std::string port;     // port name of its kind
  std::size_t channel = 0;
};

struct Link {
  std::size_t connection = 0;  // index into ClusterConfig::connections
  LinkEnd from, to;
  std::optional<std::chrono::nanoseconds> after;  // none: zero delay (same tag)
  /// Routed by policy (policy_config.hpp): the policies both ends host, the only ones whose data
  /// this link carries. Empty otherwise.
  std::vector<int> policies;
};

struct LinkPlan {
  std::vector<Link> links;  // connection order, then replica order

  /// Channels of output `port` of `replica` (0 when nothing is connected to it).
  [[nodiscard]] std::size_t output_width(const std::string& replica, const std::string& port) const;
  /// Channels of input `port` of `replica`.
  [[nodiscard]] std::size_t input_width(const std::string& replica, const std::string& port) const;
  /// Per channel of output (input) `port` of `replica`: the policies its link carries.
  [[nodiscard]] std::vector<std::vector<int>> output_policies(const std::string& replica,
                                                              const std::string& port) const;
  [[nodiscard]] std::vector<std::vector<int>> input_policies(const std::string& replica,
                                                             const std::string& port) const;
};

/// The link plan of a loaded config. Throws ConfigError for a connection shape it cannot pair
/// (only for a config that bypassed load_cluster_config's checks).
[[nodiscard]] LinkPlan plan_links(const ClusterConfig& config);

}  // namespace tagflow::cluster
