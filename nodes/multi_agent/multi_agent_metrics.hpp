// MultiAgentMetrics: what a multi_agent env node's binding (either mode) tells its NodeMetrics
// after joint steps: the joint steps, the finished training episodes (returns, lengths,
// collisions) and the greedy evaluations that ended since the last call. The counts start at 0
// in a new process (a restarted one reports its restored totals once, as its counters start from
// 0). Not thread-safe: one binding calls it from its own thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nodes/multi_agent/multi_agent_server.hpp"
#include "nodes/node_metrics.hpp"

namespace tagflow::nodes {

class MultiAgentMetrics {
 public:
  /// Takes `server`'s finished episodes and adds them, the joint steps and the evaluations since
  /// the last call to `metrics` (when set), and sets its weights version (the lowest that chose
  /// the last joint actions); returns the episodes, for the binding's own figures.
  MultiAgentServer::Finished publish(MultiAgentServer& server, NodeMetrics* metrics) {
    MultiAgentServer::Finished finished = server.take_finished();
    if (metrics == nullptr) return finished;
    metrics->add_env_steps(server.joint_steps() - steps_);
    metrics->set_weights_version(server.weights_version());
    steps_ = server.joint_steps();
    metrics->add_episodes(finished.returns);
    metrics->add_multi_agent_episodes(finished.lengths, finished.collisions);
    for (; evaluations_ < server.evaluations().size(); ++evaluations_) {
      metrics->add_evaluation(server.evaluations()[evaluations_]);
    }
    return finished;
  }

 private:
  std::int64_t steps_ = 0;
  std::size_t evaluations_ = 0;
};

}  // namespace tagflow::nodes
