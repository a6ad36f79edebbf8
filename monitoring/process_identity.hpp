// ProcessIdentity: who a process is, as the constant labels of every series it exports.
//
// `node` is the process name from the cluster file (coordinator, replay, sampler-0, ...), `kind`
// the node kind or `coordinator`, `mode` the execution mode (reactor or actor). Plain values.
#pragma once

#include <optional>
#include <string>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::monitoring {

/// The kinds of tagflow processes: the coordinator and the four node kinds.
enum class ProcessKind { coordinator, sampler, replay, learner, inference };

const char* to_string(ProcessKind kind);

/// "coordinator", "sampler", ... → the kind; nullopt for anything else.
std::optional<ProcessKind> parse_process_kind(const std::string& text);

ProcessKind process_kind(cluster::NodeKind kind);

struct ProcessIdentity {
  std::string node;  // process name; must be non-empty
  ProcessKind kind = ProcessKind::coordinator;
  cluster::Mode mode = cluster::Mode::reactor;
};

}  // namespace tagflow::monitoring
