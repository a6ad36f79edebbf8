#include "nodes/replica_binding.hpp"

#include <stdexcept>

#include "nodes/channel_digest.hpp"
#include "nodes/node_params.hpp"
#include "nodes/replay/replay_reactor.hpp"
#include "nodes/sampler/sampler_reactor.hpp"
#include "rl/envs/vector_env.hpp"

namespace tagflow::nodes {
namespace {

using cluster::NodeKind;

std::size_t in_width(const ReplicaSetup& s, const char* port) {
  return s.links->input_width(s.name, port);
}
std::size_t out_width(const ReplicaSetup& s, const char* port) {
  return s.links->output_width(s.name, port);
}

[[noreturn]] void no_port(const std::string& replica, const std::string& port) {
  throw std::invalid_argument("replica '" + replica + "' has no port '" + port + "'");
}

class SamplerBinding : public ReplicaBinding {
 public:
  SamplerBinding(const ReplicaSetup& s, reactors::Environment& env) {
    NodeParams params(s.group->name, s.group->params, s.group->param_lines);
    if (!params.has("hidden")) params.set("hidden", s.facts->hidden);
    const SamplerConfig config = SamplerConfig::from_params(
        params, replica_seed(*s.config, *s.group, s.index), static_cast<std::uint32_t>(s.index));
    reactor_ = &env.add<SamplerReactor>(
        s.name, config,
        SamplerPortWidths{in_width(s, "actions"), in_width(s, "weights"),
                          out_width(s, "transitions"), out_width(s, "observations")},
        s.round_period);
    if (s.config->stop.env_steps) {
      const auto n = static_cast<std::int64_t>(s.facts->sampler_count);
      reactor_->set_step_limit((*s.config->stop.env_steps + n - 1) / n);
    }
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

 private:
  SamplerReactor* reactor_ = nullptr;
};

class ReplayBinding : public ReplicaBinding {
 public:
  ReplayBinding(const ReplicaSetup& s, reactors::Environment& env) {
    const NodeParams params(s.group->name, s.group->params, s.group->param_lines);
    reactor_ = &env.add<ReplayReactor>(
        s.name, ReplayConfig::from_params(params, replica_seed(*s.config, *s.group, s.index)),
        ReplayPortWidths{in_width(s, "transitions"), in_width(s, "priorities"),
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

 private:
  ReplayReactor* reactor_ = nullptr;
};

}  // namespace

ClusterFacts ClusterFacts::of(const cluster::ClusterConfig& config) {
  ClusterFacts facts;
  const cluster::NodeConfig* sampler = nullptr;
  const cluster::NodeConfig* learner = nullptr;
  for (const cluster::NodeConfig& node : config.nodes) {
    if (node.kind == NodeKind::sampler) {
      facts.sampler_count += static_cast<std::size_t>(node.replicas);
      if (sampler == nullptr) sampler = &node;
    }
    if (node.kind == NodeKind::learner && learner == nullptr) learner = &node;
  }
  if (sampler == nullptr) {
    throw cluster::ConfigError(config.file, 0, "nodes", "a cluster needs at least one sampler");
  }
  facts.env_id = NodeParams(sampler->name, sampler->params, sampler->param_lines)
                     .get_string("env", "CartPole-v1");
  envs::VectorEnv probe(facts.env_id, envs::VectorEnvOptions{});
  facts.observation_size = static_cast<int>(probe.spec().observation_space.size());
  facts.num_actions = static_cast<int>(probe.spec().action_space.n);
  if (learner != nullptr && learner->params.count("hidden") != 0) {
    facts.hidden = learner->params.at("hidden");
  }
  return facts;
}

std::uint64_t replica_seed(const cluster::ClusterConfig& config, const cluster::NodeConfig& group,
                           int index) {
  std::uint64_t group_number = 0;
  for (const cluster::NodeConfig& node : config.nodes) {
    ++group_number;
    if (&node == &group || node.name == group.name) break;
  }
  return config.seed * 1000003ULL + group_number * 1000ULL + static_cast<std::uint64_t>(index);
}

ReplicaSetup replica_setup(const cluster::ClusterConfig& config, const cluster::LinkPlan& links,
                           const ClusterFacts& facts, const std::string& name) {
  for (const cluster::NodeConfig& node : config.nodes) {
    for (int i = 0; i < node.replicas; ++i) {
      if (cluster::replica_name(node, i) != name) continue;
      ReplicaSetup setup;
      setup.config = &config;
      setup.links = &links;
      setup.facts = &facts;
      setup.group = &node;
      setup.index = i;
      setup.name = name;
      return setup;
    }
  }
  throw std::invalid_argument("no replica '" + name + "' in " + config.file);
}

std::unique_ptr<ReplicaBinding> make_torch_free_replica(const ReplicaSetup& setup,
                                                        reactors::Environment& env) {
  switch (setup.group->kind) {
    case NodeKind::sampler:
      return std::make_unique<SamplerBinding>(setup, env);
    case NodeKind::replay:
      return std::make_unique<ReplayBinding>(setup, env);
    case NodeKind::learner:
    case NodeKind::inference:
      break;
  }
  throw std::invalid_argument(std::string(cluster::to_string(setup.group->kind)) + " '" +
                              setup.name + "' needs LibTorch (run it through tagflow-torch)");
}

std::string stop_reason(const std::vector<std::unique_ptr<ReplicaBinding>>& replicas,
                        bool timed_out) {
  std::string reason;
  for (const auto& r : replicas) {
    if (!r->reached_stop_condition()) continue;
    if (r->kind() == NodeKind::learner) return "target_return";
    reason = "env_steps";
  }
  if (reason.empty() && timed_out) reason = "seconds";
  return reason;
}

void append_channels(std::vector<ChannelResult>& out, const std::string& port,
                     const ChannelDigests& digests, std::optional<reactors::Tag> cutoff) {
  const reactors::Tag limit = cutoff.value_or(reactors::Tag::forever());
  for (std::size_t c = 0; c < digests.size(); ++c) {
    out.push_back({port, c, digests.count_before(c, limit), digests.hash_before(c, limit)});
  }
}

}  // namespace tagflow::nodes
