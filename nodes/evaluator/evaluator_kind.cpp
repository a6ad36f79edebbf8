// The evaluator kind (what RLlib calls evaluation workers): it takes the learner's weights,
// plays greedy episodes on fixed seeds of its own env on its own schedule (every `every` weights
// versions), and publishes the mean returns in metrics and in the run summary; with
// `stop.target_return` in the file it stops the run when a mean reaches it, so the learner need
// not stop learning to evaluate.
//
// Params: env (the cluster's env), hidden (the learner's), episodes (10), max_steps (0: to the
// episode's end), every (100 weights versions). Its episodes' seeds derive from its replica seed.
#include <memory>

#include "nodes/evaluator/evaluator_reactor.hpp"
#include "nodes/kind/replica_binding.hpp"
#include "nodes/kind/replica_config.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replica_report.hpp"

namespace tagflow::nodes {

NodeKind& evaluator_kind();

namespace evaluator_kind_parts {

void configure(ReplicaConfig& r, const cluster::ClusterConfig& config, const ClusterFacts& facts) {
  r.params.check_known({"env", "hidden", "episodes", "max_steps", "every"});
  if (!config.multi_agent.empty()) {
    r.params.fail("env", "an evaluator plays single-agent envs (this file has policies:)");
  }
  const std::string env = r.params.get_string("env", facts.env_id);
  if (env != facts.env_id) {
    r.params.fail("env", "the learner's network is shaped for " + facts.env_id + ", not " + env);
  }
  EvaluationConfig e;
  e.env_id = env;
  const std::vector<int> learners = learner_hidden_sizes(facts);
  e.hidden = r.params.get_sizes("hidden", learners);
  if (e.hidden != learners) {
    r.params.fail("hidden", "the evaluator plays the learner's network, hidden \"" + facts.hidden +
                                "\" (leave the param out)");
  }
  e.episodes = static_cast<int>(r.params.get_int("episodes", 10, 1));
  e.max_steps = r.params.get_int("max_steps", 0);
  e.seed = r.seed;
  (void)r.params.get_int("every", 100, 1);
  r.evaluation = e;
  r.target_return = config.stop.target_return;
}

class EvaluatorBinding : public ReplicaBinding {
 public:
  EvaluatorBinding(const ReplicaSetup& s, reactors::Environment& env) {
    reactor_ = &env.add<EvaluatorReactor>(s.config.name, EvaluatorSettings::of(s.config),
                                          input_width(s, "weights"));
    reactor_->set_metrics(s.metrics);
  }
  const NodeKind& kind() const override { return evaluator_kind(); }
  reactors::PortBase& output(const std::string& port, std::size_t /*ch*/) override {
    no_port(reactor_->name(), port);
  }
  reactors::PortBase& input(const std::string& port, std::size_t ch) override {
    if (port == "weights") return reactor_->weights[ch];
    no_port(reactor_->name(), port);
  }
  ReplicaProgress progress() const override {
    ReplicaProgress p;
    p.last_evaluation = reactor_->last_evaluation.load(std::memory_order_relaxed);
    return p;
  }
  ReplicaResult result(std::optional<reactors::Tag> /*cutoff*/) override {
    ReplicaResult r = result_of(reactor_->name(), kind());
    r.evaluations = reactor_->schedule().evaluations();
    r.count = static_cast<std::int64_t>(r.evaluations.size());
    r.weights_version = reactor_->schedule().weights_version();
    r.target_reached = reactor_->schedule().target_reached();
    if (!r.evaluations.empty()) r.mean_return = r.evaluations.back();
    return r;
  }
  bool reached_stop_condition() const override { return reactor_->schedule().target_reached(); }

 private:
  EvaluatorReactor* reactor_ = nullptr;
};

std::unique_ptr<ReplicaBinding> make_reactor(const ReplicaSetup& s, reactors::Environment& env) {
  return std::make_unique<EvaluatorBinding>(s, env);
}

void actor_result(const ReplicaConfig& /*replica*/, const ReplicaReport& /*report*/,
                  ReplicaResult& r) {
  if (!r.evaluations.empty()) r.mean_return = r.evaluations.back();
}

NodeKind make_kind() {
  NodeKind k;
  k.name = "evaluator";
  k.inputs = {needed_input("weights")};
  k.count_unit = "evaluations";
  k.count_family = family::kEvaluations;
  k.own_stop_reason = "target_return";
  k.publishes_evaluations = true;
  k.checkpointable = false;
  k.metrics =
      node_families({family::kEvaluations, family::kEvaluationReturn, family::kWeightsVersion});
  k.configure = configure;
  k.reactor = make_reactor;
  k.actor_result = actor_result;
  return k;
}

}  // namespace evaluator_kind_parts

NodeKind& evaluator_kind() {
  static NodeKind kind = evaluator_kind_parts::make_kind();
  return kind;
}

}  // namespace tagflow::nodes
