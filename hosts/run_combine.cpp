#include "hosts/run_combine.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

#include "common/fnv1a.hpp"
#include "nodes/cluster/link_plan.hpp"
#include "nodes/kind/replica_config.hpp"

namespace tagflow::hosts {
namespace {

/// Every replica's result, and the result of the process that ran it, by replica name.
using ResultsByReplica =
    std::map<std::string, std::pair<const ReplicaResult*, const ProcessResult*>>;

const std::pair<const ReplicaResult*, const ProcessResult*>& result_of(
    const ResultsByReplica& by_name, const std::string& replica) {
  const auto it = by_name.find(replica);
  if (it == by_name.end()) throw std::invalid_argument("no result for replica '" + replica + "'");
  return it->second;
}

/// The hash of every link's sending channel, in link order, each with its connection index.
std::uint64_t channels_digest(const cluster::ClusterConfig& config,
                              const ResultsByReplica& by_name) {
  std::uint64_t digest = kFnv1aOffset;
  for (const cluster::Link& link : cluster::plan_links(config).links) {
    const ReplicaResult& sender = *result_of(by_name, link.from.replica).first;
    const ChannelResult* channel = sender.find_channel(link.from.port, link.from.channel);
    if (channel == nullptr) {
      throw std::invalid_argument("the result of '" + link.from.replica + "' has no channel " +
                                  link.from.port + "[" + std::to_string(link.from.channel) + "]");
    }
    digest = fnv1a64_u64(link.connection, digest);
    digest = fnv1a64_u64(channel->hash, digest);
  }
  return digest;
}

/// Adds replica `r` of `node` (its process ran `seconds`) to the summary's nodes, env steps,
/// returns, multi-agent figures, evaluators, outside transitions and policy files.
void add_replica(RunSummary& summary, const cluster::NodeConfig& node, const ReplicaResult& r,
                 double seconds) {
  summary.nodes.push_back({r.name, r.kind, r.unit, r.count,
                           seconds > 0 ? static_cast<double>(r.count) / seconds : 0.0});
  if (node.kind->steps_env) {
    summary.env_steps += r.count;
    summary.episode_returns.push_back(r.episode_returns);
  }
  if (r.multi_agent && !summary.multi_agent) {
    summary.multi_agent = r.multi_agent;
    summary.evaluations = r.evaluations;
  }
  if (r.joint_step_p50 && !summary.joint_step_p50) {
    summary.joint_step_p50 = r.joint_step_p50;
    summary.joint_step_p99 = r.joint_step_p99;
  }
  if (r.outside_transitions) {
    summary.outside_transitions = summary.outside_transitions.value_or(0) + *r.outside_transitions;
  }
  if (r.resent_in_transit) {
    summary.resent_in_transit = summary.resent_in_transit.value_or(0) + *r.resent_in_transit;
  }
  if (node.kind->publishes_evaluations) {
    summary.evaluators.push_back({r.name, r.evaluations, r.target_reached});
  }
  if (node.kind->trains && !r.policy_file.empty()) {
    summary.policy_files.emplace_back(r.policy, r.policy_file);
  }
}

/// What the learners (in file order) add: their final weights to the digest, their updates,
/// weights version and, in a single-agent run, the evaluations and the mean return.
void add_learners(RunSummary& summary, const std::vector<const ReplicaResult*>& learners,
                  bool multi_agent, std::uint64_t& digest) {
  const ReplicaResult* learner = learners.empty() ? nullptr : learners.front();
  if (multi_agent) {
    // Every policy's learner: its final weights, in file order.
    for (const ReplicaResult* l : learners) {
      if (l->final_weights_hash) digest = fnv1a64_u64(*l->final_weights_hash, digest);
    }
    if (summary.multi_agent) summary.mean_return = summary.multi_agent->mean_return;
    if (learner != nullptr) {
      summary.updates = 0;
      for (const ReplicaResult* l : learners) summary.updates += l->updates;
      summary.weights_version = learner->weights_version;
    }
  } else if (learner != nullptr) {
    if (learner->final_weights_hash) digest = fnv1a64_u64(*learner->final_weights_hash, digest);
    summary.updates = learner->updates;
    summary.weights_version = learner->weights_version;
    summary.evaluations = learner->evaluations;
    summary.mean_return = learner->mean_return.value_or(0.0);
  }
}

}  // namespace

RunSummary combine_results(const cluster::ClusterConfig& config,
                           const std::vector<ProcessResult>& results, std::string placement) {
  ResultsByReplica by_name;
  for (const ProcessResult& p : results) {
    for (const ReplicaResult& r : p.replicas) by_name[r.name] = {&r, &p};
  }
  RunSummary summary;
  summary.mode = results.empty() ? cluster::to_string(config.mode) : results.front().mode;
  summary.placement = std::move(placement);
  if (summary.placement != "single") summary.security = cluster::security_mode(config);
  std::vector<numerics::Report> reports;
  for (const ProcessResult& p : results) {
    summary.seconds = std::max(summary.seconds, p.seconds);
    if (p.numerics) reports.push_back(*p.numerics);
  }
  if (!reports.empty()) summary.numerics = numerics::merge(reports);

  std::uint64_t digest = channels_digest(config, by_name);
  std::vector<const ReplicaResult*> learners;
  for (const cluster::NodeConfig& node : config.nodes) {
    for (int i = 0; i < node.replicas; ++i) {
      const auto& [r, process] = result_of(by_name, cluster::replica_name(node, i));
      add_replica(summary, node, *r, process->seconds);
      if (node.kind->trains) learners.push_back(r);
    }
  }
  add_learners(summary, learners, !config.multi_agent.empty(), digest);
  // An evaluator that reached the target stopped the run: its evaluation is the run's return.
  // (The learner's own final evaluation is of the weights it stopped with, which in process
  // placement can be a few updates past the digest's cutoff.)
  for (const EvaluatorFigures& e : summary.evaluators) {
    if (config.multi_agent.empty() && e.target_reached && !e.evaluations.empty()) {
      summary.mean_return = e.evaluations.back();
      break;
    }
  }
  // The processes' reasons, by stop_reason()'s rule; the target counts only as the learner's or
  // an evaluator's result has it (a process may report one its cutoff left out).
  std::vector<std::string> reasons;
  for (const ProcessResult& p : results) {
    reasons.push_back(p.stop_reason == "target_return" ? "" : p.stop_reason);
  }
  bool target = !learners.empty() && learners.front()->target_reached;
  for (const EvaluatorFigures& e : summary.evaluators) target = target || e.target_reached;
  if (target) reasons.push_back("target_return");
  summary.stop_reason = stop_reason(reasons, false);
  summary.digest = digest;
  const std::optional<double>& goal = config.stop.target_return;
  summary.target_reached = goal && (target || summary.mean_return >= *goal);
  if (summary.mode == "actor") {
    summary.unreproducible = "actor mode";
  } else if (summary.outside_transitions.value_or(0) > 0) {
    summary.unreproducible = "logged outside transitions";
  } else if (summary.stop_reason == "seconds") {
    summary.unreproducible = "stopped by stop.seconds";
  }
  summary.digest_reproducible = summary.unreproducible.empty();
  return summary;
}

}  // namespace tagflow::hosts
