#include "hosts/run_combine.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "common/fnv1a.hpp"
#include "nodes/cluster/link_plan.hpp"
#include "nodes/kind/replica_config.hpp"

namespace tagflow::hosts {
RunSummary combine_results(const cluster::ClusterConfig& config,
                           const std::vector<ProcessResult>& results, std::string placement) {
  std::map<std::string, std::pair<const ReplicaResult*, const ProcessResult*>> by_name;
  for (const ProcessResult& p : results) {
    for (const ReplicaResult& r : p.replicas) by_name[r.name] = {&r, &p};
  }
  RunSummary summary;
  summary.mode = results.empty() ? cluster::to_string(config.mode) : results.front().mode;
  summary.placement = std::move(placement);
  if (summary.placement != "single") summary.security = cluster::security_mode(config);
  summary.digest_reproducible = summary.mode != "actor";
  for (const ProcessResult& p : results) summary.seconds = std::max(summary.seconds, p.seconds);

  std::uint64_t digest = kFnv1aOffset;
  for (const cluster::Link& link : cluster::plan_links(config).links) {
    const auto it = by_name.find(link.from.replica);
    if (it == by_name.end()) {
      throw std::invalid_argument("no result for replica '" + link.from.replica + "'");
    }
    const ChannelResult* channel =
        it->second.first->find_channel(link.from.port, link.from.channel);
    if (channel == nullptr) {
      throw std::invalid_argument("the result of '" + link.from.replica + "' has no channel " +
                                  link.from.port + "[" + std::to_string(link.from.channel) + "]");
    }
    digest = fnv1a64_u64(link.connection, digest);
    digest = fnv1a64_u64(channel->hash, digest);
  }

  const ReplicaResult* learner = nullptr;
  bool evaluator_reached = false;
  const bool multi_agent = !config.multi_agent.empty();
  std::vector<const ReplicaResult*> learners;
  for (const cluster::NodeConfig& node : config.nodes) {
    for (int i = 0; i < node.replicas; ++i) {
      const std::string name = cluster::replica_name(node, i);
      const auto it = by_name.find(name);
      if (it == by_name.end()) throw std::invalid_argument("no result for replica '" + name + "'");
      const ReplicaResult& r = *it->second.first;
      const double seconds = it->second.second->seconds;
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
        summary.outside_transitions =
            summary.outside_transitions.value_or(0) + *r.outside_transitions;
        if (*r.outside_transitions > 0) summary.digest_reproducible = false;
      }
      if (node.kind->publishes_evaluations) {
        summary.evaluators.push_back({r.name, r.evaluations, r.target_reached});
        if (r.target_reached) evaluator_reached = true;
      }
      if (node.kind->trains) {
        if (learner == nullptr) learner = &r;
        learners.push_back(&r);
        if (!r.policy_file.empty()) summary.policy_files.emplace_back(r.policy, r.policy_file);
      }
    }
  }
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
  // The processes' reasons, by stop_reason()'s rule; the target counts only as the learner's
  // result has it (a process may report one its learner's cutoff left out).
  std::vector<std::string> reasons;
  for (const ProcessResult& p : results) {
    reasons.push_back(p.stop_reason == "target_return" ? "" : p.stop_reason);
  }
  if ((learner != nullptr && learner->target_reached) || evaluator_reached) {
    reasons.push_back("target_return");
  }
  summary.stop_reason = stop_reason(reasons, false);
  summary.digest = digest;
  return summary;
}

}  // namespace tagflow::hosts
