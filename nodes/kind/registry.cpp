#include "nodes/kind/registry.hpp"

#include <map>
#include <stdexcept>

// Every node kind, one line each: X(name) declares and lists `NodeKind& name_kind()`, defined in
// nodes/name/name_kind.cpp.
#define TAGFLOW_NODE_KINDS(X) \
  X(sampler)                  \
  X(replay)                   \
  X(learner)                  \
  X(inference)                \
  X(multi_agent)              \
  X(evaluator)

namespace tagflow::nodes {

#define TAGFLOW_DECLARE_KIND(name) NodeKind& name##_kind();
TAGFLOW_NODE_KINDS(TAGFLOW_DECLARE_KIND)
#undef TAGFLOW_DECLARE_KIND

namespace {

std::vector<NodeKind*> build() {
#define TAGFLOW_LIST_KIND(name) &name##_kind(),
  std::vector<NodeKind*> kinds = {TAGFLOW_NODE_KINDS(TAGFLOW_LIST_KIND)};
#undef TAGFLOW_LIST_KIND
  for (NodeKind* kind : kinds) {
    for (monitoring::MetricSpec& spec : kind->metrics) spec.exporters = {kind->name};
  }
  return kinds;
}

std::vector<NodeKind*>& mutable_kinds() {
  static std::vector<NodeKind*> kinds = build();
  return kinds;
}

}  // namespace

const std::vector<const NodeKind*>& node_kinds() {
  static const std::vector<const NodeKind*> kinds(mutable_kinds().begin(), mutable_kinds().end());
  return kinds;
}

const NodeKind* find_node_kind(const std::string& name) {
  for (const NodeKind* kind : node_kinds()) {
    if (kind->name == name) return kind;
  }
  return nullptr;
}

std::string node_kind_names() {
  std::string names;
  for (const NodeKind* kind : node_kinds()) names += (names.empty() ? "" : ", ") + kind->name;
  return names;
}

std::vector<monitoring::MetricSpec> full_metric_catalogue() {
  std::vector<monitoring::MetricSpec> all = monitoring::catalogue();
  std::map<std::string, std::size_t> by_name;
  for (const NodeKind* kind : node_kinds()) {
    for (const monitoring::MetricSpec& spec : kind->metrics) {
      const auto [it, inserted] = by_name.emplace(spec.name, all.size());
      if (inserted) {
        all.push_back(spec);
      } else {
        all[it->second].exporters.push_back(kind->name);
      }
    }
  }
  return all;
}

NodeKind& kind_to_complete(const std::string& name) {
  for (NodeKind* kind : mutable_kinds()) {
    if (kind->name == name) return *kind;
  }
  throw std::invalid_argument("no node kind '" + name + "'");
}

}  // namespace tagflow::nodes
