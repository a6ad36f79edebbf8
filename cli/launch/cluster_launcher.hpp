// launch_cluster: `tagflow up FILE` with the process placement (what the cluster file describes).
//
// Phases, in order:
//   1. validate: load the cluster file (ConfigError → exit 2, "FILE:LINE: KEY: ..."), plan this
//      machine's processes (launch_plan.hpp; an unknown --host → exit 2);
//      A head host (no --host; the other hosts have `ssh`) also starts the other hosts' halves
//      over ssh (cli/launch/remote_hosts.hpp); each is one child, `host:NAME`, supervised like a
//      node; the progress line scrapes every host's endpoints, so it covers the whole cluster;
//   2. start: the log directory (default runs/CLUSTER-TIMESTAMP/, printed) and this run's keys,
//      then the coordinator (reactor mode, when its host runs here) and this host's processes as
//      children of a ProcessSupervisor (own process groups, killed with the launcher); their pids
//      go to DIR/pids. How processes start is a LaunchBackend (launch_backend.hpp): local
//      children, and one ssh child per remote host; the launcher supervises all alike;
//   3. supervise: a live progress line on stderr (progress_reporter.hpp) unless quiet, until
//      - every child exited 0: the run ended normally;
//      - a child failed (non-zero exit or a signal): in reactor mode a node that died on its own
//        is reported to the coordinator at once (cli/launch/coordinator_link.hpp, PROTOCOL.md §8),
//        which ends the run on every host; the others get a short window (0.5 s in reactor mode)
//        to wind down on their own, then are stopped (SIGTERM, grace, SIGKILL); the error names
//        the failed process (or the coordinator's report of another host's) and shows its last
//        log lines;
//      - SIGINT or SIGTERM reached the launcher, or (--stop-with-stdin) its stdin closed: every
//        child is stopped (ssh children too, which ends the far halves); a traced run's
//        processes write their traces as they stop (hosts/process_trace.hpp), merged here;
//   4. report: the nodes' result files (DIR/P.json) are combined (hosts/run_combine.hpp) into the
//      run summary: stop reason, mean return, env steps, seconds and digest on stdout, the JSON in
//      DIR/summary.json and at --summary. With several hosts (reactor mode) the other hosts'
//      launchers send their results to the coordinator, which stores them in this DIR; they say
//      where the summary is (cli/launch/run_report.hpp). In actor mode the samplers that joined
//      while it ran
//      (`tagflow node --join`, found through the nodes' metrics: joined_roster.hpp) are in the
//      progress line while they are in, and their env steps in the summary.
//
// Recovery (reactor mode; one launcher per host, not a head starting others over ssh): with
// `restart: {max: N}` a failed run (a process that died here, any signal or exit status but 2,
// the coordinator included, or a federate of another host: this host's processes then exit 4)
// makes the launcher stop its other processes and start all of them again, up to N times. The
// coordinator's host chooses the checkpoint: the newest usable one (`checkpoint:`,
// federation/checkpoint_store.hpp; a refused one is named with the reason, and one that a federate
// of another host reported it could not load is passed over), or the start without one. The other
// hosts' processes follow the coordinator's start tag and load their own parts from this host's
// RUN_DIR/checkpoints (PROTOCOL.md §9.6). The run being deterministic, it ends with the digest of
// an uninterrupted run; the summary lists each restart (process, how it died, the checkpoint, the
// wall time lost). `--resume RUN_DIR` continues a run whose launcher itself died, from RUN_DIR's
// newest usable checkpoint, in RUN_DIR (on every host of a multi-host run).
// Actor mode (one launcher per host): every node gets `--checkpoints
// RUN_DIR/checkpoints` (with `checkpoint:`; each replica checkpoints itself every `every` of wall
// time) and, with `restart: {max: N}`, `--peers-restart` (a lost peer is waited for). A process
// that dies (any signal or exit status but 2) while no process has ended yet is started again
// alone, under its name (the same certificate), with `--resume RUN_DIR/checkpoints` (each replica
// from its own newest checkpoint), logging to DIR/P.restartK.log; the others link to it again and
// the run goes on. The summary's restart says, per replica, the checkpoint and the work since it
// (its count the launcher last read from its metrics, minus the checkpoint's), and the messages
// its peers had sent it unanswered. `--resume` is for reactor mode only.
//
// Exit codes (as `--placement single`): 0 the run ended and reached the target return (or had
// none); 3 it stopped before the target; 2 a bad cluster file, host or node param; 1 a process
// failed or the launcher could not start one; 130 interrupted by SIGINT/SIGTERM.
// Not thread-safe; call from the main thread (it installs SIGINT/SIGTERM handlers while it runs
// and restores the previous ones before returning).
#pragma once

#include <optional>
#include <string>

#include "cli/launch/launch_plan.hpp"
#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cli {

/// Files of a run directory (LOG_DIR) that --resume and a continuing Slurm job read: the copy of
/// the file the run started with, the mode it ran in (`reactor` or `actor`, --mode), and the
/// summary, written only once the run reached its stop (on the coordinator's host).
inline constexpr const char* kRunFile = "cluster.yaml";
inline constexpr const char* kModeFile = "mode";
inline constexpr const char* kSummaryFile = "summary.json";

struct LaunchOptions {
  std::string file;                   // the cluster file
  std::optional<cluster::Mode> mode;  // overrides the file's mode
  std::string host;                   // --host; empty: see launch_plan.hpp
  std::string summary_path;           // also write the summary JSON here
  std::string log_dir;                // empty: runs/CLUSTER-TIMESTAMP
  bool quiet = false;                 // no progress line
  std::string tagflow;                // the tagflow executable the children run
  bool stop_with_stdin = false;       // stop like on SIGTERM when stdin closes (started over ssh)
  std::string resume_run;             // --resume RUN_DIR: continue that run from its checkpoint
  int node = -1;                      // a Slurm node or Kubernetes pod: only its processes
  std::string node_name;              // that node's name
  NodeManager manager = NodeManager::none;  // what started this launcher (launch_plan.hpp)
  std::string run_keys;                     // keys minted for the whole run elsewhere (Slurm, k8s)
  bool trace = false;  // --trace: record the run as the file's `trace: true` would
};

/// Runs the cluster as described above and returns the exit code.
[[nodiscard]] int launch_cluster(const LaunchOptions& options);

}  // namespace tagflow::cli
