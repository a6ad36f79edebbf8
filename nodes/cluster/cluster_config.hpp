// ClusterConfig: one cluster file (YAML) as typed values, validated before anything starts.
//
// The file format is documented in configs/README.md. load_cluster_config() either returns a
// config that passed every check below or throws ConfigError naming the file, the line and the
// dotted key of the first problem:
//   - unknown keys (at every level, so a typo never silently falls back to a default);
//   - wrong types (a string where a number belongs, a negative count, a malformed duration);
//   - node kinds and connection endpoints that do not exist (node name, or the port of its kind);
//   - a cycle of connections without an `after` delay;
//   - two endpoints on the same host:port (ports of replicas count: port, port+1, ...);
//   - a connection between two groups of different replica counts, both above one (the link
//     plan pairs equal counts i→i and fans one replica out to / in from many);
//   - a `process` shared by groups on different hosts, or named like another group's replica.
// The structs are plain values; nothing here starts a process or opens a socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/numerics.hpp"
#include "nodes/kind/node_kind.hpp"

namespace tagflow::cluster {

/// A problem in a cluster file, located by file, 1-based line and dotted key.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string file, int line, std::string key, const std::string& message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& key() const { return key_; }

 private:
  std::string file_;
  int line_;
  std::string key_;
};

enum class Mode { reactor, actor };

const char* to_string(Mode mode);

/// A node kind's descriptor (nodes/kind/node_kind.hpp); the registry lists them.
using NodeKind = nodes::NodeKind;

/// `hosts.NAME.slurm`: the host is one component of a Slurm heterogeneous job (docs/slurm.md).
/// Empty strings and 0 leave the choice to Slurm's defaults.
struct SlurmRequest {
  std::string partition;
  int nodes = 1;          // its processes are dealt over them (ProcessPlan::node)
  std::string gres;       // e.g. "gpu:1", per node
  int cpus_per_task = 0;  // one task (tagflow launcher) per node
  std::string mem;        // per node, e.g. "16G"
  std::string time;       // e.g. "01:00:00"
  std::string account;
  std::string constraint;
  int line = 0;  // of hosts.NAME.slurm, for errors
};

/// `hosts.NAME.kubernetes`: the host is an Indexed Job of `pods` pods (docs/kubernetes.md).
/// `cpu` and `memory` are Kubernetes quantities ("2", "500m", "4Gi"), requested for each pod
/// (memory is also its limit); `gpu` is its nvidia.com/gpu limit (0: none).
struct KubernetesRequest {
  int pods = 1;  // its processes are dealt over them (ProcessPlan::node)
  std::string cpu;
  std::string memory;
  int gpu = 0;
  int line = 0;  // of hosts.NAME.kubernetes, for errors
};

/// The environment variable through which a node's launcher inside an allocation (`tagflow
/// slurm-node`, `tagflow k8s-pod`) gives every process the run-time addresses of the Slurm and
/// Kubernetes hosts' nodes: "HOST=ADDR,ADDR;HOST=ADDR", node order as in the allocation (a
/// Kubernetes host's pods by index). load_cluster_config() reads it for hosts with `slurm` or
/// `kubernetes`; the older name kSlurmAddressesVariable is read when it is unset.
inline constexpr const char* kNodeAddressesVariable = "TAGFLOW_NODE_ADDRESSES";
inline constexpr const char* kSlurmAddressesVariable = "TAGFLOW_SLURM_ADDRESSES";

struct HostConfig {
  std::string name;
  std::string address;  // where other hosts reach it, e.g. 127.0.0.1 (a Slurm host: its 1st node)
  /// A Slurm resource instead of a fixed address (then `address` is empty until the run).
  std::optional<SlurmRequest> slurm;
  /// Pods of a Kubernetes Indexed Job instead of a fixed address (`address` empty until the run).
  std::optional<KubernetesRequest> kubernetes;
  /// A Slurm or Kubernetes host inside its allocation: the address of each of its nodes (pods)
  /// (kNodeAddressesVariable).
  std::vector<std::string> node_addresses;
  /// How the head host's `tagflow up FILE` starts this host's half (cli/launch/remote_hosts.hpp):
  /// an ssh destination (`user@machine`, an alias of the user's ssh config, `ssh://u@m:port`);
  /// empty: not started over ssh.
  std::string ssh;
  std::string tagflow = "tagflow";  // the tagflow executable there
  std::string workdir;              // the directory it runs in there (empty: the login directory)
  int line = 0;                     // of hosts.NAME, for errors
};

/// True for a Kubernetes quantity as the API server accepts it ("2", "500m", "4Gi", "1e9").
bool is_kubernetes_quantity(const std::string& value);
/// True for a Kubernetes quantity of 0 ("0", "0.0Gi", "0e3"): a pod's CPU or memory that asks for
/// nothing. False for any other text.
bool is_zero_kubernetes_quantity(const std::string& value);

/// The nodes (Slurm) or pods (Kubernetes) a host's processes are dealt over: 1 for a host with
/// an address.
int node_count(const HostConfig& host);

struct CoordinatorConfig {
  std::string host;  // a key of ClusterConfig::hosts
  std::uint16_t port = 7600;
  std::uint16_t metrics_port = 0;  // 0: no metrics endpoint
  int port_line = 0;               // of its port (its section's when the default), for errors
  int metrics_port_line = 0;
  std::chrono::milliseconds heartbeat_timeout{2000};
  std::chrono::milliseconds join_timeout{30000};  // every federate must have joined by then
  int line = 0;
};

/// A node group: `replicas` processes of one kind, named NAME (1 replica) or NAME-0, NAME-1, ...
/// Replica i listens on data_port + i and serves metrics on metrics_port + i.
struct NodeConfig {
  std::string name;
  const NodeKind* kind = nullptr;  // from the registry (nodes/kind/registry.hpp), never null
  int replicas = 1;
  std::string host;
  std::uint16_t data_port = 0;
  std::uint16_t metrics_port = 0;  // 0: no metrics endpoint
  /// Kind-specific parameters (env id, batch size, learning rate...), kept as YAML text per key
  /// so each node kind parses its own; the line of each key is kept for its error messages.
  std::map<std::string, std::string> params;
  std::map<std::string, int> param_lines;
  /// The params written as a YAML list or map ("a list" or "a map", by name): a kind that wants a
  /// string or a number refuses them (NodeParams), one that reads sizes takes a list.
  std::map<std::string, std::string> param_collections;
  int params_line = 0;        // of its `params` key (0 when it has none)
  int line = 0;               // of the node's name in the file
  int data_port_line = 0;     // of its data_port, for errors
  int metrics_port_line = 0;  // of its metrics_port (0 when it has none)
  /// `process: NAME`: every replica of every group with the same value runs in one OS process
  /// called NAME (nodes/cluster/process_plan.hpp). Empty: each replica is its own process.
  std::string process;
  int process_line = 0;

  /// Where an error about the param `param` points: its own line and key (`nodes.NAME.params.P`)
  /// when it is written; left at its default, the node's `params` (`nodes.NAME.params`), or the
  /// node itself (`nodes.NAME`) when it has none.
  struct ParamPlace {
    int line = 0;
    std::string key;
    bool written = false;
  };
  [[nodiscard]] ParamPlace place_of(const std::string& param) const;
};

/// `from: NODE.PORT` → `to: NODE.PORT`, with an optional logical delay (`after`).
struct ConnectionConfig {
  std::string from_node, from_port, to_node, to_port;
  std::optional<std::chrono::nanoseconds> after;  // none: zero-delay (same tag)
  int line = 0;                                   // the list item's
  int from_line = 0, to_line = 0;                 // its `from` and `to` keys'
};

struct StopConfig {
  std::optional<std::int64_t> env_steps;
  std::optional<double> seconds;
  std::optional<double> target_return;
};

/// `checkpoint:` (reactor mode, configs/README.md): the federation's state every `every` of
/// logical time (federation/PROTOCOL.md §9), the newest `keep` complete checkpoints kept.
struct CheckpointConfig {
  std::optional<std::chrono::nanoseconds> every;  // unset: no checkpoints
  int keep = 2;
  int line = 0;  // of the key, for errors found later (a node that cannot checkpoint)
};

/// `trace:` (reactor mode, tracing/README.md): every process records its reactions, waits and
/// messages; `tagflow up` merges them into LOG_DIR/trace.json. `trace: true` or a map.
struct TraceConfig {
  bool enabled = false;
  std::size_t events_per_thread = 200'000;  // each recording thread keeps its latest events
  bool digests = false;          // every data message's hash (and bytes) for `tagflow diff`
  std::uint64_t values_mb = 64;  // payload bytes each federate keeps for `tagflow diff`
};

/// `restart:`: how many times `tagflow up` restarts the run after a process died (from the last
/// complete checkpoint, or from the start without checkpoints).
struct RestartConfig {
  int max = 0;
  int line = 0;
};

struct SecurityConfig {
  bool curve = false;
  std::string keys_dir;   // tagflow keys generate DIR; relative to the cluster file
  int keys_dir_line = 0;  // of security.keys_dir (0 when the file has none), for errors
  /// `security: none`: no per-run keys either, any local process may join (debugging only).
  bool none = false;
  /// The keys are the ones `tagflow up` minted for this run (use_run_keys), not the file's.
  bool run_keys = false;
};

struct MonitoringConfig {
  std::string bind = "127.0.0.1";
  int bind_line = 0;  // of monitoring.bind (0 when the file has none), for errors
};

/// The bounds of an inference batch, for an inference node's `max_batch` / `max_wait` and a
/// policy's: rows per forward pass, and how long a request may wait for its batch.
constexpr std::int64_t kMaxBatchRows = std::int64_t{1} << 20;
constexpr std::chrono::hours kMaxBatchWait{24};

/// One policy of a multi-agent cluster (nodes/cluster/policy_config.hpp).
struct PolicyConfig {
  std::string name;
  std::string hidden = "64";    // hidden layer sizes, "64" or "64,64"
  std::string torchscript;      // a TorchScript file to serve instead of learned weights
  int torchscript_line = 0;     // its line in the file (0: none)
  bool agent_id_input = false;  // the agent's one-hot index follows its observation
  std::vector<int> agents;      // the agents it serves, ascending
  // Its learner is `algo: vdn`: the multi-agent node sends it one joint transition per step.
  bool joint_transitions = false;
  // Its gateway batching, when it differs from the inference node's max_batch / max_wait; both
  // bounded as those are (kMaxBatchRows, kMaxBatchWait).
  std::optional<std::uint32_t> max_batch;
  std::optional<std::chrono::nanoseconds> max_wait;
  int line = 0;
};

/// The multi-agent env of a cluster file and its agents' policies (empty without one).
struct MultiAgentConfig {
  std::string env;  // the multi_agent node's env id
  int num_agents = 0;
  int observation_size = 0;  // per agent (with time_input, the env's + 1)
  int num_actions = 0;       // per agent
  /// `time_input: true`: each observation ends with the episode's elapsed fraction, joint steps
  /// so far / max_episode_steps (the env's step limit; 0: none).
  bool time_input = false;
  int max_episode_steps = 0;
  std::vector<PolicyConfig> policies;  // file order, per_agent policies expanded
  std::vector<int> agent_policy;       // agent index → index into policies

  [[nodiscard]] bool empty() const { return policies.empty(); }
  /// The width of policy `policy`'s input: the observation, plus num_agents with agent_id_input.
  [[nodiscard]] int input_size(int policy) const;
  /// The index of the policy called `name`, or -1.
  [[nodiscard]] int find(const std::string& name) const;
};

struct ClusterConfig {
  std::string file;
  /// FNV-1a 64 of the file's bytes, 16 hex digits: every process of a run reads the same file (a
  /// federate whose file differs from the coordinator's ends the run, federation/PROTOCOL.md §2.3).
  std::string file_digest;
  std::string name;
  int nodes_line = 0;  // of `nodes:`, for errors about the set of nodes found later
  Mode mode = Mode::reactor;
  std::uint64_t seed = 0;
  /// `numerics:` portable (default) or native: the numeric kernels (common/numerics.hpp). Every
  /// process reads it from the file at start (cli/process_numerics.hpp).
  numerics::Mode numerics = numerics::Mode::portable;
  /// `cpu_bind:` auto (default) or none. auto: in reactor mode, a launcher whose processes on its
  /// machine are at least as many as the CPUs it may use runs each process on one CPU of those,
  /// in turn (cli/launch/launch_plan.hpp, bind_to_cpus).
  bool cpu_bind_auto = true;
  std::map<std::string, HostConfig> hosts;
  /// The host listed first in the file: where the coordinator and the nodes run unless they name
  /// one (`host:`).
  std::string first_host;
  CoordinatorConfig coordinator;
  std::vector<NodeConfig> nodes;  // in file order
  std::vector<ConnectionConfig> connections;
  StopConfig stop;
  CheckpointConfig checkpoint;
  TraceConfig trace;
  RestartConfig restart;
  MonitoringConfig monitoring;
  SecurityConfig security;
  MultiAgentConfig multi_agent;  // policies and their agents; empty for single-agent clusters

  /// The node group called `name`, or nullptr.
  const NodeConfig* find_node(const std::string& name) const;
  /// Whether a connection goes to `node`.`port` (an input) / comes from it (an output).
  [[nodiscard]] bool feeds(const std::string& node, const std::string& port) const;
  [[nodiscard]] bool drains(const std::string& node, const std::string& port) const;
};

/// Turns CURVE on with the key pairs in `keys_dir` (a relative path is taken from the working
/// directory, as command lines give it): what `tagflow up` does with the per-run keys it mints
/// for a cluster file that names no keys (docs/ARCHITECTURE.md), and `--run-keys DIR`.
void use_run_keys(ClusterConfig& config, const std::string& keys_dir);

/// For a run whose keys are minted for it (`minted`: "a Slurm job's keys are minted for it in
/// ..."), a keys_dir of the file would go unused: ConfigError at its line when there is one.
void refuse_keys_dir(const ClusterConfig& config, const std::string& minted);

/// The directory of the cluster's keys (CURVE pairs, and actor-mode TLS credentials under
/// actor/): security.keys_dir resolved against the cluster file's folder, or "" without keys.
std::string resolved_keys_dir(const ClusterConfig& config);

/// How the cluster is closed, as the run summary says it (docs/ARCHITECTURE.md): "per-run keys"
/// (minted by tagflow up), "key files" (security.keys_dir), "none" (`security: none`) or "open"
/// (no keys and not `security: none`: processes started by hand, or hosts with their own
/// launchers and no key files).
std::string security_mode(const ClusterConfig& config);

/// Reads and validates a cluster file. Throws ConfigError (file, line, key) on any problem,
/// including a file that cannot be read or is not YAML.
ClusterConfig load_cluster_config(const std::string& path);

/// Same, from YAML text; `file` is only used in error messages.
ClusterConfig parse_cluster_config(const std::string& yaml_text, const std::string& file);

/// The text of the file at `path` as load_cluster_config() reads it: at most one byte more than
/// kMaxClusterFileBytes (yaml_reader.hpp). Throws ConfigError for a directory, a path that is no
/// regular file, or a file that cannot be opened; the text itself is not checked
/// (check_cluster_text, parse_cluster_config).
std::string read_cluster_file(const std::string& path);

/// The longest duration a cluster file may write: 2^62 ns, about 146 years.
inline constexpr std::int64_t kMaxDurationNs = std::int64_t{1} << 62;

/// Parses "250ms", "2s", "1.5s", "10us", "100ns", "1m" (at most kMaxDurationNs). Returns nullopt
/// on anything else; `too_long` then tells whether it was a duration longer than that.
std::optional<std::chrono::nanoseconds> parse_duration(const std::string& text);
std::optional<std::chrono::nanoseconds> parse_duration(const std::string& text, bool& too_long);

/// The process name of replica `index` of a node group: NAME for a single replica, else NAME-i.
std::string replica_name(const NodeConfig& node, int index);

}  // namespace tagflow::cluster
