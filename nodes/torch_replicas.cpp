#include "nodes/torch_replicas.hpp"

#include <stdexcept>

#include "nodes/inference/inference_reactor.hpp"
#include "nodes/learner/learner_reactor.hpp"
#include "nodes/node_params.hpp"

namespace tagflow::nodes {
namespace {

using cluster::NodeKind;

[[noreturn]] void no_port(const std::string& replica, const std::string& port) {
  throw std::invalid_argument("replica '" + replica + "' has no port '" + port + "'");
}

/// The learner's evaluation episodes use their own fixed seed (the same in every placement).
std::uint64_t evaluation_seed(const cluster::ClusterConfig& config) {
  return config.seed + 424242ULL;
}

class LearnerBinding : public ReplicaBinding {
 public:
  LearnerBinding(const ReplicaSetup& s, reactors::Environment& env)
      : env_id_(s.facts->env_id), seed_(evaluation_seed(*s.config)) {
    const NodeParams params(s.group->name, s.group->params, s.group->param_lines);
    const LearnerConfig config = LearnerConfig::from_params(
        params, s.config->seed, s.facts->observation_size, s.facts->num_actions);
    std::unique_ptr<Evaluator> evaluator;
    if (s.config->stop.target_return) {
      evaluator = std::make_unique<Evaluator>(env_id_, config.dqn.network.hidden_sizes,
                                              config.eval_episodes, seed_, config.eval_max_steps);
    }
    reactor_ =
        &env.add<LearnerReactor>(s.name, config,
                                 LearnerPortWidths{s.links->input_width(s.name, "batches"),
                                                   s.links->output_width(s.name, "priorities"),
                                                   s.links->output_width(s.name, "weights")},
                                 std::move(evaluator), s.config->stop.target_return);
    reactor_->set_metrics(s.metrics);
  }
  NodeKind kind() const override { return NodeKind::learner; }
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
    ReplicaResult r;
    r.name = reactor_->name();
    r.kind = "learner";
    r.unit = "updates";
    r.count = reactor_->updates.load();
    r.updates = reactor_->server().updates();
    const WeightsMessage weights = reactor_->server().weights();
    r.weights_version = weights.version;
    r.evaluations = reactor_->evaluations();
    r.target_reached = reactor_->target_reached();
    r.final_weights_hash = reactor_->weights_hash_before(cutoff.value_or(reactors::Tag::forever()));
    if (reactor_->target_reached()) {
      r.mean_return = r.evaluations.back();
    } else {
      const LearnerConfig& config = reactor_->server().config();
      Evaluator final_evaluation(env_id_, config.dqn.network.hidden_sizes, config.eval_episodes,
                                 seed_, config.eval_max_steps);
      r.mean_return = final_evaluation.mean_return(weights.values);
    }
    append_channels(r.channels, "priorities", reactor_->priorities_digest(), cutoff);
    append_channels(r.channels, "weights", reactor_->weights_digest(), cutoff);
    return r;
  }
  bool reached_stop_condition() const override { return reactor_->target_reached(); }

 private:
  std::string env_id_;
  std::uint64_t seed_;
  LearnerReactor* reactor_ = nullptr;
};

class InferenceBinding : public ReplicaBinding {
 public:
  InferenceBinding(const ReplicaSetup& s, reactors::Environment& env) {
    NodeParams params(s.group->name, s.group->params, s.group->param_lines);
    if (!params.has("hidden")) params.set("hidden", s.facts->hidden);
    reactor_ = &env.add<InferenceReactor>(
        s.name,
        InferenceConfig::from_params(params, s.config->seed, s.facts->observation_size,
                                     s.facts->num_actions),
        InferencePortWidths{s.links->input_width(s.name, "observations"),
                            s.links->input_width(s.name, "weights"),
                            s.links->output_width(s.name, "actions")});
    reactor_->set_metrics(s.metrics);
  }
  NodeKind kind() const override { return NodeKind::inference; }
  reactors::PortBase& output(const std::string& port, std::size_t ch) override {
    if (port == "actions") return reactor_->actions[ch];
    no_port(reactor_->name(), port);
  }
  reactors::PortBase& input(const std::string& port, std::size_t ch) override {
    if (port == "observations") return reactor_->observations[ch];
    if (port == "weights") return reactor_->weights[ch];
    no_port(reactor_->name(), port);
  }
  ReplicaProgress progress() const override {
    ReplicaProgress p;
    p.weights_version = reactor_->weights_version.load(std::memory_order_relaxed);
    return p;
  }
  ReplicaResult result(std::optional<reactors::Tag> cutoff) override {
    ReplicaResult r;
    r.name = reactor_->name();
    r.kind = "inference";
    r.unit = "rows";
    r.count = reactor_->rows_served.load();
    r.weights_version = reactor_->weights_version.load();
    append_channels(r.channels, "actions", reactor_->actions_digest(), cutoff);
    return r;
  }
  bool reached_stop_condition() const override { return false; }

 private:
  InferenceReactor* reactor_ = nullptr;
};

}  // namespace

std::unique_ptr<ReplicaBinding> make_replica(const ReplicaSetup& setup,
                                             reactors::Environment& env) {
  switch (setup.group->kind) {
    case NodeKind::learner:
      return std::make_unique<LearnerBinding>(setup, env);
    case NodeKind::inference:
      return std::make_unique<InferenceBinding>(setup, env);
    case NodeKind::sampler:
    case NodeKind::replay:
      break;
  }
  return make_torch_free_replica(setup, env);
}

}  // namespace tagflow::nodes
