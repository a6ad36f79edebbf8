#include "hosts/reactor/torch_replicas.hpp"

#include <type_traits>

#include <iostream>
#include <map>
#include <stdexcept>

#include "hosts/torch_replica_config.hpp"
#include "nodes/inference/inference_reactor.hpp"
#include "nodes/inference/policy_bank_reactor.hpp"
#include "nodes/learner/learner_reactor.hpp"

namespace tagflow::hosts {
namespace {

using cluster::NodeKind;

[[noreturn]] void no_port(const std::string& replica, const std::string& port) {
  throw std::invalid_argument("replica '" + replica + "' has no port '" + port + "'");
}

std::unique_ptr<nodes::Evaluator> make_evaluator(const EvaluationConfig& e) {
  return std::make_unique<nodes::Evaluator>(e.env_id, e.hidden, e.episodes, e.seed, e.max_steps);
}

class LearnerBinding : public ReplicaBinding {
 public:
  LearnerBinding(const ReplicaSetup& s, reactors::Environment& env)
      : evaluation_(s.config.evaluation), policy_file_(s.config.policy_file) {
    const std::string& name = s.config.name;
    if (!s.config.policies.empty()) {
      policy_ = s.config.agents.policies[static_cast<std::size_t>(s.config.policies.front())].name;
    }
    reactor_ = &env.add<nodes::LearnerReactor>(
        name, learner_config(s.config),
        nodes::LearnerPortWidths{s.links->input_width(name, "batches"),
                                 s.links->output_width(name, "priorities"),
                                 s.links->output_width(name, "weights")},
        s.config.target_return && evaluation_ ? make_evaluator(*evaluation_) : nullptr,
        evaluation_ ? s.config.target_return : std::nullopt);
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
    const nodes::WeightsMessage weights = reactor_->server().weights();
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
  std::vector<std::string> save_state(StateWriter& out, const std::string& /*prefix*/) override {
    reactor_->save(out);
    return {};
  }
  void load_state(StateReader& in, const std::string& /*file_prefix*/) override {
    reactor_->load(in);
  }

 private:
  std::optional<EvaluationConfig> evaluation_;
  std::string policy_, policy_file_;
  nodes::LearnerReactor* reactor_ = nullptr;
};

/// An inference server's binding over its reactor: InferenceReactor (one policy) or
/// PolicyBankReactor (the policies of a multi-agent file); same ports, counters and result.
template <class Reactor>
class InferenceBinding : public ReplicaBinding {
 public:
  explicit InferenceBinding(Reactor& reactor, nodes::NodeMetrics* metrics) : reactor_(&reactor) {
    reactor_->set_metrics(metrics);
  }
  NodeKind kind() const override { return NodeKind::inference; }
  reactors::PortBase& output(const std::string& port, std::size_t ch) override {
    if (port == "actions") return reactor_->actions[ch];
    if constexpr (std::is_same_v<Reactor, nodes::PolicyBankReactor>) {
      if (port == "experience") return reactor_->experience[ch];
    }
    no_port(reactor_->name(), port);
  }
  reactors::PortBase& input(const std::string& port, std::size_t ch) override {
    if (port == "observations") return reactor_->observations[ch];
    if (port == "weights") return reactor_->weights[ch];
    no_port(reactor_->name(), port);
  }
  /// The inference service gateway beside the reactor: it lives as long as the binding.
  void attach(std::unique_ptr<gateway::ServiceGateway> gateway) { gateway_ = std::move(gateway); }
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
    if constexpr (std::is_same_v<Reactor, nodes::PolicyBankReactor>) {
      if (reactor_->experience.size() > 0) r.outside_transitions = reactor_->outside_transitions;
    }
    append_channels(r.channels, "actions", reactor_->actions_digest(), cutoff);
    if constexpr (std::is_same_v<Reactor, nodes::PolicyBankReactor>) {
      append_channels(r.channels, "experience", reactor_->experience_digest(), cutoff);
    }
    return r;
  }
  bool reached_stop_condition() const override { return false; }
  std::vector<std::string> save_state(StateWriter& out, const std::string& file_prefix) override {
    if constexpr (std::is_same_v<Reactor, nodes::InferenceReactor>) {
      reactor_->save(out);
      return {};
    } else {
      return ReplicaBinding::save_state(out, file_prefix);
    }
  }
  void load_state(StateReader& in, const std::string& file_prefix) override {
    if constexpr (std::is_same_v<Reactor, nodes::InferenceReactor>) {
      reactor_->load(in);
    } else {
      ReplicaBinding::load_state(in, file_prefix);
    }
  }

 private:
  Reactor* reactor_ = nullptr;
  std::unique_ptr<gateway::ServiceGateway> gateway_;
};

/// The gateway of a policy-bank replica (hosts/torch_replica_config.hpp); `reactor` hands it
/// every weights value it loads, and sends the experience it logs when `experience` is linked.
std::unique_ptr<gateway::ServiceGateway> make_gateway(const ReplicaSetup& s,
                                                      gateway::GatewayConfig config,
                                                      const nodes::PolicyBankConfig& bank,
                                                      nodes::PolicyBankReactor& reactor) {
  if (reactor.experience.size() > 0) {
    auto queue = std::make_shared<gateway::ExperienceQueue>(config.max_experience);
    config.experience = queue;
    reactor.set_experience_source([queue] { return queue->take(); });
  }
  std::unique_ptr<gateway::ServiceGateway> gateway = start_gateway(
      s.config, config, bank, s.metrics != nullptr ? &s.metrics->process_metrics() : nullptr);
  if (gateway == nullptr) return nullptr;
  gateway::ServiceGateway* g = gateway.get();
  reactor.set_weights_listener(
      [g](int policy, const nodes::WeightsMessage& weights) { g->offer_weights(policy, weights); });
  return gateway;
}

std::unique_ptr<ReplicaBinding> make_inference(const ReplicaSetup& s, reactors::Environment& env) {
  const std::string& name = s.config.name;
  if (s.config.policies.empty()) {
    auto& reactor = env.add<nodes::InferenceReactor>(
        name, inference_config(s.config),
        nodes::InferencePortWidths{s.links->input_width(name, "observations"),
                                   s.links->input_width(name, "weights"),
                                   s.links->output_width(name, "actions")});
    return std::make_unique<InferenceBinding<nodes::InferenceReactor>>(reactor, s.metrics);
  }
  nodes::PolicyBankPortWidths widths;
  widths.observations = s.links->input_width(name, "observations");
  widths.actions = s.links->output_width(name, "actions");
  for (const std::vector<int>& carried : s.links->input_policies(name, "weights")) {
    widths.weight_policies.push_back(carried.at(0));  // a learner trains one policy
  }
  widths.experience_policies = s.links->output_policies(name, "experience");
  const nodes::PolicyBankConfig bank = policy_bank_config(s.config);
  auto& reactor = env.add<nodes::PolicyBankReactor>(name, bank, widths);
  auto binding = std::make_unique<InferenceBinding<nodes::PolicyBankReactor>>(reactor, s.metrics);
  if (const std::optional<gateway::GatewayConfig> config = gateway_config(s.config)) {
    binding->attach(make_gateway(s, *config, bank, reactor));
  }
  return binding;
}

}  // namespace

std::unique_ptr<ReplicaBinding> make_replica(const ReplicaSetup& setup,
                                             reactors::Environment& env) {
  switch (setup.config.kind) {
    case NodeKind::learner:
      return std::make_unique<LearnerBinding>(setup, env);
    case NodeKind::inference:
      return make_inference(setup, env);
    case NodeKind::sampler:
    case NodeKind::replay:
    case NodeKind::multi_agent:
      break;
  }
  return make_torch_free_replica(setup, env);
}

}  // namespace tagflow::hosts
