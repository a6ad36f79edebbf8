// run_actor_cluster: a whole cluster file in this process as CAF actors — actor mode with
// placement single (`tagflow up FILE --placement single --mode actor`).
//
// Every replica of every node group becomes a node actor in one actor system; the links of the
// link plan (the same wiring as the reactor placement's connections) become actor-mode links
// (hosts/actor/actor_wiring.hpp) with credit-based flow control. There is no logical time: samplers
// run as fast as their credits allow, the learner updates as minibatches arrive, and results
// depend on arrival order. The run stops on the file's stop condition (the learner's evaluation
// reaching target_return, a sampler reaching its env_steps share, or `seconds` of wall time),
// which floods the cluster as a StopRun.
//
// The summary comes from hosts::combine_results like every placement's, with mode "actor"; its
// digest folds no channel hashes (actor mode keeps none) and is not reproducible
// (RunSummary::digest_reproducible = false).
// Errors: cluster::ConfigError, nodes::ParamError, std::invalid_argument as the reactor
// placement. Blocks until the run ends; call from one thread.
#pragma once

#include <cstddef>

#include "hosts/actor/replica_spawner.hpp"
#include "hosts/run_summary.hpp"
#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::hosts {

struct ActorClusterOptions {
  std::size_t worker_threads = 0;  // CAF scheduler threads (0: one per core)
  bool progress = false;           // a live line on stderr, 4 times per second
};

[[nodiscard]] hosts::RunSummary run_actor_cluster(const cluster::ClusterConfig& config,
                                                  const ActorClusterOptions& options);

}  // namespace tagflow::hosts
