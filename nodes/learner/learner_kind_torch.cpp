// The learner kind's LibTorch factories (the rest of the kind is learner_kind.cpp): its reactor
// binding and its actor.
//
// The learner evaluates its policy (fixed-seed episodes) every eval_every updates when the file
// has stop.target_return, and stops the run when the mean reaches it. Its result carries the
// weights hash as of the cutoff and the run's mean return: the evaluation that reached the
// target, or else one evaluation of the weights it holds at the end.
#include <memory>

#include "nodes/kind/actor_setup.hpp"
#include "nodes/kind/replica_binding.hpp"
#include "nodes/kind/torch_replica_config.hpp"
#include "nodes/learner/learner_actor.hpp"
#include "nodes/learner/learner_reactor.hpp"

namespace tagflow::nodes {
namespace learner_kind_torch_parts {

std::unique_ptr<Evaluator> make_evaluator(const EvaluationConfig& e) {
  return std::make_unique<Evaluator>(e.env_id, e.hidden, e.episodes, e.seed, e.max_steps);
}

class LearnerBinding : public ReplicaBinding {
 public:
  LearnerBinding(const ReplicaSetup& s, reactors::Environment& env, const NodeKind& kind)
      : kind_(kind), evaluation_(s.config.evaluation), policy_file_(s.config.policy_file) {
    const std::string& name = s.config.name;
    if (!s.config.policies.empty()) {
      policy_ = s.config.agents.policies[static_cast<std::size_t>(s.config.policies.front())].name;
    }
    reactor_ = &env.add<LearnerReactor>(
        name, learner_config(s.config),
        LearnerPortWidths{input_width(s, "batches"), output_width(s, "priorities"),
                          output_width(s, "weights")},
        s.config.target_return && evaluation_ ? make_evaluator(*evaluation_) : nullptr,
        evaluation_ ? s.config.target_return : std::nullopt);
    reactor_->set_metrics(s.metrics);
  }
  const NodeKind& kind() const override { return kind_; }
  reactors::PortBase& output(const std::string& port, std::size_t ch) override {
    if (port == "priorities") return reactor_->priorities[ch];
    if (port == "weights") return reactor_->weights[ch];
    no_port(reactor_->name(), port);
  }
  reactors::PortBase& input(const std::string& port, std::size_t ch) override {
    if (port == "batches") return reactor_->batches[ch];
    no_port(reactor_->name(), port);
  }
  ReplicaProgress progress() const override {
    ReplicaProgress p;
    p.updates = reactor_->updates.load(std::memory_order_relaxed);
    p.last_evaluation = reactor_->last_evaluation.load(std::memory_order_relaxed);
    p.weights_version = static_cast<std::uint64_t>(p.updates);
    return p;
  }
  ReplicaResult result(std::optional<reactors::Tag> cutoff) override {
    ReplicaResult r = result_of(reactor_->name(), kind_);
    r.count = reactor_->updates.load();
    r.updates = reactor_->server().updates();
    const WeightsMessage weights = reactor_->server().weights();
    r.weights_version = weights.version;
    r.evaluations = reactor_->evaluations();
    r.target_reached = reactor_->target_reached();
    r.final_weights_hash = reactor_->weights_hash_before(cutoff.value_or(reactors::Tag::forever()));
    if (reactor_->target_reached()) {
      r.mean_return = r.evaluations.back();
    } else if (evaluation_) {
      r.mean_return = make_evaluator(*evaluation_)->mean_return(weights.values);
    }
    r.policy = policy_;
    if (!policy_file_.empty()) {
      reactor_->server().export_torchscript(policy_file_);
      r.policy_file = policy_file_;
    }
    append_channels(r.channels, "priorities", reactor_->priorities_digest(), cutoff);
    append_channels(r.channels, "weights", reactor_->weights_digest(), cutoff);
    return r;
  }
  bool reached_stop_condition() const override { return reactor_->target_reached(); }
  void save_state(StateWriter& out, StateAttachments& /*files*/) override { reactor_->save(out); }
  void load_state(StateReader& in, const std::string& /*file_prefix*/) override {
    reactor_->load(in);
  }

 private:
  const NodeKind& kind_;
  std::optional<EvaluationConfig> evaluation_;
  std::string policy_, policy_file_;
  LearnerReactor* reactor_ = nullptr;
};

std::unique_ptr<ReplicaBinding> make_reactor(const ReplicaSetup& s, reactors::Environment& env) {
  return std::make_unique<LearnerBinding>(s, env, *s.config.kind);
}

caf::actor spawn_actor(caf::actor_system& system, const ReplicaSpawnSetup& s) {
  const ReplicaConfig& r = s.config;
  LearnerActorOptions options{r.name,    r.evaluation ? r.target_return : std::nullopt,
                              nullptr,   s.report,
                              s.metrics, r.policy_file};
  options.recovery = s.recovery;
  if (options.target_return) options.evaluator = make_evaluator(*r.evaluation);
  return caf::actor_cast<caf::actor>(spawn_learner_actor(system, learner_config(r), options));
}

}  // namespace learner_kind_torch_parts

void install_learner_torch(NodeKind& kind) {
  kind.reactor = learner_kind_torch_parts::make_reactor;
  kind.actor = learner_kind_torch_parts::spawn_actor;
}

}  // namespace tagflow::nodes
