// LaunchPlan: what `tagflow up` starts on this machine, derived from a validated cluster file.
//
// - hosts: the hosts this launcher plays. `--host NAME` plays one host of the file (a multi-host
//   cluster is the same file run with `--host` on each machine); without it a file with one host
//   plays that host, and a file whose hosts all have loopback addresses (127.x, ::1, localhost)
//   plays all of them on this machine. A multi-host file whose other hosts (every host but the
//   coordinator's that runs a process) all have `ssh` makes this machine the head: it plays the
//   coordinator's host and starts the others over ssh (`remote_hosts`,
//   cli/launch/remote_hosts.hpp). Any other multi-host file needs `--host` (LaunchError).
// - the coordinator: started in reactor mode when its host is played here (actor mode has none),
//   with `--results DIR` when other hosts run processes (their results come to DIR, PROTOCOL.md
//   §8);
// - processes: every process of cluster::plan_processes() whose host is played here, in file
//   order, each run as `tagflow node --config FILE --name P --result DIR/P.json --quiet
//   [--mode M]` with its output in DIR/P.log (the coordinator's in DIR/coordinator.log);
// - checkpoints (reactor mode, `checkpoint:`, one launcher per host): every child gets
//   `--checkpoints DIR/checkpoints`; a restarted attempt's coordinator also `--start-time` (its
//   nodes load their parts of the checkpoint at the start tag it sends), and every child of a
//   restarted attempt logs to DIR/P.restartN.log.
//
// Pure functions over values (no processes, no file system) except default_log_dir(), which reads
// nothing either: it only formats the name. Errors: LaunchError with a message for the user.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/launch/process_supervisor.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/process_plan.hpp"

namespace tagflow::cli {

class LaunchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What started this launcher on its node, when something other than a user did.
enum class NodeManager { none, slurm, kubernetes };

struct LaunchPlan {
  std::string cluster_file;  // as the children get it (absolute)
  cluster::Mode mode = cluster::Mode::reactor;
  bool mode_overridden = false;                   // --mode was given: passed on to every node
  std::string file_argument;                      // the cluster file as given (for ssh)
  std::vector<std::string> hosts;                 // the hosts played here
  std::vector<cluster::HostConfig> remote_hosts;  // the hosts started from here over ssh
  bool coordinator = false;                       // start the coordinator here
  std::vector<cluster::ProcessPlan> processes;    // this machine's, in file order
  std::size_t cluster_processes = 0;              // processes of the whole cluster
  std::string run_keys;  // the CURVE key pairs minted for this run (empty: none), an absolute path
  /// With `checkpoint:`: RUN_DIR/checkpoints, absolute (empty: no checkpoints), what every child
  /// gets as --checkpoints. Actor mode: each replica's own checkpoint is there.
  std::string checkpoints;
  /// Actor mode with `restart:`: the launcher restarts a dead process alone, so the others wait
  /// for it (`tagflow node --peers-restart`).
  bool peers_restart = false;
  /// Resume from this checkpoint directory (CHECKPOINTS/<time_ns>) at that time: the
  /// coordinator's --start-time (the nodes follow its start tag).
  std::string resume;
  std::int64_t resume_time_ns = 0;
  /// With `trace:` or --trace (reactor mode): RUN_DIR/trace, absolute, what every child gets as
  /// --trace (tracing/README.md); empty: not traced.
  std::string trace;
  /// The attempt (0 = the first); restarts log to DIR/P.restartN.log.
  int attempt = 0;
  /// Inside a Slurm allocation or a Kubernetes Job: the node (pod) of the played host this
  /// launcher runs on (its index among the host's nodes, ProcessPlan::node, and its name); -1
  /// and "" elsewhere.
  int node = -1;
  std::string node_name;
  NodeManager manager = NodeManager::none;
  /// The file's `cpu_bind: auto` in reactor mode: LocalChildren binds this machine's processes to
  /// its CPUs (bind_to_cpus). A Slurm node's or a pod's launcher never does: its manager decides
  /// where the job's threads run, and other jobs may share the machine's CPUs.
  bool bind_cpus = false;

  /// True when every process of the cluster runs on this launcher's machine.
  bool whole_cluster() const { return processes.size() == cluster_processes; }
};

/// The plan for `host` ("" = choose as described above). Throws LaunchError for an unknown host
/// or a multi-host file without --host. With `node` >= 0 (a Slurm host's node, named
/// `node_name`) only that node's processes, and the coordinator on node 0.
LaunchPlan make_launch_plan(const cluster::ClusterConfig& config, const std::string& cluster_file,
                            std::optional<cluster::Mode> mode, const std::string& host,
                            int node = -1, const std::string& node_name = "");

/// A TCP port a process of `plan` listens on, with the lines of the file that set it.
struct PlannedListener {
  int line = 0;         // the port's line
  std::string key;      // e.g. "nodes.sampler.data_port + 1" (replica 1 of the group)
  std::string address;  // where it binds; "" when only the process can tell (a Slurm or
                        // Kubernetes host's address, learnt in its allocation; an interface name)
  long port = 0;
  int address_line = 0;     // where the address comes from
  std::string address_key;  // hosts.NAME.address, monitoring.bind, or the gateway's param
};

/// Every listener of the processes `plan` starts on this machine, in file order: the
/// coordinator's port and metrics port (reactor mode), each replica's data port (reactor mode;
/// in actor mode each replica's that is published, every kind's but the transient samplers') and
/// metrics port, and each inference replica's gateway (nodes/gateway/PROTOCOL.md §1). What
/// `tagflow up` checks before it starts anything, and `tagflow doctor --config` reports.
std::vector<PlannedListener> planned_listeners(const cluster::ClusterConfig& config,
                                               const LaunchPlan& plan);

/// The child processes of `plan`: local_child_specs(), then remote_child_specs().
std::vector<ChildSpec> child_specs(const LaunchPlan& plan, const std::string& tagflow,
                                   const std::string& log_dir, const std::string& ssh = "ssh");
/// The processes of `plan` that run on this machine: the coordinator first (when it runs here),
/// then the nodes. `tagflow` is the path of the tagflow executable; logs and results go to
/// `log_dir`.
std::vector<ChildSpec> local_child_specs(const LaunchPlan& plan, const std::string& tagflow,
                                         const std::string& log_dir);
/// One ssh client per remote host of `plan` (`ssh` is its path; cli/launch/remote_hosts.hpp).
std::vector<ChildSpec> remote_child_specs(const LaunchPlan& plan, const std::string& ssh,
                                          const std::string& log_dir);

/// The CPUs this process may run on (sched_getaffinity: what taskset, a cpuset or a container
/// left it), ascending; empty when they cannot be read.
std::vector<int> usable_cpus();

/// A process of this machine pinned to one CPU (its Cpus_allowed_list is one number), as
/// bind_to_cpus pins a cluster's: the CPU, and the CPU time it has used so far.
struct PinnedProcess {
  int cpu = -1;
  double cpu_seconds = 0;
  int pid = 0;
};

/// Every user process (no kernel thread) of this machine pinned to one CPU, read from /proc.
std::vector<PinnedProcess> pinned_processes();

/// `cpus` in the order bind_to_cpus deals them: first the CPUs the fewest of `pinned` sit on,
/// among those first the CPUs whose pinned processes used the least CPU time in whole seconds,
/// then in the order of `cpus` turned to begin at its `first`th CPU (taken modulo its size). On a
/// machine where another cluster already pinned its processes, a second one starts on the CPUs
/// the first left lightest (its learner not on the first one's), instead of stacking its roles on
/// the same CPUs; with nothing pinned and `first` 0, `cpus` as they are. `first` tells apart
/// clusters started together, whose pins are as many and have used no CPU time yet
/// (LocalChildren passes one more than where the machine's last deal began, CpuDeal).
std::vector<int> least_pinned_first(const std::vector<int>& cpus,
                                    const std::vector<PinnedProcess>& pinned, int first = 0);

/// Gives each of `specs` one CPU of `cpus` in turn (ChildSpec::cpu), when there are at least two
/// CPUs and at least as many specs as CPUs; otherwise leaves them as they are. The CPUs are shared
/// by several processes then anyway, and a process's threads wake each other for every message
/// (its reacting thread and ZeroMQ's I/O thread): on one CPU that wake-up stays on the CPU, where
/// across CPUs it is an interrupt to the other (docs/clusters.md, "Where processes run").
void bind_to_cpus(std::vector<ChildSpec>& specs, const std::vector<int>& cpus);
/// "coordinator on CPU 0, sampler-0 on 1, ..." for the specs bind_to_cpus bound; "" for none.
std::string describe_cpus(const std::vector<ChildSpec>& specs);

/// Whether `tagflow up` mints run keys (docs/ARCHITECTURE.md, Trust), in either mode: when the file
/// names no keys, does not say `security: none`, and every process of the cluster runs from this
/// launcher (other hosts could not get the keys: they use `tagflow keys generate`).
bool wants_run_keys(const cluster::ClusterConfig& config, const LaunchPlan& plan);

/// The names actor-mode TLS credentials are made for: every process of the file, then `join`
/// (actors/actor_credentials.hpp).
std::vector<std::string> actor_credential_names(const cluster::ClusterConfig& config);

/// Writes fresh key pairs for the coordinator and every federate of `config` into DIR/keys
/// (directory 0700, secret keys 0600; an older DIR/keys is replaced), and the actor-mode TLS
/// credentials of every process into DIR/keys/actor, and returns that directory as an absolute
/// path. Throws transport::CurveKeyError when they cannot be written.
std::string mint_run_keys(const cluster::ClusterConfig& config, const std::string& log_dir);

/// Where a node's result JSON goes: DIR/PROCESS.json.
std::string result_path(const std::string& log_dir, const std::string& process);

/// Where the coordinator writes its grants, messages and silences at the end (`--stats`):
/// DIR/coordinator.stats.json.
std::string coordinator_stats_path(const std::string& log_dir);

/// runs/CLUSTER-YYYYMMDD-HHMMSS (local time).
std::string default_log_dir(const std::string& cluster, std::chrono::system_clock::time_point now);

/// The plan in one line: "host local: coordinator, sampler-0, sampler-1, replay, ...".
std::string describe(const LaunchPlan& plan);

}  // namespace tagflow::cli
