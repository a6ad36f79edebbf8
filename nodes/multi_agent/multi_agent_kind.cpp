// The multi_agent kind: the env node of a multi-agent file. It steps TrafficJunction under tags,
// asks the inference servers hosting each agent's policy for actions, and sends each policy's
// transitions to its replay; it evaluates the greedy policies beside random play.
#include <memory>

#include "nodes/kind/replica_binding.hpp"
#include "nodes/kind/replica_config.hpp"
#include "nodes/multi_agent/multi_agent_reactor.hpp"
#include "nodes/replica_report.hpp"

namespace tagflow::nodes {

NodeKind& multi_agent_kind();

namespace multi_agent_kind_parts {

void configure(ReplicaConfig& r, const cluster::ClusterConfig& config, const ClusterFacts& facts) {
  const cluster::NodeConfig& group = *r.group;
  for (const cluster::ConnectionConfig& c : config.connections) {
    if (c.from_node != group.name) continue;
    const cluster::NodeConfig& to = *config.find_node(c.to_node);
    if (c.from_port == "transitions") {
      r.transition_links += static_cast<std::size_t>(to.replicas);
    } else if (c.from_port == "observations") {
      // The link plan links the servers that host a policy (every agent's is this node's).
      for (int i = 0; i < to.replicas; ++i) {
        r.observation_links += r.replica_policies.count(cluster::replica_name(to, i));
      }
    }
  }
  r.multi_agent = MultiAgentNodeConfig::from_params(r.params, config.multi_agent, r.seed,
                                                    config.seed + 424242ULL,
                                                    static_cast<std::uint32_t>(r.index));
  r.step_limit = env_steps_share(config, facts);
}

/// Collisions, and the last evaluation beside the random policy on the same seeds (mean_return
/// is the evaluation's): the same figures in both modes.
void multi_agent_figures(ReplicaResult& r, std::int64_t collisions,
                         const std::optional<MultiAgentFigures>& figures) {
  r.collisions = collisions;
  if (!figures) return;
  r.mean_return = figures->mean_return;
  r.multi_agent = figures;
}

class MultiAgentBinding : public ReplicaBinding {
 public:
  MultiAgentBinding(const ReplicaSetup& s, reactors::Environment& env) {
    const std::string& name = s.config.name;
    reactor_ = &env.add<MultiAgentReactor>(
        name, *s.config.multi_agent,
        MultiAgentPortWidths{input_width(s, "actions"),
                             s.links->output_policies(name, "observations"),
                             s.links->output_policies(name, "transitions")},
        s.round_period);
    if (s.config.step_limit >= 0) reactor_->set_step_limit(s.config.step_limit);
    reactor_->set_metrics(s.metrics);
  }
  const NodeKind& kind() const override { return multi_agent_kind(); }
  reactors::PortBase& output(const std::string& port, std::size_t ch) override {
    if (port == "observations") return reactor_->observations[ch];
    if (port == "transitions") return reactor_->transitions[ch];
    no_port(reactor_->name(), port);
  }
  reactors::PortBase& input(const std::string& port, std::size_t ch) override {
    if (port == "actions") return reactor_->actions[ch];
    no_port(reactor_->name(), port);
  }
  ReplicaProgress progress() const override {
    ReplicaProgress p = env_progress(reactor_->env_steps, reactor_->last_return);
    p.last_evaluation = reactor_->last_evaluation.load(std::memory_order_relaxed);
    return p;
  }
  ReplicaResult result(std::optional<reactors::Tag> cutoff) override {
    const MultiAgentServer& server = reactor_->server();
    ReplicaResult r = result_of(reactor_->name(), kind());
    r.count = server.joint_steps();
    set_episode_returns(r, reactor_->finished_returns());
    r.evaluations = server.evaluations();
    std::optional<MultiAgentFigures> figures;
    if (!server.evaluations().empty()) {
      figures = MultiAgentFigures{
          server.last_evaluation().mean_return,  server.last_evaluation().collisions_per_episode,
          server.random_baseline().mean_return,  server.random_baseline().collisions_per_episode,
          server.last_evaluation().episodes,     server.last_evaluation().success_rate,
          server.random_baseline().success_rate, server.config().eval_epsilon,
          server.last_evaluation().joint_steps,  server.last_evaluation().final_one};
    }
    multi_agent_figures(r, server.collisions(), figures);
    set_joint_step_latency(r, reactor_->step_intervals());
    append_channels(r.channels, "observations", reactor_->observations_digest(), cutoff);
    append_channels(r.channels, "transitions", reactor_->transitions_digest(), cutoff);
    return r;
  }
  bool reached_stop_condition() const override { return reactor_->step_limit_reached(); }

 private:
  MultiAgentReactor* reactor_ = nullptr;
};

std::unique_ptr<ReplicaBinding> make_reactor(const ReplicaSetup& s, reactors::Environment& env) {
  return std::make_unique<MultiAgentBinding>(s, env);
}

void actor_result(const ReplicaConfig& replica, const ReplicaReport& report, ReplicaResult& r) {
  std::optional<MultiAgentFigures> figures;
  if (report.mean_return) {
    figures = MultiAgentFigures{*report.mean_return,
                                *report.collisions_per_episode,
                                *report.random_return,
                                *report.random_collisions_per_episode,
                                report.evaluation_episodes,
                                report.success_rate.value_or(0.0),
                                report.random_success_rate.value_or(0.0),
                                replica.multi_agent->eval_epsilon,
                                report.evaluated_at,
                                report.final_evaluation};
  }
  multi_agent_figures(r, report.collisions, figures);
  set_joint_step_latency(r, report.step_intervals);
}

NodeKind make_kind() {
  NodeKind k;
  k.name = "multi_agent";
  k.inputs = {"actions"};
  k.outputs = {"observations", "transitions"};
  k.count_unit = "joint_steps";
  k.count_family = family::kEnvSteps;
  k.own_stop_reason = "env_steps";
  k.steps_env = true;
  k.hosts_policies = true;
  k.checkpointable = false;
  k.metrics = node_families({family::kEnvSteps, family::kEpisodes, family::kReturnMean,
                             family::kLengthMean, family::kCollisions, family::kEvaluations,
                             family::kEvaluationReturn, family::kWeightsVersion});
  k.configure = configure;
  k.reactor = make_reactor;
  k.actor_result = actor_result;
  return k;
}

}  // namespace multi_agent_kind_parts

NodeKind& multi_agent_kind() {
  static NodeKind kind = multi_agent_kind_parts::make_kind();
  return kind;
}

}  // namespace tagflow::nodes
