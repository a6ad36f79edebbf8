#include "nodes/kind/replica_config.hpp"

#include <functional>
#include <initializer_list>
#include <map>
#include <sstream>
#include <stdexcept>

#include "common/log_text.hpp"
#include "nodes/cluster/policy_config.hpp"
#include "nodes/cluster/process_plan.hpp"
#include "rl/envs/registry.hpp"
#include "rl/envs/vector_env.hpp"

namespace tagflow::nodes {
namespace {

template <class T>
std::string join(const std::vector<T>& values) {
  std::ostringstream out;
  for (std::size_t i = 0; i < values.size(); ++i) out << (i == 0 ? "" : ",") << values[i];
  return out.str();
}

bool steps_env(const cluster::NodeConfig& node) { return node.kind->steps_env; }

/// What `read` returns from `node`'s params, read as the file loads: its ParamError about
/// `param` becomes the file's ConfigError at the param's line (else the node's), keyed
/// `nodes.NAME.params.PARAM`.
template <class Read>
auto read_param(const cluster::ClusterConfig& config, const cluster::NodeConfig& node,
                const std::string& param, Read read) {
  try {
    return read(nodes::NodeParams::of(node));
  } catch (const nodes::ParamError& e) {
    throw cluster::ConfigError(config.file, e.line() > 0 ? e.line() : node.line,
                               "nodes." + node.name + ".params." + param, e.what());
  }
}

/// The env a sampler group steps (its `env` param, CartPole-v1 by default).
std::string env_of(const cluster::ClusterConfig& config, const cluster::NodeConfig& node) {
  return read_param(config, node, "env", [](const nodes::NodeParams& params) {
    return params.get_string("env", "CartPole-v1");
  });
}

}  // namespace

std::int64_t env_steps_share(const cluster::ClusterConfig& config, const ClusterFacts& facts) {
  if (!config.stop.env_steps) return -1;
  const auto n = static_cast<std::int64_t>(std::max<std::size_t>(1, facts.sampler_count));
  return (*config.stop.env_steps + n - 1) / n;
}

std::vector<int> learner_hidden_sizes(const ClusterFacts& facts) {
  return nodes::NodeParams("", {{"hidden", facts.hidden}}).get_sizes("hidden", {64, 64});
}

void take_learner_hidden(ReplicaConfig& r, const cluster::ClusterConfig& config,
                         const ClusterFacts& facts) {
  if (!r.params.has("hidden")) {
    r.params.set("hidden", facts.hidden);
    return;
  }
  std::string learner;  // a learner whose weights reach this group
  for (const cluster::ConnectionConfig& c : config.connections) {
    if (c.to_node != r.group->name || c.to_port != "weights") continue;
    const cluster::NodeConfig* from = config.find_node(c.from_node);
    if (from != nullptr && from->kind->trains) learner = from->name;
  }
  if (learner.empty()) return;
  const std::vector<int> sizes = learner_hidden_sizes(facts);
  if (r.params.get_sizes("hidden", sizes) != sizes) {
    r.params.fail("hidden", "the weights of learner '" + learner + "' are for hidden \"" +
                                facts.hidden + "\" (leave the param out)");
  }
}

namespace {

/// What every replica of a file with policies knows: who hosts which policy, which learner
/// trains which, and whether its group's `experience` port is linked.
void add_policy_facts(const cluster::ClusterConfig& config, ReplicaConfig& r) {
  const cluster::NodeConfig& group = *r.group;
  r.agents = config.multi_agent;
  r.policies = cluster::hosted_policies(config, group, r.index);
  // Settled by the file, not the kind: `policies` (checked where the file is loaded, for the
  // kinds that host policies; a multi_agent node serves none) and a learner's `export_dir`
  // (configure_policy(), learner_kind.cpp).
  if (group.kind->hosts_policies && !group.kind->multi_agent_env()) {
    r.params.read_elsewhere("policies");
  }
  if (group.kind->trains) r.params.read_elsewhere("export_dir");
  for (const cluster::NodeConfig& node : config.nodes) {
    for (int i = 0; i < node.replicas; ++i) {
      std::vector<int> hosted = cluster::hosted_policies(config, node, i);
      if (hosted.empty()) continue;
      const std::string replica = cluster::replica_name(node, i);
      if (node.kind->trains) r.learner_policies[replica] = hosted.front();
      r.replica_policies[replica] = std::move(hosted);
    }
  }
  for (const cluster::ConnectionConfig& c : config.connections) {
    if (c.from_node != group.name || c.from_port != "experience") continue;
    r.experience_linked = true;
    const cluster::NodeConfig* replay = config.find_node(c.to_node);
    for (int i = 0; replay != nullptr && i < replay->replicas; ++i) {
      for (const int p : cluster::hosted_policies(config, *replay, i))
        r.replayed_policies.insert(p);
    }
  }
}

}  // namespace

std::pair<const cluster::NodeConfig*, int> locate_replica(const cluster::ClusterConfig& config,
                                                          const std::string& name) {
  auto [group, index] = cluster::find_replica(config, name);
  if (group != nullptr) return {group, index};
  const auto dash = name.rfind('-');
  if (dash != std::string::npos) group = config.find_node(name.substr(0, dash));
  if (group == nullptr || !group->kind->transient) {
    throw std::invalid_argument("no replica '" + name + "' in " + config.file +
                                " (a joining replica is one of a transient kind, named GROUP-K)");
  }
  try {
    std::size_t used = 0;
    index = std::stoi(name.substr(dash + 1), &used);
    if (used != name.size() - dash - 1 || index < 0) throw std::invalid_argument(name);
  } catch (const std::exception&) {
    throw std::invalid_argument("replica name '" + name + "' does not end in an index");
  }
  return {group, index};
}

ClusterFacts ClusterFacts::of(const cluster::ClusterConfig& config) {
  ClusterFacts facts;
  const cluster::NodeConfig* sampler = nullptr;
  const cluster::NodeConfig* learner = nullptr;
  for (const cluster::NodeConfig& node : config.nodes) {
    if (steps_env(node)) {
      facts.sampler_count += static_cast<std::size_t>(node.replicas);
      if (sampler == nullptr) sampler = &node;
    }
    if (node.kind->trains && learner == nullptr) learner = &node;
  }
  if (!config.multi_agent.empty()) {
    facts.env_id = config.multi_agent.env;
    facts.observation_size = config.multi_agent.observation_size;
    facts.num_actions = config.multi_agent.num_actions;
    return facts;
  }
  if (sampler == nullptr) {
    throw cluster::ConfigError(config.file, config.nodes_line, "nodes",
                               "a cluster needs at least one node that steps an env (a sampler "
                               "or a multi_agent node)");
  }
  facts.env_id = env_of(config, *sampler);
  const auto env_line = sampler->param_lines.find("env");
  const int env_at = env_line != sampler->param_lines.end() ? env_line->second : sampler->line;
  try {
    envs::VectorEnv probe(facts.env_id, envs::VectorEnvOptions{});
    const envs::EnvSpec& spec = probe.spec();
    // What a sampler's DQN steps (nodes/sampler/sampler_server.cpp): refused here, not at start.
    if (spec.action_space.kind != envs::Space::Kind::kDiscrete ||
        (spec.observation_space.dtype != envs::DType::kFloat32 &&
         spec.observation_space.dtype != envs::DType::kUInt8)) {
      throw cluster::ConfigError(config.file, env_at, "nodes." + sampler->name + ".params.env",
                                 facts.env_id +
                                     ": a sampler needs an env with discrete actions and float32 "
                                     "or uint8 observations");
    }
    facts.observation_size = static_cast<int>(spec.observation_space.size());
    facts.num_actions = static_cast<int>(spec.action_space.n);
  } catch (const std::invalid_argument& e) {  // an unknown env id
    throw cluster::ConfigError(config.file, env_at, "nodes." + sampler->name + ".params.env",
                               e.what());
  }
  // A checkpoint holds each env's state: an env without one is refused before anything starts.
  if (config.checkpoint.every && envs::make_env(facts.env_id)->state().empty()) {
    throw cluster::ConfigError(
        config.file, config.checkpoint.line, "checkpoint",
        sampler->name + ": " + facts.env_id + " cannot be checkpointed (no state)");
  }
  // One learner, one network shape: every sampler group steps the first group's env.
  for (const cluster::NodeConfig& node : config.nodes) {
    if (!steps_env(node) || &node == sampler) continue;
    const std::string env = env_of(config, node);
    if (env != facts.env_id) {
      const cluster::NodeConfig::ParamPlace at = node.place_of("env");
      throw cluster::ConfigError(
          config.file, at.line, at.key,
          "every sampler group steps one env, '" + facts.env_id + "' (nodes." + sampler->name +
              "); got '" + escape_for_log(env) + "'" + (at.written ? "" : " (the default)"));
    }
  }
  if (learner != nullptr && learner->params.count("hidden") != 0) {
    // Checked here, at the learner's line: the samplers and inference servers build their
    // networks from it, and a bad value must not be reported as one of their params.
    (void)read_param(config, *learner, "hidden", [](const nodes::NodeParams& params) {
      return params.get_sizes("hidden", {});
    });
    facts.hidden = learner->params.at("hidden");
  }
  return facts;
}

std::uint64_t replica_seed(const cluster::ClusterConfig& config, const cluster::NodeConfig& group,
                           int index) {
  // The group's position in the file, from 1: at once for a group of config.nodes itself (one
  // call per replica, so a loop here made a large file's check quadratic), else by its name.
  const std::less<const cluster::NodeConfig*> before;
  const cluster::NodeConfig* const first = config.nodes.data();
  std::uint64_t group_number = 0;
  if (!config.nodes.empty() && !before(&group, first) &&
      before(&group, first + config.nodes.size())) {
    group_number = static_cast<std::uint64_t>(&group - first) + 1;
  } else {
    for (const cluster::NodeConfig& node : config.nodes) {
      ++group_number;
      if (node.name == group.name) break;
    }
  }
  return config.seed * 1000003ULL + group_number * 1000ULL + static_cast<std::uint64_t>(index);
}

ReplicaConfig replica_config(const cluster::ClusterConfig& config, const ClusterFacts& facts,
                             const std::string& name) {
  const auto [group, index] = locate_replica(config, name);
  ReplicaConfig r;
  r.name = name;
  r.kind = group->kind;
  r.group = group;
  r.index = index;
  r.seed = replica_seed(config, *group, index);
  r.params = nodes::NodeParams::of(*group);
  r.network_seed = config.seed;
  r.observation_size = facts.observation_size;
  r.num_actions = facts.num_actions;
  if (!config.multi_agent.empty()) add_policy_facts(config, r);
  r.kind->configure(r, config, facts);
  return r;
}

std::string ReplicaConfig::describe() const {
  std::ostringstream out;
  out << "name=" << name << "\nkind=" << kind->name << "\nindex=" << index << "\nseed=" << seed
      << "\nnetwork_seed=" << network_seed << "\nobservation_size=" << observation_size
      << "\nnum_actions=" << num_actions << "\n";
  for (const auto& [key, value] : params.values()) out << "param." << key << "=" << value << "\n";
  if (sampler) {
    const nodes::SamplerConfig& s = *sampler;
    out << "sampler.env=" << s.env << "\nsampler.num_envs=" << s.num_envs
        << "\nsampler.local_policy=" << s.local_policy << "\nsampler.hidden=" << join(s.hidden)
        << "\nsampler.epsilon=" << s.epsilon_start << "," << s.epsilon_end << ","
        << s.epsilon_decay_steps << "\nsampler.seed=" << s.seed << "\nsampler.index=" << s.index
        << "\nstep_limit=" << step_limit << "\n";
  }
  if (replay) {
    const nodes::ReplayConfig& c = *replay;
    out << "replay.capacity=" << c.capacity << "\nreplay.prioritized=" << c.prioritized
        << "\nreplay.priority_exponent=" << c.priority_exponent
        << "\nreplay.importance_beta=" << c.importance_beta << "\nreplay.min_size=" << c.min_size
        << "\nreplay.samples_per_insert=" << c.samples_per_insert
        << "\nreplay.batch_size=" << c.batch_size
        << "\nreplay.max_batches_per_call=" << c.max_batches_per_call << "\nreplay.seed=" << c.seed
        << "\nreplay.checkpoint_every=" << c.checkpoint_every << "\nreplay.restore=" << c.restore
        << "\ncheckpoint_path=" << checkpoint_path << "\n";
  }
  if (multi_agent) {
    const nodes::MultiAgentNodeConfig& c = *multi_agent;
    out << "multi_agent.env=" << c.agents.env << "\nmulti_agent.epsilon=" << c.epsilon_start << ","
        << c.epsilon_end << "," << c.epsilon_decay_steps << "\nmulti_agent.eval=" << c.eval_every
        << "," << c.eval_episodes << "," << c.eval_seed << "\nmulti_agent.seed=" << c.seed
        << "\nmulti_agent.index=" << c.index << "\nstep_limit=" << step_limit << "\n";
  }
  if (!policies.empty())
    out << "policies=" << join(policies) << "\npolicy_file=" << policy_file << "\n";
  if (target_return) out << "target_return=" << *target_return << "\n";
  if (evaluation) {
    out << "evaluation.env=" << evaluation->env_id
        << "\nevaluation.hidden=" << join(evaluation->hidden)
        << "\nevaluation.episodes=" << evaluation->episodes
        << "\nevaluation.max_steps=" << evaluation->max_steps
        << "\nevaluation.seed=" << evaluation->seed << "\n";
  }
  return out.str();
}

std::string stop_reason(const std::vector<std::string>& replica_reasons, bool timed_out) {
  bool env_steps = false, seconds = timed_out, signal = false;
  for (const std::string& reason : replica_reasons) {
    if (reason == "target_return") return reason;
    env_steps = env_steps || reason == "env_steps";
    seconds = seconds || reason == "seconds";
    signal = signal || reason == "signal";
  }
  if (env_steps) return "env_steps";
  if (seconds) return "seconds";
  return signal ? "signal" : "";
}

}  // namespace tagflow::nodes
