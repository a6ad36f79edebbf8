// report_run: the end of a normal `tagflow up` run (every child exited 0).
//
// Reads the result file of each process this launcher ran (DIR/P.json,
// nodes/kind/process_result.hpp) and, when this machine ran the whole cluster, combines them
// (hosts::combine_results, placement "process") into the run summary: one line on stdout
//   stop target_return: mean_return 482.3, env_steps 57344, updates 3456, 41.2 s, digest 0123...
// and the JSON in DIR/summary.json and at `summary_path` (when not empty), each written through a
// temporary file and a rename. When other hosts run part of the cluster (`--host`) in reactor
// mode, their launchers send their results to the coordinator (PROTOCOL.md §8), which stores them
// in the coordinator's host's DIR: the launcher of that host prints and writes the whole
// cluster's summary as above, and every other launcher sends its results, prints where that
// summary is, and reports its own processes (env steps, stop reason). In actor mode (no
// coordinator) each launcher reports its own processes and no summary is written.
//
// Samplers that joined the running cluster (`joined`, actor mode: cli/launch/joined_roster.hpp)
// have no result file here: their last counts seen by the launcher are added to the env steps and
// listed as nodes of the summary (kind sampler, unit env_steps), and printed on stdout.
//
// Restarts (`restart:`, cli/launch/cluster_launcher.hpp) are printed, one line each, and listed
// in the summary JSON.
//
// Returns the launcher's exit code: 0 (target reached or none set), 3 (stopped before the target
// return), 1 (a result file missing or unreadable, a result the coordinator did not store, or the
// summary could not be written; printed).
#pragma once

#include <string>
#include <vector>

#include "cli/launch/joined_roster.hpp"
#include "cli/launch/launch_plan.hpp"
#include "hosts/run_summary.hpp"
#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cli {

[[nodiscard]] int report_run(const cluster::ClusterConfig& config, const LaunchPlan& plan,
                             const std::string& log_dir, const std::string& summary_path,
                             const std::vector<JoinedReplica>& joined = {},
                             const std::vector<hosts::RestartRecord>& restarts = {},
                             double wall_seconds = 0.0);

}  // namespace tagflow::cli
