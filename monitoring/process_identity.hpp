// ProcessIdentity: who a process is, as the constant labels of every series it exports.
//
// `node` is the process name from the cluster file (coordinator, replay, sampler-0, ...), `kind`
// what the process is (the coordinator, or a node kind of the cluster file: sampler, ...) and
// `mode` the execution mode (reactor or actor). All three are label values: monitoring attaches
// them and the catalogue says which kinds export a family, but it knows nothing of what a kind
// is. Plain values.
#pragma once

#include <string>

namespace tagflow::monitoring {

/// The `kind` of the coordinator process (the only kind that is not a node kind).
inline constexpr const char* kCoordinatorKind = "coordinator";

struct ProcessIdentity {
  std::string node;  // process name; must be non-empty
  std::string kind = kCoordinatorKind;
  std::string mode = "reactor";
};

}  // namespace tagflow::monitoring
