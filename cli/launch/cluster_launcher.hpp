// launch_cluster: `tagflow up FILE` with the process placement (what the cluster file describes).
//
// Phases, in order:
//   1. validate: load the cluster file (ConfigError → exit 2, "FILE:LINE: KEY: ..."), plan this
//      machine's processes (launch_plan.hpp; an unknown --host → exit 2);
//   2. start: the log directory (default runs/CLUSTER-TIMESTAMP/, printed), then the coordinator
//      (reactor mode, when its host runs here) and this host's processes as children of a
//      ProcessSupervisor (own process groups, killed with the launcher); their pids go to DIR/pids;
//   3. supervise: a live progress line on stderr (progress_reporter.hpp) unless quiet, until
//      - every child exited 0: the run ended normally;
//      - a child failed (non-zero exit or a signal): the others get a short window to wind down on
//        their own (the coordinator then reports the dead federate), then are stopped (SIGTERM,
//        grace, SIGKILL); the error names the failed process and shows its last log lines;
//      - SIGINT or SIGTERM reached the launcher: every child is stopped;
//   4. report: the nodes' result files (DIR/P.json) are combined (hosts/run_combine.hpp) into the
//      run summary: stop reason, mean return, env steps, seconds and digest on stdout, the JSON in
//      DIR/summary.json and at --summary. In actor mode the samplers that joined while it ran
//      (`tagflow node --join`, found through the nodes' metrics: sampler_roster.hpp) are in the
//      progress line while they are in, and their env steps in the summary.
//
// Exit codes (as `--placement single`): 0 the run ended and reached the target return (or had
// none); 3 it stopped before the target; 2 a bad cluster file, host or node param; 1 a process
// failed or the launcher could not start one; 130 interrupted by SIGINT/SIGTERM.
// Not thread-safe; call from the main thread (it installs SIGINT/SIGTERM handlers while it runs
// and restores the previous ones before returning).
#pragma once

#include <optional>
#include <string>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cli {

struct LaunchOptions {
  std::string file;                   // the cluster file
  std::optional<cluster::Mode> mode;  // overrides the file's mode
  std::string host;                   // --host; empty: see launch_plan.hpp
  std::string summary_path;           // also write the summary JSON here
  std::string log_dir;                // empty: runs/CLUSTER-TIMESTAMP
  bool quiet = false;                 // no progress line
  std::string tagflow;                // the tagflow executable the children run
};

/// Runs the cluster as described above and returns the exit code.
[[nodiscard]] int launch_cluster(const LaunchOptions& options);

}  // namespace tagflow::cli
