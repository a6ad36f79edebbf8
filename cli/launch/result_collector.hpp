// ResultCollector: the coordinator's side of PROTOCOL.md §8 in `tagflow coordinator --results
// DIR`: the results of the processes away from the coordinator (other hosts', or other Slurm
// nodes' or pods' of its host: cluster::runs_with_coordinator()), handed over by their launchers,
// land in DIR/PROCESS.json beside those of the processes beside it, where the coordinator's
// launcher combines them all into the cluster's summary (DIR/summary.json,
// cli/launch/run_report.hpp).
//
// receive() accepts a result only from a process of the cluster file that runs away from the
// coordinator (a launcher cannot overwrite a local result), sent with the key of one of that
// process's replicas, whose JSON parses as a ProcessResult of that process; it writes it
// atomically and answers where the summary goes. Anything else is refused with the reason.
// Not thread-safe: the coordinator's loop thread only.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "coordinator/coordinator.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/process_plan.hpp"

namespace tagflow::cli {

class ResultCollector {
 public:
  ResultCollector(const cluster::ClusterConfig& config, std::string dir);

  /// A result from the launcher speaking for `federate` (the key it authenticated with).
  coordinator::ResultReceipt receive(const std::string& federate, const std::string& process,
                                     const std::string& json);
  /// True when every process away from the coordinator has its result stored.
  [[nodiscard]] bool complete() const { return missing().empty(); }
  /// The processes away from the coordinator without a stored result, in file order.
  [[nodiscard]] std::vector<std::string> missing() const;

 private:
  std::vector<cluster::ProcessPlan> remote_;  // processes away from the coordinator
  std::string dir_;
  std::set<std::string> stored_;
};

}  // namespace tagflow::cli
