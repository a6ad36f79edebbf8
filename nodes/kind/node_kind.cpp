#include "nodes/kind/node_kind.hpp"

#include <algorithm>

namespace tagflow::nodes {

namespace {

const PortSpec* find_port(const std::vector<PortSpec>& ports, const std::string& name) {
  const auto it =
      std::find_if(ports.begin(), ports.end(), [&](const PortSpec& p) { return p.name == name; });
  return it == ports.end() ? nullptr : &*it;
}

}  // namespace

const PortSpec* NodeKind::input(const std::string& port) const { return find_port(inputs, port); }

const PortSpec* NodeKind::output(const std::string& port) const { return find_port(outputs, port); }

std::vector<std::string> port_names(const std::vector<PortSpec>& ports) {
  std::vector<std::string> names;
  names.reserve(ports.size());
  for (const PortSpec& p : ports) names.push_back(p.name);
  return names;
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
