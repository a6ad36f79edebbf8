// run_single_process_cluster: a whole cluster file run in this process as one reactor program
// (`tagflow up FILE --placement single`).
//
// Every replica of every node group becomes a reactor (sampler-0, sampler-1, replay, ...); every
// connection of the file becomes reactor connections with its `after` delay:
//   - groups with equal replica counts connect replica i to replica i;
//   - a single replica fans out to (or in from) every replica of the other group, one multiport
//     channel per peer, in replica order;
//   - other shapes (2 → 3, ...) are rejected with ConfigError naming the connection.
// Logical time starts at 0; the samplers' rounds are round_period apart. The run stops on the
// file's stop condition: target_return (the learner's deterministic evaluation episodes),
// env_steps (each sampler stops after its share), or seconds (wall clock: the only stop that
// depends on timing). The digest folds, in connection order, the hash of everything each
// connection carried (tag and bytes, in tag order) and then the final weights, so the same file
// and seed give the same digest whatever `workers` is.
//
// Errors: cluster::ConfigError for a topology this placement cannot run, ParamError for a bad
// node param (naming node and param), std::invalid_argument for an unsupported env.
// Not thread-safe: call from one thread; it blocks until the run ends.
#pragma once

#include <chrono>
#include <optional>

#include "hosts/run_summary.hpp"
#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::hosts {

struct SingleProcessOptions {
  unsigned workers = 1;  // reactor worker threads (the caller included)
  std::chrono::nanoseconds round_period = std::chrono::milliseconds(1);
  bool progress = false;  // a live line on stderr, at most 4 times per second
};

[[nodiscard]] RunSummary run_single_process_cluster(const cluster::ClusterConfig& config,
                                                    const SingleProcessOptions& options);

}  // namespace tagflow::hosts
