#include "hosts/reactor/replica_binding.hpp"

#include <stdexcept>

#include "nodes/channel_digest.hpp"
#include "nodes/multi_agent/multi_agent_reactor.hpp"
#include "nodes/replay/replay_reactor.hpp"
#include "nodes/sampler/sampler_reactor.hpp"

namespace tagflow::hosts {
namespace {

using cluster::NodeKind;

std::size_t in_width(const ReplicaSetup& s, const char* port) {
  return s.links->input_width(s.config.name, port);
}
std::size_t out_width(const ReplicaSetup& s, const char* port) {
  return s.links->output_width(s.config.name, port);
}

[[noreturn]] void no_port(const std::string& replica, const std::string& port) {
  throw std::invalid_argument("replica '" + replica + "' has no port '" + port + "'");
}

class SamplerBinding : public ReplicaBinding {
 public:
  SamplerBinding(const ReplicaSetup& s, reactors::Environment& env) {
    reactor_ = &env.add<nodes::SamplerReactor>(
        s.config.name, *s.config.sampler,
        nodes::SamplerPortWidths{in_width(s, "actions"), in_width(s, "weights"),
                                 out_width(s, "transitions"), out_width(s, "observations")},
        s.round_period);
    if (s.config.step_limit >= 0) reactor_->set_step_limit(s.config.step_limit);
    reactor_->set_metrics(s.metrics);
  }
  NodeKind kind() const override { return NodeKind::sampler; }
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
    ReplicaProgress p;
    p.env_steps = reactor_->env_steps.load(std::memory_order_relaxed);
    p.last_return = reactor_->last_return.load(std::memory_order_relaxed);
    return p;
  }
  ReplicaResult result(std::optional<reactors::Tag> cutoff) override {
    ReplicaResult r;
    r.name = reactor_->name();
    r.kind = "sampler";
    r.unit = "env_steps";
    r.count = reactor_->env_steps.load();
    r.episode_returns = reactor_->finished_returns();
    append_channels(r.channels, "transitions", reactor_->transitions_digest(), cutoff);
    append_channels(r.channels, "observations", reactor_->observations_digest(), cutoff);
    return r;
  }
  bool reached_stop_condition() const override { return reactor_->step_limit_reached(); }
  std::vector<std::string> save_state(StateWriter& out, const std::string& /*prefix*/) override {
    reactor_->save(out);
    return {};
  }
  void load_state(StateReader& in, const std::string& /*file_prefix*/) override {
    reactor_->load(in);
  }

 private:
  nodes::SamplerReactor* reactor_ = nullptr;
};

class ReplayBinding : public ReplicaBinding {
 public:
  ReplayBinding(const ReplicaSetup& s, reactors::Environment& env) {
    reactor_ = &env.add<nodes::ReplayReactor>(
        s.config.name, *s.config.replay,
        nodes::ReplayPortWidths{in_width(s, "transitions"), in_width(s, "priorities"),
                                out_width(s, "batches")});
    reactor_->set_metrics(s.metrics);
  }
  NodeKind kind() const override { return NodeKind::replay; }
  reactors::PortBase& output(const std::string& port, std::size_t ch) override {
    if (port == "batches") return reactor_->batches[ch];
    no_port(reactor_->name(), port);
  }
  reactors::PortBase& input(const std::string& port, std::size_t ch) override {
    if (port == "transitions") return reactor_->transitions[ch];
    if (port == "priorities") return reactor_->priorities[ch];
    no_port(reactor_->name(), port);
  }
  ReplicaProgress progress() const override { return {}; }
  ReplicaResult result(std::optional<reactors::Tag> cutoff) override {
    ReplicaResult r;
    r.name = reactor_->name();
    r.kind = "replay";
    r.unit = "inserts";
    r.count = reactor_->inserts.load();
    append_channels(r.channels, "batches", reactor_->batches_digest(), cutoff);
    return r;
  }
  bool reached_stop_condition() const override { return false; }
  std::vector<std::string> save_state(StateWriter& out, const std::string& file_prefix) override {
    if (reactor_->save(out, file_prefix.empty() ? "" : file_prefix + ".table")) return {"table"};
    return {};
  }
  void load_state(StateReader& in, const std::string& file_prefix) override {
    reactor_->load(in, file_prefix + ".table");
  }

 private:
  nodes::ReplayReactor* reactor_ = nullptr;
};

class MultiAgentBinding : public ReplicaBinding {
 public:
  MultiAgentBinding(const ReplicaSetup& s, reactors::Environment& env) {
    const std::string& name = s.config.name;
    reactor_ = &env.add<nodes::MultiAgentReactor>(
        name, *s.config.multi_agent,
        nodes::MultiAgentPortWidths{in_width(s, "actions"),
                                    s.links->output_policies(name, "observations"),
                                    s.links->output_policies(name, "transitions")},
        s.round_period);
    if (s.config.step_limit >= 0) reactor_->set_step_limit(s.config.step_limit);
    reactor_->set_metrics(s.metrics);
  }
  NodeKind kind() const override { return NodeKind::multi_agent; }
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
    ReplicaProgress p;
    p.env_steps = reactor_->env_steps.load(std::memory_order_relaxed);
    p.last_return = reactor_->last_return.load(std::memory_order_relaxed);
    return p;
  }
  ReplicaResult result(std::optional<reactors::Tag> cutoff) override {
    const nodes::MultiAgentServer& server = reactor_->server();
    ReplicaResult r;
    r.name = reactor_->name();
    r.kind = "multi_agent";
    r.unit = "joint_steps";
    r.count = server.joint_steps();
    r.episode_returns = reactor_->finished_returns();
    r.evaluations = server.evaluations();
    append_multi_agent_figures(r, server);
    set_joint_step_latency(r, reactor_->step_intervals());
    append_channels(r.channels, "observations", reactor_->observations_digest(), cutoff);
    append_channels(r.channels, "transitions", reactor_->transitions_digest(), cutoff);
    return r;
  }
  bool reached_stop_condition() const override { return reactor_->step_limit_reached(); }

 private:
  nodes::MultiAgentReactor* reactor_ = nullptr;
};

}  // namespace

void append_multi_agent_figures(ReplicaResult& r, const nodes::MultiAgentServer& server) {
  r.collisions = server.collisions();
  if (server.evaluations().empty()) return;
  MultiAgentFigures f;
  f.mean_return = server.last_evaluation().mean_return;
  f.collisions_per_episode = server.last_evaluation().collisions_per_episode;
  f.random_return = server.random_baseline().mean_return;
  f.random_collisions_per_episode = server.random_baseline().collisions_per_episode;
  f.episodes = server.last_evaluation().episodes;
  r.mean_return = f.mean_return;
  r.multi_agent = f;
}

ReplicaSetup replica_setup(const cluster::ClusterConfig& config, const cluster::LinkPlan& links,
                           const ClusterFacts& facts, const std::string& name) {
  ReplicaSetup setup;
  setup.config = replica_config(config, facts, name);
  setup.links = &links;
  return setup;
}

std::vector<std::string> ReplicaBinding::save_state(StateWriter& /*out*/,
                                                    const std::string& /*file_prefix*/) {
  throw std::logic_error(std::string("a ") + cluster::to_string(kind()) +
                         " node cannot be checkpointed");
}

void ReplicaBinding::load_state(StateReader& /*in*/, const std::string& /*file_prefix*/) {
  throw std::logic_error(std::string("a ") + cluster::to_string(kind()) +
                         " node cannot be checkpointed");
}

std::unique_ptr<ReplicaBinding> make_torch_free_replica(const ReplicaSetup& setup,
                                                        reactors::Environment& env) {
  switch (setup.config.kind) {
    case NodeKind::sampler:
      return std::make_unique<SamplerBinding>(setup, env);
    case NodeKind::replay:
      return std::make_unique<ReplayBinding>(setup, env);
    case NodeKind::multi_agent:
      return std::make_unique<MultiAgentBinding>(setup, env);
    case NodeKind::learner:
    case NodeKind::inference:
      break;
  }
  throw std::invalid_argument(std::string(cluster::to_string(setup.config.kind)) + " '" +
                              setup.config.name +
                              "' needs LibTorch (run it through tagflow-torch)");
}

std::string stop_reason(const std::vector<std::unique_ptr<ReplicaBinding>>& replicas,
                        bool timed_out) {
  std::vector<std::string> reasons;
  for (const auto& r : replicas) {
    reasons.push_back(r->reached_stop_condition() ? own_stop_reason(r->kind()) : "");
  }
  return hosts::stop_reason(reasons, timed_out);
}

void append_channels(std::vector<ChannelResult>& out, const std::string& port,
                     const nodes::ChannelDigests& digests, std::optional<reactors::Tag> cutoff) {
  const reactors::Tag limit = cutoff.value_or(reactors::Tag::forever());
  for (std::size_t c = 0; c < digests.size(); ++c) {
    out.push_back({port, c, digests.count_before(c, limit), digests.hash_before(c, limit)});
  }
}

}  // namespace tagflow::hosts
