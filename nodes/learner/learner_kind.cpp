// The learner kind: a LibTorch DQN learner that trains on the replay's batches, sends priorities
// back and publishes weights; with `stop.target_return` it evaluates its greedy policy and stops
// the run when the mean return reaches the target. Its reactor and actor need LibTorch
// (learner_kind_torch.cpp, installed by nodes/kind/torch_registry.hpp).
#include "common/fnv1a.hpp"
#include "nodes/kind/process_result.hpp"
#include "nodes/kind/replica_config.hpp"
#include "nodes/learner/evaluator.hpp"
#include "nodes/learner/learner_params.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replica_report.hpp"

namespace tagflow::nodes {

NodeKind& learner_kind();

namespace learner_kind_parts {

/// A learner of a multi-agent file trains one policy (validated with the file): its network and
/// the file it exports it to.
void configure_policy(ReplicaConfig& r, const cluster::ClusterConfig& config) {
  const cluster::MultiAgentConfig& m = config.multi_agent;
  const int policy = r.policies.at(0);
  const cluster::PolicyConfig& p = m.policies[static_cast<std::size_t>(policy)];
  // Compared as layer sizes ("064" and [64] are the policy's 64), each read as the params read it.
  if (r.params.has("hidden") &&
      r.params.get_sizes("hidden", {}) !=
          NodeParams("", {{"hidden", p.hidden}}).get_sizes("hidden", {})) {
    r.params.fail("hidden", "the network of policy '" + p.name + "' is set under policies (" +
                                p.hidden + ")");
  }
  r.params.set("hidden", p.hidden);
  (void)LearnerParams::read(r.params);  // checked before any process starts
  r.observation_size = m.input_size(policy);
  r.network_seed = config.seed + static_cast<std::uint64_t>(policy);
  const cluster::NodeConfig& group = *r.group;
  const NodeParams group_params = NodeParams::of(group);
  const std::string dir = group_params.get_string("export_dir", "");
  if (group_params.has("export_dir") && dir.empty()) {
    group_params.fail("export_dir", "an empty directory: name one, or leave the param out");
  }
  if (!dir.empty()) r.policy_file = dir + "/" + p.name + ".pt";
}

void configure(ReplicaConfig& r, const cluster::ClusterConfig& config, const ClusterFacts& facts) {
  if (!config.multi_agent.empty()) {
    configure_policy(r, config);
    return;
  }
  // With an evaluator in the file, the evaluator decides `stop.target_return`: the learner goes
  // on learning (it still evaluates its final weights once, for the summary).
  bool evaluator = false;
  for (const cluster::NodeConfig& node : config.nodes) {
    evaluator = evaluator || node.kind->publishes_evaluations;
  }
  if (!evaluator) r.target_return = config.stop.target_return;
  const LearnerParams p = LearnerParams::read(r.params);  // every param, now
  if (p.value_decomposition) {
    r.params.fail("algo", "vdn trains a policy that several agents of a multi-agent file share");
  }
  r.evaluation = EvaluationConfig{facts.env_id, p.hidden, p.eval_episodes, p.eval_max_steps,
                                  config.seed + 424242ULL};
}

/// Actor mode: the final weights' hash, and the run's mean return as the reactor placements
/// compute it (the evaluation that reached the target, or one evaluation of the final weights).
void actor_result(const ReplicaConfig& replica, const ReplicaReport& report, ReplicaResult& r) {
  r.updates = r.count;
  if (report.final_weights) {
    const WeightsMessage& w = *report.final_weights;
    r.final_weights_hash = fnv1a64(encode(w));
    r.weights_version = w.version;
    if (r.target_reached && !r.evaluations.empty()) {
      r.mean_return = r.evaluations.back();
    } else if (replica.evaluation) {
      const EvaluationConfig& e = *replica.evaluation;
      Evaluator evaluator(e.env_id, e.hidden, e.episodes, e.seed, e.max_steps);
      r.mean_return = evaluator.mean_return(w.values);
    }
  }
  if (!replica.policies.empty()) {
    r.policy = replica.agents.policies[static_cast<std::size_t>(replica.policies.front())].name;
    r.policy_file = report.policy_file;
  }
}

NodeKind make_kind() {
  NodeKind k;
  k.name = "learner";
  k.inputs = {needed_input("batches")};
  k.outputs = {"priorities", "weights"};
  k.count_unit = "updates";
  k.count_family = family::kLearnerUpdates;
  k.own_stop_reason = "target_return";
  k.trains = true;
  k.hosts_policies = true;
  k.needs_torch = true;
  // Its federate reads the network on a thread of its own: a long update must not keep the
  // connection guard from checking its peers (transport/connection_guard.hpp).
  k.network_thread = true;
  k.metrics =
      node_families({family::kLearnerUpdates, family::kLearnerLoss, family::kLearnerUpdateDuration,
                     family::kLearnerPolicyLag, family::kWeightsVersion, family::kEvaluations,
                     family::kEvaluationReturn});
  k.configure = configure;
  k.actor_result = actor_result;
  return k;
}

}  // namespace learner_kind_parts

NodeKind& learner_kind() {
  static NodeKind kind = learner_kind_parts::make_kind();
  return kind;
}

}  // namespace tagflow::nodes
