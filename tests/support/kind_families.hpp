// For tests that build a node process's metrics by hand: the metric families of node kind `kind`
// (its descriptor's, nodes/kind/registry.hpp), what the process hosts give its ProcessMetrics.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "monitoring/metric_catalogue.hpp"
#include "nodes/kind/registry.hpp"

namespace tagflow::test {

inline const std::vector<monitoring::MetricSpec>& families(const std::string& kind) {
  const nodes::NodeKind* found = nodes::find_node_kind(kind);
  if (found == nullptr) throw std::invalid_argument("no node kind " + kind);
  return found->metrics;
}

}  // namespace tagflow::test
