// combine_results: the run summary of a cluster from the results of its processes.
//
// Used by every placement: `tagflow up --placement single` passes the one result of its
// in-process run, the multi-process launcher the result files of its `tagflow node` processes.
// The digest folds, for every link of the link plan (cluster/link_plan.hpp) in order, the
// connection index and the hash of the output channel that feeds it, then the hash of the first
// learner's final weights — all as of the cutoff (nodes/README.md), so it depends on the file
// and the seed only, not on grouping, worker threads or how far a federate ran past the stop.
// Env steps are summed over samplers; updates, evaluations and mean return are the first
// learner's; `seconds` is the longest process's.
// Throws std::invalid_argument naming a replica or channel missing from the results.
#pragma once

#include <string>
#include <vector>

#include "hosts/run_summary.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/kind/process_result.hpp"

namespace tagflow::hosts {

[[nodiscard]] RunSummary combine_results(const cluster::ClusterConfig& config,
                                         const std::vector<ProcessResult>& results,
                                         std::string placement);

}  // namespace tagflow::hosts
