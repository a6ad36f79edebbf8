#include "nodes/cluster/link_plan.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "nodes/cluster/policy_config.hpp"

namespace tagflow::cluster {
namespace {

std::vector<std::string> replicas_of(const NodeConfig& node) {
  std::vector<std::string> names;
  for (int i = 0; i < node.replicas; ++i) names.push_back(replica_name(node, i));
  return names;
}

std::size_t next_channel(std::vector<std::pair<std::string, std::size_t>>& used,
                         const std::string& key) {
  for (auto& [name, count] : used) {
    if (name == key) return count++;
  }
  used.emplace_back(key, 1);
  return 0;
}

}  // namespace

std::size_t LinkPlan::output_width(const std::string& replica, const std::string& port) const {
  std::size_t width = 0;
  for (const Link& link : links) {
    if (link.from.replica == replica && link.from.port == port) ++width;
  }
  return width;
}

std::size_t LinkPlan::input_width(const std::string& replica, const std::string& port) const {
  std::size_t width = 0;
  for (const Link& link : links) {
    if (link.to.replica == replica && link.to.port == port) ++width;
  }
  return width;
}

std::vector<std::vector<int>> LinkPlan::output_policies(const std::string& replica,
                                                        const std::string& port) const {
  std::vector<std::vector<int>> out(output_width(replica, port));
  for (const Link& link : links) {
    if (link.from.replica == replica && link.from.port == port)
      out[link.from.channel] = link.policies;
  }
  return out;
}

std::vector<std::vector<int>> LinkPlan::input_policies(const std::string& replica,
                                                       const std::string& port) const {
  std::vector<std::vector<int>> out(input_width(replica, port));
  for (const Link& link : links) {
    if (link.to.replica == replica && link.to.port == port) out[link.to.channel] = link.policies;
  }
  return out;
}

LinkPlan plan_links(const ClusterConfig& config) {
  LinkPlan plan;
  // "replica/port" -> channels used so far, separately for outputs and inputs.
  std::vector<std::pair<std::string, std::size_t>> outputs, inputs;
  for (std::size_t c = 0; c < config.connections.size(); ++c) {
    const ConnectionConfig& conn = config.connections[c];
    const std::vector<std::string> from = replicas_of(*config.find_node(conn.from_node));
    const std::vector<std::string> to = replicas_of(*config.find_node(conn.to_node));
    std::vector<std::pair<std::string, std::string>> pairs;
    std::vector<std::vector<int>> carried;  // per pair, when routed by policy
    if (routed_by_policy(config, conn)) {
      // Each pair of replicas hosting a policy in common: agents' data goes only where its
      // policy lives (policy_config.hpp).
      const NodeConfig& from_group = *config.find_node(conn.from_node);
      const NodeConfig& to_group = *config.find_node(conn.to_node);
      for (std::size_t f = 0; f < from.size(); ++f) {
        const std::vector<int> mine = hosted_policies(config, from_group, static_cast<int>(f));
        for (std::size_t t = 0; t < to.size(); ++t) {
          const std::vector<int> theirs = hosted_policies(config, to_group, static_cast<int>(t));
          std::vector<int> common;
          std::set_intersection(mine.begin(), mine.end(), theirs.begin(), theirs.end(),
                                std::back_inserter(common));
          if (common.empty()) continue;
          pairs.emplace_back(from[f], to[t]);
          carried.push_back(std::move(common));
        }
      }
    } else if (from.size() == to.size()) {
      for (std::size_t i = 0; i < from.size(); ++i) pairs.emplace_back(from[i], to[i]);
    } else if (from.size() == 1) {
      for (const std::string& t : to) pairs.emplace_back(from[0], t);
    } else if (to.size() == 1) {
      for (const std::string& f : from) pairs.emplace_back(f, to[0]);
    } else {
      throw ConfigError(config.file, conn.line, "connections[" + std::to_string(c) + "]",
                        "connect equal replica counts or one replica to many");
    }
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const auto& [f, t] = pairs[i];
      Link link;
      if (!carried.empty()) link.policies = carried[i];
      link.connection = c;
      link.from = {f, conn.from_port, next_channel(outputs, f + "/" + conn.from_port)};
      link.to = {t, conn.to_port, next_channel(inputs, t + "/" + conn.to_port)};
      link.after = conn.after;
      plan.links.push_back(std::move(link));
    }
  }
  return plan;
}

}  // namespace tagflow::cluster
