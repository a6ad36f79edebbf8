#include "nodes/cluster/policy_config.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "common/log_text.hpp"
#include "nodes/cluster/cluster_names.hpp"
#include "nodes/cluster/yaml_reader.hpp"
#include "rl/envs/registry.hpp"

namespace tagflow::cluster {
namespace {

bool hosts_policies(const NodeKind* kind) { return kind->hosts_policies; }

std::string trim(const std::string& text) {
  std::size_t from = 0, to = text.size();
  while (from < to && std::isspace(static_cast<unsigned char>(text[from]))) ++from;
  while (to > from && std::isspace(static_cast<unsigned char>(text[to - 1]))) --to;
  return text.substr(from, to - from);
}

/// "a,b", "[a, b]" or "all" → names ("all" stays one entry).
std::vector<std::string> split_names(std::string text) {
  text = trim(text);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string name = trim(text.substr(start, comma - start));
    if (!name.empty()) names.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return names;
}

/// The multi-agent group's env: its spec fills config.multi_agent's env facts.
void read_env(const YamlReader& top, ClusterConfig& config) {
  const NodeConfig* group = nullptr;
  // The file's env: its first multi_agent node's, TrafficJunction4-v1 when that gives none; a
  // node without `env` steps it, one with `env` must name it.
  const auto env_of = [](const NodeConfig& n) {
    const auto it = n.params.find("env");
    return it == n.params.end() ? std::string("TrafficJunction4-v1") : trim(it->second);
  };
  for (const NodeConfig& node : config.nodes) {
    if (!node.kind->multi_agent_env()) continue;
    if (group != nullptr && node.params.count("env") != 0 && env_of(node) != env_of(*group)) {
      throw ConfigError(
          config.file, node.param_lines.at("env"), "nodes." + node.name + ".params.env",
          "every multi_agent node of a file steps the same env (" + group->name + " has " +
              env_of(*group) + (group->params.count("env") != 0 ? "" : ", the default") + ")");
    }
    const auto time_input = [](const NodeConfig& n) {
      const auto it = n.params.find("time_input");
      return it == n.params.end() ? std::string("false") : trim(it->second);
    };
    if (group != nullptr && time_input(node) != time_input(*group)) {
      const NodeConfig::ParamPlace at = node.place_of("time_input");
      throw ConfigError(config.file, at.line, at.key,
                        "every multi_agent node of a file gives its policies the same input (" +
                            group->name + " has time_input: " + time_input(*group) + ")");
    }
    if (group == nullptr) group = &node;
  }
  if (group == nullptr) {
    top.fail("policies", "policies need a node of kind multi_agent (the env they act in)");
  }
  MultiAgentConfig& m = config.multi_agent;
  m.env = env_of(*group);
  std::unique_ptr<envs::MultiAgentEnv> env;
  try {
    env = envs::make_multi_agent_env(m.env);
  } catch (const std::invalid_argument& e) {
    const auto line = group->param_lines.find("env");
    throw ConfigError(config.file, line == group->param_lines.end() ? group->line : line->second,
                      "nodes." + group->name + ".params.env", e.what());
  }
  m.num_agents = env->spec().num_agents;
  m.observation_size = static_cast<int>(env->spec().observation_space.size());
  // time_input: true appends the episode's elapsed fraction to every agent's observation
  // (MultiAgentNodeConfig::time_input), so every policy's input is one float wider.
  const auto time = group->params.find("time_input");
  m.time_input = time != group->params.end() && trim(time->second) == "true";
  if (m.time_input) m.observation_size += 1;
  m.max_episode_steps = env->spec().max_episode_steps;
  m.num_actions = static_cast<int>(env->spec().action_space.n);
}

/// Agent key of `agents:`: "*" (-1) or an index below num_agents.
int agent_key(const YamlReader& agents, const std::string& key, int num_agents) {
  if (key == "*") return -1;
  // Written as a number is: "0", "1", ... (not "00" or "+1", which would name agent 0 twice).
  const bool canonical = !key.empty() && key.size() <= 9 && (key == "0" || key[0] != '0') &&
                         std::all_of(key.begin(), key.end(), [](char c) {
                           return std::isdigit(static_cast<unsigned char>(c)) != 0;
                         });
  const int index = canonical ? std::stoi(key) : -1;
  if (!canonical) {
    agents.fail(key, "agents are named by index (0, 1, ...) or \"*\" for every other agent");
  }
  if (index >= num_agents) {
    agents.fail(key, "no agent " + key + ": the env has " + std::to_string(num_agents) + " (0.." +
                         std::to_string(num_agents - 1) + ")");
  }
  return index;
}

/// Each output port of a multi-agent node reaches, over all its connections, exactly one
/// replica hosting each policy: an agent's observation has one server, its transitions one replay.
void check_each_agent_reaches_one_server(const ClusterConfig& config) {
  const MultiAgentConfig& m = config.multi_agent;
  std::map<std::string, std::vector<std::string>> reached;  // "node.port" → host of each policy
  std::map<std::string, std::size_t> first;  // "node.port" → its first connection's index
  for (std::size_t i = 0; i < config.connections.size(); ++i) {
    const ConnectionConfig& c = config.connections[i];
    const NodeConfig* from = config.find_node(c.from_node);
    const NodeConfig* to = config.find_node(c.to_node);
    if (from == nullptr || to == nullptr || !from->kind->multi_agent_env() ||
        !routed_by_policy(config, c)) {
      continue;
    }
    const std::string key = c.from_node + "." + c.from_port;
    std::vector<std::string>& hosts = reached[key];
    hosts.resize(m.policies.size());
    first.emplace(key, i);
    for (int r = 0; r < to->replicas; ++r) {
      for (const int p : hosted_policies(config, *to, r)) {
        std::string& host = hosts[static_cast<std::size_t>(p)];
        if (!host.empty()) {
          throw ConfigError(config.file, c.line, "connections[" + std::to_string(i) + "]",
                            key + " reaches policy '" +
                                m.policies[static_cast<std::size_t>(p)].name + "' on both " + host +
                                " and " + replica_name(*to, r) +
                                ": host each policy once per port");
        }
        host = replica_name(*to, r);
      }
    }
  }
  // Its observations must reach the servers, and their actions come back: `transitions` alone
  // may be left out (a file that serves without training).
  for (const NodeConfig& node : config.nodes) {
    if (!node.kind->multi_agent_env()) continue;
    if (reached.count(node.name + ".observations") == 0) {
      throw ConfigError(config.file, node.line, "nodes." + node.name,
                        "its observations reach no inference server: connect " + node.name +
                            ".observations to the inference group hosting the policies");
    }
    if (!config.feeds(node.name, "actions")) {
      throw ConfigError(config.file, node.line, "nodes." + node.name,
                        "no connection brings its actions: connect the inference group's actions "
                        "to " +
                            node.name + ".actions (after: 0)");
    }
  }
  for (const auto& [key, hosts] : reached) {
    for (std::size_t p = 0; p < hosts.size(); ++p) {
      if (hosts[p].empty()) {
        const std::size_t i = first.at(key);
        throw ConfigError(config.file, config.connections[i].line,
                          "connections[" + std::to_string(i) + "]",
                          key + " reaches no replica hosting policy '" + m.policies[p].name +
                              "' (add it to a `policies` param)");
      }
    }
  }
}

/// Every policy a replay replica stores reaches, over that replay's `batches` connections, a
/// learner replica training it: transitions nobody learns from are a file's mistake.
void check_each_stored_policy_is_trained(const ClusterConfig& config) {
  const MultiAgentConfig& m = config.multi_agent;
  for (const NodeConfig& replay : config.nodes) {
    if (replay.kind->name != "replay") continue;
    std::vector<bool> trained(m.policies.size(), false);
    for (const ConnectionConfig& c : config.connections) {
      const NodeConfig* to = config.find_node(c.to_node);
      if (c.from_node != replay.name || c.from_port != "batches" || to == nullptr ||
          !to->kind->trains) {
        continue;
      }
      for (int r = 0; r < to->replicas; ++r) {
        for (const int p : hosted_policies(config, *to, r))
          trained[static_cast<std::size_t>(p)] = true;
      }
    }
    for (int r = 0; r < replay.replicas; ++r) {
      for (const int p : hosted_policies(config, replay, r)) {
        if (trained[static_cast<std::size_t>(p)]) continue;
        const std::string& name = m.policies[static_cast<std::size_t>(p)].name;
        const auto line = replay.param_lines.find("policies");
        throw ConfigError(config.file,
                          line == replay.param_lines.end() ? replay.line : line->second,
                          "nodes." + replay.name + ".params.policies",
                          replica_name(replay, r) + " stores policy '" + name +
                              "', which no learner its batches reach trains: add '" + name +
                              "' to that learner's `policies` (or leave it out of this replay's)");
      }
    }
  }
}

}  // namespace

int MultiAgentConfig::input_size(int policy) const {
  const PolicyConfig& p = policies.at(static_cast<std::size_t>(policy));
  return observation_size + (p.agent_id_input ? num_agents : 0);
}

int MultiAgentConfig::find(const std::string& name) const {
  for (std::size_t i = 0; i < policies.size(); ++i) {
    if (policies[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

namespace {

/// One `policies:` entry as declared (a per_agent one is expanded by declare_policies()).
PolicyConfig read_policy(const YamlReader& p, const std::string& name, int line) {
  p.only_keys({"hidden", "torchscript", "per_agent", "agent_id_input", "max_batch", "max_wait"});
  PolicyConfig base;
  base.name = name;
  base.line = line;
  base.hidden = p.string_or("hidden", base.hidden);
  // The learner's and the inference server's `hidden` param rules (nodes/node_params.hpp,
  // get_sizes): one or more sizes in [1, 2^20], split by commas.
  std::stringstream sizes(base.hidden);
  std::string size;
  bool valid = !base.hidden.empty() && base.hidden.back() != ',';
  while (valid && std::getline(sizes, size, ',')) {
    valid = !size.empty() && size.size() <= 7 &&
            std::all_of(size.begin(), size.end(),
                        [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }) &&
            std::stol(size) >= 1 && std::stol(size) <= (1L << 20);
  }
  if (!valid) {
    p.fail("hidden", "expected layer sizes in [1, 2^20] such as \"64\" or \"64,64\", got '" +
                         escape_for_log(base.hidden) + "'");
  }
  base.torchscript = p.string_or("torchscript", "");
  if (p.has("torchscript")) base.torchscript_line = p.line_of("torchscript");
  if (p.has("max_batch")) {
    base.max_batch = static_cast<std::uint32_t>(p.integer("max_batch", 1, kMaxBatchRows));
  }
  if (p.has("max_wait")) {
    base.max_wait = p.duration("max_wait");
    if (*base.max_wait > kMaxBatchWait) {
      p.fail("max_wait", "at most 24 hours (1440m): it is how long a request may wait for a batch");
    }
  }
  base.agent_id_input = p.boolean_or("agent_id_input", true);
  return base;
}

/// The declared policies, by declared name: a per_agent policy stands for name_0 ... name_{n-1}.
struct DeclaredPolicies {
  std::map<std::string, std::vector<int>> expansions;  // declared name → policy indices
  std::vector<bool> id_input_given;                    // per policy index

  /// The policy index a declared name gives agent `agent`.
  [[nodiscard]] int expanded(const std::string& name, int agent) const {
    const std::vector<int>& indices = expansions.at(name);
    return indices.size() == 1 ? indices[0] : indices.at(static_cast<std::size_t>(agent));
  }
};

DeclaredPolicies declare_policies(const YamlReader& top, MultiAgentConfig& m) {
  const YamlReader policies = top.map("policies");
  DeclaredPolicies declared;
  for (const auto& entry : policies.node()) {
    const std::string name = entry.first.Scalar();
    // A policy's name names files (a learner's export_dir/NAME.pt) and labels.
    if (!is_safe_cluster_name(name)) {
      policies.fail(name, "a learner exports a policy as NAME.pt: " +
                              safe_cluster_name_rule(name, "policy names"));
    }
    const YamlReader p = policies.map_entry(entry.first, entry.second);
    const PolicyConfig base = read_policy(p, name, line_of(entry.first));
    const bool per_agent = p.boolean_or("per_agent", false);
    if (per_agent && !base.torchscript.empty()) {
      p.fail("torchscript", "a per_agent policy has one file per agent: declare them one by one");
    }
    const int copies = per_agent ? m.num_agents : 1;
    for (int i = 0; i < copies; ++i) {
      PolicyConfig policy = base;
      if (per_agent) policy.name = name + "_" + std::to_string(i);
      if (m.find(policy.name) >= 0 || (per_agent && policies.has(policy.name))) {
        policies.fail(name, "policy '" + policy.name + "' is declared twice");
      }
      declared.expansions[name].push_back(static_cast<int>(m.policies.size()));
      m.policies.push_back(std::move(policy));
      declared.id_input_given.push_back(p.has("agent_id_input"));
    }
  }
  if (m.policies.empty()) top.fail("policies", "name at least one policy");
  return declared;
}

/// `agents:` (an agent index or "*" → a declared or expanded policy name) into agent_policy.
void map_agents(const YamlReader& agents, MultiAgentConfig& m, const DeclaredPolicies& declared) {
  int fallback = -2;  // "*": a declared name, resolved per agent
  std::string fallback_name;
  for (const auto& entry : agents.node()) {
    const std::string key = entry.first.Scalar();
    const int agent = agent_key(agents, key, m.num_agents);
    const std::string name = agents.string(key);
    const bool is_declared = declared.expansions.count(name) != 0;
    const int index = m.find(name);
    if (!is_declared && index < 0) agents.fail(key, "no policy '" + name + "' under policies");
    if (agent < 0) {
      fallback = 0;
      fallback_name = is_declared ? name : m.policies[static_cast<std::size_t>(index)].name;
      continue;
    }
    m.agent_policy[static_cast<std::size_t>(agent)] =
        is_declared ? declared.expanded(name, agent) : index;
  }
  for (int a = 0; a < m.num_agents; ++a) {
    int& policy = m.agent_policy[static_cast<std::size_t>(a)];
    if (policy >= 0) continue;
    if (fallback == -2) {
      agents.fail_here("agent " + std::to_string(a) +
                       " has no policy (map it, or give \"*\" for every other agent)");
    }
    policy = declared.expansions.count(fallback_name) != 0 ? declared.expanded(fallback_name, a)
                                                           : m.find(fallback_name);
  }
}

/// Each policy's agents; a policy that serves none is an error.
void assign_agents(const ClusterConfig& config, MultiAgentConfig& m,
                   const DeclaredPolicies& declared) {
  for (int a = 0; a < m.num_agents; ++a) {
    m.policies[static_cast<std::size_t>(m.agent_policy[static_cast<std::size_t>(a)])]
        .agents.push_back(a);
  }
  for (std::size_t i = 0; i < m.policies.size(); ++i) {
    PolicyConfig& p = m.policies[i];
    if (p.agents.empty()) {
      throw ConfigError(config.file, p.line, "policies." + p.name,
                        "policy '" + p.name + "' serves no agent (map one to it under agents:)");
    }
    // A policy of one agent needs no agent feature unless the file asks for one.
    if (p.agents.size() == 1 && !declared.id_input_given[i]) p.agent_id_input = false;
  }
}

/// Marks the policies that a learner with `algo: vdn` trains: the multi-agent node sends them
/// joint transitions. Such a policy must serve two agents or more, and a joint action (one
/// integer, num_actions^agents codes) must fit.
void mark_joint_transitions(ClusterConfig& config) {
  MultiAgentConfig& m = config.multi_agent;
  for (const NodeConfig& node : config.nodes) {
    const auto algo = node.params.find("algo");
    if (!node.kind->trains || algo == node.params.end() || trim(algo->second) != "vdn") continue;
    const int line = node.param_lines.count("algo") != 0 ? node.param_lines.at("algo") : node.line;
    for (int r = 0; r < node.replicas; ++r) {
      for (const int p : hosted_policies(config, node, r)) {
        PolicyConfig& policy = m.policies[static_cast<std::size_t>(p)];
        double codes = 1.0;
        for (std::size_t j = 0; j < policy.agents.size(); ++j) codes *= m.num_actions;
        if (policy.agents.size() < 2 || codes >= 9.0e18) {
          throw ConfigError(
              config.file, line, "nodes." + node.name + ".params.algo",
              "vdn sums the Qs of the agents one policy serves: policy '" + policy.name +
                  "' serves " + std::to_string(policy.agents.size()) +
                  (policy.agents.size() < 2 ? " agent (give the agents one shared policy)"
                                            : " agents, too many for one joint action code"));
        }
        policy.joint_transitions = true;
      }
    }
  }
}

}  // namespace

void parse_policies(const YamlReader& top, ClusterConfig& config) {
  const NodeConfig* multi_agent = nullptr;  // the first multi-agent env node
  for (const NodeConfig& node : config.nodes) {
    if (multi_agent == nullptr && node.kind->multi_agent_env()) multi_agent = &node;
  }
  if (!top.has("policies")) {
    // At the line of the node that needs them: the missing key has no line of its own.
    if (multi_agent != nullptr) {
      throw ConfigError(config.file, multi_agent->line, "policies",
                        "missing: the multi_agent node '" + multi_agent->name +
                            "' (this line) needs a top-level `policies:` map (configs/README.md, "
                            "\"Multi-agent clusters\")");
    }
    if (top.has("agents")) top.fail("agents", "agents map to policies: give policies first");
    return;
  }
  read_env(top, config);
  MultiAgentConfig& m = config.multi_agent;
  const DeclaredPolicies declared = declare_policies(top, m);
  m.agent_policy.assign(static_cast<std::size_t>(m.num_agents), -1);
  if (top.has("agents")) {
    map_agents(top.map("agents"), m, declared);
  } else {
    if (declared.expansions.size() != 1) {
      top.fail("policies", "with several policies, say which agent each serves under agents:");
    }
    for (int a = 0; a < m.num_agents; ++a) {
      m.agent_policy[static_cast<std::size_t>(a)] =
          declared.expanded(declared.expansions.begin()->first, a);
    }
  }
  assign_agents(config, m, declared);
  mark_joint_transitions(config);
}

std::vector<int> hosted_policies(const ClusterConfig& config, const NodeConfig& node, int index) {
  const MultiAgentConfig& m = config.multi_agent;
  if (m.empty() || !hosts_policies(node.kind)) return {};
  std::vector<int> listed;
  if (node.kind->multi_agent_env()) {
    for (std::size_t i = 0; i < m.policies.size(); ++i) listed.push_back(static_cast<int>(i));
    return listed;
  }
  const auto param = node.params.find("policies");
  const std::vector<std::string> names =
      param == node.params.end() ? std::vector<std::string>{"all"} : split_names(param->second);
  for (const std::string& name : names) {
    if (name == "all") {
      for (std::size_t i = 0; i < m.policies.size(); ++i) listed.push_back(static_cast<int>(i));
    } else if (m.find(name) >= 0) {
      listed.push_back(m.find(name));
    }
  }
  const std::size_t p = listed.size(), r = static_cast<std::size_t>(node.replicas);
  const auto i = static_cast<std::size_t>(index);
  std::vector<int> mine(listed.begin() + static_cast<std::ptrdiff_t>(i * p / r),
                        listed.begin() + static_cast<std::ptrdiff_t>((i + 1) * p / r));
  std::sort(mine.begin(), mine.end());
  return mine;
}

bool routed_by_policy(const ClusterConfig& config, const ConnectionConfig& connection) {
  if (config.multi_agent.empty()) return false;
  const NodeConfig* from = config.find_node(connection.from_node);
  const NodeConfig* to = config.find_node(connection.to_node);
  return from != nullptr && to != nullptr && hosts_policies(from->kind) && hosts_policies(to->kind);
}

void validate_policy_hosting(const ClusterConfig& config) {
  const MultiAgentConfig& m = config.multi_agent;
  for (const NodeConfig& node : config.nodes) {
    const auto line = node.param_lines.find("policies");
    const int at = line == node.param_lines.end() ? node.line : line->second;
    const std::string key = "nodes." + node.name + ".params.policies";
    if (m.empty() || !hosts_policies(node.kind) || node.kind->multi_agent_env()) {
      if (node.params.count("policies") != 0) {
        throw ConfigError(config.file, at, key,
                          m.empty() ? "the file names no policies (top-level policies:)"
                                    : "only inference, learner and replay nodes host policies");
      }
      // The inference service serves policies (nodes/gateway/PROTOCOL.md §1): without any, a
      // gateway_port would claim its ports and start nothing.
      if (m.empty() && node.params.count("gateway_port") != 0) {
        const auto port_line = node.param_lines.find("gateway_port");
        throw ConfigError(config.file,
                          port_line == node.param_lines.end() ? node.line : port_line->second,
                          "nodes." + node.name + ".params.gateway_port",
                          "the inference service serves the policies of a multi-agent file "
                          "(top-level policies:), and this file names none");
      }
      if (!m.empty() && !node.kind->hosts_policies) {
        throw ConfigError(config.file, node.line, "nodes." + node.name,
                          "a multi-agent cluster (policies:) drives its env with a multi_agent "
                          "node, not with a node of kind " +
                              node.kind->name);
      }
      continue;
    }
    std::size_t listed = 0;
    const auto param = node.params.find("policies");
    std::vector<std::string> names =
        param == node.params.end() ? std::vector<std::string>{"all"} : split_names(param->second);
    if (names.size() > 1 && std::find(names.begin(), names.end(), "all") != names.end()) {
      throw ConfigError(config.file, at, key, "'all' stands alone");
    }
    std::vector<bool> seen(m.policies.size(), false);
    for (const std::string& name : names) {
      if (name == "all") {
        listed += m.policies.size();
        std::fill(seen.begin(), seen.end(), true);
        continue;
      }
      const int index = m.find(name);
      if (index < 0) throw ConfigError(config.file, at, key, "no policy '" + name + "'");
      if (seen[static_cast<std::size_t>(index)]) {
        throw ConfigError(config.file, at, key, "policy '" + name + "' is listed twice");
      }
      seen[static_cast<std::size_t>(index)] = true;
      ++listed;
    }
    const auto replicas = static_cast<std::size_t>(node.replicas);
    if (listed < replicas) {
      throw ConfigError(config.file, at, key,
                        std::to_string(node.replicas) + " replicas share " +
                            std::to_string(listed) + (listed == 1 ? " policy" : " policies") +
                            ": each replica needs at least one");
    }
    if ((node.kind->trains || node.kind->name == "replay") && listed != replicas) {
      throw ConfigError(config.file, at, key,
                        "a " + node.kind->name + " replica serves one policy: give the group " +
                            std::to_string(listed) + " replicas for its " + std::to_string(listed) +
                            " policies (or list fewer policies)");
    }
  }
  check_each_agent_reaches_one_server(config);
  check_each_stored_policy_is_trained(config);
}

}  // namespace tagflow::cluster
