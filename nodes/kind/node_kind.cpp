#include "nodes/kind/node_kind.hpp"

#include <algorithm>

namespace tagflow::nodes {

bool NodeKind::has_input(const std::string& port) const {
  return std::find(inputs.begin(), inputs.end(), port) != inputs.end();
}

bool NodeKind::has_output(const std::string& port) const {
  return std::find(outputs.begin(), outputs.end(), port) != outputs.end();
}

monitoring::MetricSpec kind_metric(monitoring::MetricType type, std::string name, std::string help,
                                   std::string unit, std::vector<std::string> labels,
                                   std::vector<double> buckets) {
  monitoring::MetricSpec spec;
  spec.id = monitoring::Metric::node_kind;
  spec.name = std::move(name);
  spec.help = std::move(help);
  spec.type = type;
  spec.unit = std::move(unit);
  spec.labels = std::move(labels);
  spec.buckets = std::move(buckets);
  return spec;
}

}  // namespace tagflow::nodes
