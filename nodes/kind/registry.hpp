// The registry of node kinds: every kind a cluster file may name, each declared once in its own
// folder (nodes/kind/node_kind.hpp). registry.cpp lists them, one line per kind.
//
// Thread-safety: the list is built on first use and read-only after install_torch_kinds()
// (nodes/kind/torch_registry.hpp), which a torch binary calls at start-up, except for the
// actor() factories install_actor_kinds() (nodes/kind/actor_registry.hpp) fills in once, before
// anyone reads them.
#pragma once

#include <string>
#include <vector>

#include "monitoring/metric_catalogue.hpp"
#include "nodes/kind/node_kind.hpp"

namespace tagflow::nodes {

/// Every kind, in the registry's order.
[[nodiscard]] const std::vector<const NodeKind*>& node_kinds();

/// The kind called `name`, or nullptr.
[[nodiscard]] const NodeKind* find_node_kind(const std::string& name);

/// The kinds' names, comma-separated (for error messages).
[[nodiscard]] std::string node_kind_names();

/// Every metric family a tagflow process may export: monitoring's own catalogue
/// (monitoring/metric_catalogue.hpp) followed by each kind's families, a family that several
/// kinds declare listed once with every kind among its exporters.
[[nodiscard]] std::vector<monitoring::MetricSpec> full_metric_catalogue();

/// For the torch registry: the kind called `name`, to fill in its factories.
[[nodiscard]] NodeKind& kind_to_complete(const std::string& name);

}  // namespace tagflow::nodes
