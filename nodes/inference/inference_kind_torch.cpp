// The inference kind's LibTorch factories (the rest of the kind is inference_kind.cpp): its
// reactor binding (an InferenceReactor for one policy, or a PolicyBankReactor for the policies of
// a multi-agent file, with its service gateway when the group has `gateway_port`) and its actor.
#include <memory>
#include <type_traits>

#include "nodes/gateway/experience_queue.hpp"
#include "nodes/inference/inference_actor.hpp"
#include "nodes/inference/inference_reactor.hpp"
#include "nodes/inference/policy_bank_actor.hpp"
#include "nodes/inference/policy_bank_reactor.hpp"
#include "nodes/kind/actor_setup.hpp"
#include "nodes/kind/replica_binding.hpp"
#include "nodes/kind/torch_replica_config.hpp"

namespace tagflow::nodes {
namespace inference_kind_torch_parts {

/// An inference server's binding over its reactor: InferenceReactor (one policy) or
/// PolicyBankReactor (the policies of a multi-agent file); same ports, counters and result.
template <class Reactor>
class InferenceBinding : public ReplicaBinding {
 public:
  InferenceBinding(Reactor& reactor, NodeMetrics* metrics, const NodeKind& kind)
      : kind_(kind), reactor_(&reactor) {
    reactor_->set_metrics(metrics);
  }
  const NodeKind& kind() const override { return kind_; }
  reactors::PortBase& output(const std::string& port, std::size_t ch) override {
    if (port == "actions") return reactor_->actions[ch];
    if constexpr (std::is_same_v<Reactor, PolicyBankReactor>) {
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
    ReplicaResult r = result_of(reactor_->name(), kind_);
    r.count = reactor_->rows_served.load();
    r.weights_version = reactor_->weights_version.load();
    if constexpr (std::is_same_v<Reactor, PolicyBankReactor>) {
      if (reactor_->experience.size() > 0) r.outside_transitions = reactor_->outside_transitions;
    }
    append_channels(r.channels, "actions", reactor_->actions_digest(), cutoff);
    if constexpr (std::is_same_v<Reactor, PolicyBankReactor>) {
      append_channels(r.channels, "experience", reactor_->experience_digest(), cutoff);
    }
    return r;
  }
  bool reached_stop_condition() const override { return false; }
  void save_state(StateWriter& out, StateAttachments& files) override {
    if constexpr (std::is_same_v<Reactor, InferenceReactor>) {
      reactor_->save(out);
    } else {
      ReplicaBinding::save_state(out, files);
    }
  }
  void load_state(StateReader& in, const std::string& file_prefix) override {
    if constexpr (std::is_same_v<Reactor, InferenceReactor>) {
      reactor_->load(in);
    } else {
      ReplicaBinding::load_state(in, file_prefix);
    }
  }

 private:
  const NodeKind& kind_;
  Reactor* reactor_ = nullptr;
  std::unique_ptr<gateway::ServiceGateway> gateway_;
};

/// The gateway of a policy-bank replica (nodes/kind/torch_replica_config.hpp); `reactor` hands it
/// every weights value it loads, and sends the experience it logs when `experience` is linked.
std::unique_ptr<gateway::ServiceGateway> make_gateway(const ReplicaSetup& s,
                                                      gateway::GatewayConfig config,
                                                      const PolicyBankConfig& bank,
                                                      PolicyBankReactor& reactor) {
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
      [g](int policy, const WeightsMessage& weights) { g->offer_weights(policy, weights); });
  return gateway;
}

std::unique_ptr<ReplicaBinding> make_inference(const ReplicaSetup& s, reactors::Environment& env) {
  const std::string& name = s.config.name;
  if (s.config.policies.empty()) {
    auto& reactor = env.add<InferenceReactor>(
        name, inference_config(s.config),
        InferencePortWidths{input_width(s, "observations"), input_width(s, "weights"),
                            output_width(s, "actions")});
    return std::make_unique<InferenceBinding<InferenceReactor>>(reactor, s.metrics, *s.config.kind);
  }
  PolicyBankPortWidths widths;
  widths.observations = input_width(s, "observations");
  widths.actions = output_width(s, "actions");
  for (const std::vector<int>& carried : s.links->input_policies(name, "weights")) {
    widths.weight_policies.push_back(carried.at(0));  // a learner trains one policy
  }
  widths.experience_policies = s.links->output_policies(name, "experience");
  const PolicyBankConfig bank = policy_bank_config(s.config);
  auto& reactor = env.add<PolicyBankReactor>(name, bank, widths);
  auto binding =
      std::make_unique<InferenceBinding<PolicyBankReactor>>(reactor, s.metrics, *s.config.kind);
  if (const std::optional<gateway::GatewayConfig> config = gateway_config(s.config);
      config && !s.trial) {
    binding->attach(make_gateway(s, *config, bank, reactor));
  }
  return binding;
}

caf::actor spawn_actor(caf::actor_system& system, const ReplicaSpawnSetup& s) {
  const ReplicaConfig& r = s.config;
  if (!r.policies.empty()) {
    // Each learner trains one policy: its weights load into that policy's slot.
    PolicyBankActorOptions options;
    options.name = r.name;
    options.weight_policies = r.learner_policies;
    options.report = s.report;
    options.metrics = s.metrics;
    options.peer_policies = r.replica_policies;
    options.recovery = s.recovery;
    const PolicyBankConfig bank = policy_bank_config(r);
    if (std::optional<gateway::GatewayConfig> config = gateway_config(r)) {
      if (r.experience_linked) {
        auto queue = std::make_shared<gateway::ExperienceQueue>(config->max_experience);
        config->experience = queue;
        options.experience_source = [queue] { return queue->take(); };
      }
      // The gateway lives as long as the actor: its weights listener holds it.
      std::shared_ptr<gateway::ServiceGateway> service = start_gateway(
          r, *config, bank, s.metrics != nullptr ? &s.metrics->process_metrics() : nullptr);
      if (service != nullptr) {
        options.weights_listener = [service](int policy, const WeightsMessage& weights) {
          service->offer_weights(policy, weights);
        };
      }
    }
    return caf::actor_cast<caf::actor>(spawn_policy_bank_actor(system, bank, options));
  }
  InferenceActorOptions options{r.name, s.report, s.metrics};
  options.recovery = s.recovery;
  return caf::actor_cast<caf::actor>(spawn_inference_actor(system, inference_config(r), options));
}

}  // namespace inference_kind_torch_parts

void install_inference_torch(NodeKind& kind) {
  kind.reactor = inference_kind_torch_parts::make_inference;
  kind.actor = inference_kind_torch_parts::spawn_actor;
}

}  // namespace tagflow::nodes
