// The sampler kind: a vector env stepped by a local epsilon-greedy MLP policy (or by actions from
// an inference server), sending transitions to replays and taking weights from the learner.
// Transient: samplers may join and leave a running actor-mode cluster (`tagflow node --join`).
#include <memory>
#include <string>

#include "nodes/kind/replica_binding.hpp"
#include "nodes/kind/replica_config.hpp"
#include "nodes/sampler/sampler_reactor.hpp"

namespace tagflow::nodes {

NodeKind& sampler_kind();

namespace sampler_kind_parts {

/// Which of a sampler group's two links to an inference server its file connects.
struct InferenceLinks {
  bool asks = false;      // a connection takes its observations
  bool answered = false;  // a connection brings its actions
};
InferenceLinks inference_links(const std::string& name, const cluster::ClusterConfig& config) {
  return {config.drains(name, "observations"), config.feeds(name, "actions")};
}

/// A sampler acting on an inference server's answers (`policy: inference`) sends its observations
/// every round and steps its envs only when the actions come back: without a connection for
/// either, it would step nothing until the run's time ran out. Where the file writes no policy,
/// it is `inference` when either link is connected and `local` (the sampler's own copy of the
/// policy) when neither is.
void configure(ReplicaConfig& r, const cluster::ClusterConfig& config, const ClusterFacts& facts) {
  if (!config.multi_agent.empty()) return;  // refused with the file (policy_config.cpp)
  take_learner_hidden(r, config, facts);
  const std::string& name = r.group->name;
  const InferenceLinks links = inference_links(name, config);
  r.sampler = SamplerConfig::from_params(r.params, r.seed, static_cast<std::uint32_t>(r.index),
                                         links.asks || links.answered ? "inference" : "local");
  if (!r.sampler->local_policy && !(links.asks && links.answered)) {
    const std::string fix = !links.asks ? "no connection takes " + name +
                                              ".observations: connect it to an inference "
                                              "node's observations"
                                        : "no connection brings " + name + ".actions: connect " +
                                              "an inference node's actions to it (after: 0)";
    r.params.fail("policy", std::string("a sampler with policy inference") +
                                (r.params.has("policy") ? ""
                                                        : " (the default when it is connected "
                                                          "to an inference node)") +
                                " steps its envs on an inference server's answers, and " + fix +
                                ", or act with policy: local");
  }
  r.step_limit = env_steps_share(config, facts);
}

class SamplerBinding : public ReplicaBinding {
 public:
  SamplerBinding(const ReplicaSetup& s, reactors::Environment& env) {
    reactor_ = &env.add<SamplerReactor>(
        s.config.name, *s.config.sampler,
        SamplerPortWidths{input_width(s, "actions"), input_width(s, "weights"),
                          output_width(s, "transitions"), output_width(s, "observations")},
        s.round_period);
    if (s.config.step_limit >= 0) reactor_->set_step_limit(s.config.step_limit);
    reactor_->set_metrics(s.metrics);
  }
  const NodeKind& kind() const override { return sampler_kind(); }
  reactors::PortBase& output(const std::string& port, std::size_t ch) override {
    if (port == "transitions") return reactor_->transitions[ch];
    if (port == "observations") return reactor_->observations[ch];
    no_port(reactor_->name(), port);
  }
  reactors::PortBase& input(const std::string& port, std::size_t ch) override {
    if (port == "actions") return reactor_->actions[ch];
    if (port == "weights") return reactor_->weights[ch];
    no_port(reactor_->name(), port);
  }
  ReplicaProgress progress() const override {
    return env_progress(reactor_->env_steps, reactor_->last_return);
  }
  ReplicaResult result(std::optional<reactors::Tag> cutoff) override {
    ReplicaResult r = result_of(reactor_->name(), kind());
    r.count = reactor_->env_steps.load();
    set_episode_returns(r, reactor_->finished_returns());
    append_channels(r.channels, "transitions", reactor_->transitions_digest(), cutoff);
    append_channels(r.channels, "observations", reactor_->observations_digest(), cutoff);
    return r;
  }
  bool reached_stop_condition() const override { return reactor_->step_limit_reached(); }
  void save_state(StateWriter& out, StateAttachments& /*files*/) override { reactor_->save(out); }
  void load_state(StateReader& in, const std::string& /*file_prefix*/) override {
    reactor_->load(in);
  }

 private:
  SamplerReactor* reactor_ = nullptr;
};

std::unique_ptr<ReplicaBinding> make_reactor(const ReplicaSetup& s, reactors::Environment& env) {
  return std::make_unique<SamplerBinding>(s, env);
}

NodeKind make_kind() {
  NodeKind k;
  k.name = "sampler";
  k.inputs = {"actions", "weights"};
  k.outputs = {"transitions", "observations"};
  k.count_unit = "env_steps";
  k.count_family = family::kEnvSteps;
  k.own_stop_reason = "env_steps";
  k.steps_env = true;
  k.transient = true;
  k.metrics = node_families(
      {family::kEnvSteps, family::kEpisodes, family::kReturnMean, family::kWeightsVersion});
  k.configure = configure;
  k.reactor = make_reactor;
  return k;
}

}  // namespace sampler_kind_parts

NodeKind& sampler_kind() {
  static NodeKind kind = sampler_kind_parts::make_kind();
  return kind;
}

}  // namespace tagflow::nodes
