// ReplicaConfig: everything a placement needs to build one replica of a cluster file, computed
// once, the same way for reactor mode and actor mode. Both modes' hosts call replica_config() and
// build their binding from its result; tests/hosts/both_modes_test.cpp holds that they end
// up with identical configurations from the same file.
//
// replica_config() settles what every kind shares — the name, the group, the index, the params
// and the seed: replica i of the g-th node group (1-based, file order) gets
// seed * 1000003 + g * 1000 + i, whatever process or mode it runs in (replica_seed()) — and hands
// the rest to its kind's configure() (nodes/<kind>/<kind>_kind.cpp), which reads and checks the
// params and fills the kind's fields below: a sampler's SamplerConfig and its share of
// `stop.env_steps`, a replay's ReplayConfig and checkpoint path, a learner's target and
// evaluation, a multi-agent env node's config, the policies a replica hosts. The LibTorch
// configurations of learners and inference servers are built from these by
// nodes/kind/torch_replica_config.hpp.
// A replica of a transient kind joining a running cluster as GROUP-K (K beyond the group's
// replicas) is configured like replica K of its group.
// stop_reason() is the one rule both modes use to name why a process stopped.
//
// Errors: nodes::ParamError for a bad param (naming node and param), std::invalid_argument for a
// name that is no replica of the file or an env that does not exist, cluster::ConfigError for a
// cluster without an env-stepping node. Pure functions of the file; thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "nodes/cluster/cluster_config.hpp"
#include "nodes/kind/node_kind.hpp"
#include "nodes/multi_agent/multi_agent_server.hpp"
#include "nodes/node_params.hpp"
#include "nodes/replay/replay_server.hpp"
#include "nodes/sampler/sampler_server.hpp"

namespace tagflow::nodes {

/// Facts every replica of a cluster shares: the env of the first env-stepping group and the
/// first training group's network shape.
struct ClusterFacts {
  std::string env_id = "CartPole-v1";
  int observation_size = 0;
  int num_actions = 0;
  std::string hidden = "64,64";   // the first learner's `hidden` param
  std::size_t sampler_count = 0;  // replicas of env-stepping kinds in the cluster

  /// Throws cluster::ConfigError when the cluster has no env-stepping node.
  static ClusterFacts of(const cluster::ClusterConfig& config);
};

/// The greedy evaluation a learner runs (nodes/learner/evaluator.hpp).
struct EvaluationConfig {
  std::string env_id;
  std::vector<int> hidden;
  int episodes = 20;
  std::int64_t max_steps = 0;  // per episode; 0: to the episode's end
  std::uint64_t seed = 0;
};

struct ReplicaConfig {
  std::string name;                            // replica name, e.g. sampler-0
  const NodeKind* kind = nullptr;              // its descriptor (nodes/kind/node_kind.hpp)
  const cluster::NodeConfig* group = nullptr;  // points into the ClusterConfig
  int index = 0;                               // replica index within its group
  std::uint64_t seed = 0;                      // replica_seed()

  // sampler
  std::optional<nodes::SamplerConfig> sampler;
  std::int64_t step_limit = -1;  // env steps before it asks to stop; -1: no limit
  // replay
  std::optional<nodes::ReplayConfig> replay;
  std::string checkpoint_path;  // empty: no checkpoints
  // learner
  std::optional<double> target_return;
  std::optional<EvaluationConfig> evaluation;
  // multi_agent
  std::optional<nodes::MultiAgentNodeConfig> multi_agent;
  // multi-agent clusters: the policies this replica hosts (nodes/cluster/policy_config.hpp) and
  // the file's env and policies; a learner exports its policy to policy_file at the end.
  std::vector<int> policies;
  cluster::MultiAgentConfig agents;
  std::string policy_file;                                   // empty: no export
  std::map<std::string, std::vector<int>> replica_policies;  // every replica hosting any
  std::map<std::string, int> learner_policies;               // learner replica → its policy
  std::size_t transition_links = 0;   // multi_agent: replicas its `transitions` port reaches
  std::size_t observation_links = 0;  // multi_agent: servers its `observations` port reaches
  bool experience_linked = false;     // inference: its `experience` port reaches a replay
  std::set<int> replayed_policies;    // inference: policies of the replays `experience` reaches
  // learner and inference (LibTorch configs: nodes/kind/torch_replica_config.hpp)
  nodes::NodeParams params;  // the group's params (`hidden` filled in for samplers and inference)
  std::uint64_t network_seed = 0;  // the cluster seed: every learner/inference starts alike
  int observation_size = 0;
  int num_actions = 0;

  /// Every field as `key=value` lines, in a fixed order (tests compare configurations with it).
  [[nodiscard]] std::string describe() const;
};

/// The seed of replica `index` of `group` (see above).
[[nodiscard]] std::uint64_t replica_seed(const cluster::ClusterConfig& config,
                                         const cluster::NodeConfig& group, int index);

/// The group and index of replica `name`: a replica of the file, or a replica of a transient kind
/// joining as GROUP-K (std::invalid_argument for anything else).
[[nodiscard]] std::pair<const cluster::NodeConfig*, int> locate_replica(
    const cluster::ClusterConfig& config, const std::string& name);

/// The configuration of replica `name` (a replica of the file, or a joining replica GROUP-K).
[[nodiscard]] ReplicaConfig replica_config(const cluster::ClusterConfig& config,
                                           const ClusterFacts& facts, const std::string& name);

/// The learner's hidden layer sizes (facts.hidden, parsed; 64,64 without a learner).
[[nodiscard]] std::vector<int> learner_hidden_sizes(const ClusterFacts& facts);

/// For kinds' configure() (samplers, inference servers): the learner's `hidden` (facts.hidden)
/// as the replica's when its params leave it out; a `hidden` of its own is refused (at its line)
/// when it differs and a learner's `weights` reach the replica's group, whose weights would not
/// fit its network.
void take_learner_hidden(ReplicaConfig& r, const cluster::ClusterConfig& config,
                         const ClusterFacts& facts);

/// For kinds' configure(): an env-stepping replica's share of `stop.env_steps`, rounded up over
/// every env-stepping replica of the file; -1 without that stop condition.
[[nodiscard]] std::int64_t env_steps_share(const cluster::ClusterConfig& config,
                                           const ClusterFacts& facts);

/// Why a process's replicas stopped, from each replica's reason ("" when it was stopped by
/// someone else; "left" for a sampler that left is ignored): "target_return" over "env_steps"
/// over "seconds" over "signal" (actor mode: SIGTERM or SIGINT stopped the run); "seconds" also
/// when `timed_out`; else "" (stopped by another process).
[[nodiscard]] std::string stop_reason(const std::vector<std::string>& replica_reasons,
                                      bool timed_out);

}  // namespace tagflow::nodes

namespace tagflow::hosts {
using nodes::ClusterFacts;
using nodes::EvaluationConfig;
using nodes::locate_replica;
using nodes::replica_config;
using nodes::replica_seed;
using nodes::ReplicaConfig;
using nodes::stop_reason;
}  // namespace tagflow::hosts
