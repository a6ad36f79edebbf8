#include "nodes/cluster/cluster_validation.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "nodes/cluster/policy_config.hpp"
#include "nodes/cluster/yaml_reader.hpp"

namespace tagflow::cluster {
namespace {

/// "(outputs: a, b)", or "(it has no outputs)".
std::string port_list(const char* what, const std::vector<nodes::PortSpec>& ports) {
  if (ports.empty()) return std::string("(it has no ") + what + ")";
  std::string out;
  for (const std::string& n : nodes::port_names(ports)) out += (out.empty() ? "" : ", ") + n;
  return std::string("(") + what + ": " + out + ")";
}

/// "node.port" of each port of the file's nodes (their kinds' `inputs` or `outputs`) that carries
/// `message`, in file order, joined by `separator`.
std::string ports_carrying(const ClusterConfig& config, const std::string& message,
                           std::vector<nodes::PortSpec> nodes::NodeKind::*side,
                           const char* separator) {
  std::string ports;
  for (const NodeConfig& node : config.nodes) {
    for (const nodes::PortSpec& p : node.kind->*side) {
      if (p.multi_agent_only && config.multi_agent.empty()) continue;
      if (p.carries == message)
        ports += (ports.empty() ? "" : separator) + node.name + "." + p.name;
    }
  }
  return ports;
}

void check_endpoints(const ClusterConfig& config) {
  for (std::size_t i = 0; i < config.connections.size(); ++i) {
    const ConnectionConfig& c = config.connections[i];
    const std::string key = "connections[" + std::to_string(i) + "]";
    const NodeConfig* from = config.find_node(c.from_node);
    if (from == nullptr) {
      throw ConfigError(config.file, c.from_line, key + ".from", "no node '" + c.from_node + "'");
    }
    const NodeConfig* to = config.find_node(c.to_node);
    if (to == nullptr) {
      throw ConfigError(config.file, c.to_line, key + ".to", "no node '" + c.to_node + "'");
    }
    const nodes::PortSpec* out = from->kind->output(c.from_port);
    if (out == nullptr) {
      throw ConfigError(config.file, c.from_line, key + ".from",
                        from->kind->name + " '" + from->name + "' has no output port '" +
                            c.from_port + "' " + port_list("outputs", from->kind->outputs));
    }
    if (out->multi_agent_only && config.multi_agent.empty()) {
      throw ConfigError(config.file, c.from_line, key + ".from",
                        c.from_node + "." + c.from_port +
                            " sends only in a multi-agent file (one with `policies:`): here it "
                            "would send nothing");
    }
    const nodes::PortSpec* in = to->kind->input(c.to_port);
    if (in == nullptr) {
      throw ConfigError(config.file, c.to_line, key + ".to",
                        to->kind->name + " '" + to->name + "' has no input port '" + c.to_port +
                            "' " + port_list("inputs", to->kind->inputs));
    }
    // What an output carries, only an input taking the same message can read (an inference
    // node's experience: transitions logged by outside clients, for a replay).
    if (out->carries != in->carries) {
      const std::string takers =
          ports_carrying(config, out->carries, &nodes::NodeKind::inputs, ", ");
      throw ConfigError(config.file, c.to_line, key + ".to",
                        c.from_node + "." + c.from_port + " carries " + out->carries + ", and " +
                            c.to_node + "." + c.to_port + " takes " + in->carries +
                            (takers.empty() ? "; no input of this file takes " + out->carries
                                            : "; connect it to an input that takes " +
                                                  out->carries + " (" + takers + ")"));
    }
  }
}

/// An input a kind needs fed (PortSpec::needed: a replay's transitions, a learner's batches, an
/// evaluator's weights) has a connection. Unconnected, the node did nothing: a run with a replay
/// and a learner that no transitions reached ended with `updates 0` and no word of why, and an
/// evaluator's reactions had nothing to trigger them, so the run failed as it was built.
void check_needed_inputs(const ClusterConfig& config) {
  for (const NodeConfig& node : config.nodes) {
    for (const nodes::PortSpec& input : node.kind->inputs) {
      if (!input.needed) continue;
      if (config.feeds(node.name, input.name)) continue;
      const std::string senders =
          ports_carrying(config, input.carries, &nodes::NodeKind::outputs, " or ");
      throw ConfigError(config.file, node.line, "nodes." + node.name,
                        node.kind->name + " '" + node.name + "' " +
                            (node.kind->publishes_evaluations ? "evaluates" : "works on") +
                            " what comes to " + node.name + "." + input.name +
                            ", and no connection goes there" +
                            (senders.empty() ? " (no node of this file sends " + input.carries + ")"
                                             : ": connect " + senders + " to it"));
    }
  }
}

/// One connection per pair of ports: a second (with the same or another `after`) would deliver
/// every message twice.
void check_repeated_connections(const ClusterConfig& config) {
  std::map<std::string, std::size_t> seen;  // "from.port -> to.port" → its first index
  for (std::size_t i = 0; i < config.connections.size(); ++i) {
    const ConnectionConfig& c = config.connections[i];
    const std::string link = c.from_node + "." + c.from_port + " -> " + c.to_node + "." + c.to_port;
    const auto [it, first] = seen.emplace(link, i);
    if (!first) {
      throw ConfigError(config.file, c.line, "connections[" + std::to_string(i) + "]",
                        link + " is connections[" + std::to_string(it->second) +
                            "] again: give each connection once");
    }
  }
}

/// The link plan (link_plan.hpp) pairs equal replica counts i→i and fans one replica out to (or
/// in from) many; any other shape has no agreed channel order.
void check_link_shapes(const ClusterConfig& config) {
  for (std::size_t i = 0; i < config.connections.size(); ++i) {
    const ConnectionConfig& c = config.connections[i];
    const int from = config.find_node(c.from_node)->replicas;
    const int to = config.find_node(c.to_node)->replicas;
    if (from == to || from == 1 || to == 1 || routed_by_policy(config, c)) continue;
    throw ConfigError(config.file, c.line, "connections[" + std::to_string(i) + "]",
                      "connects " + std::to_string(from) + " replicas of '" + c.from_node +
                          "' to " + std::to_string(to) + " of '" + c.to_node +
                          "'; connect equal replica counts or one replica to many");
  }
}

/// Groups sharing a `process` run in one OS process: one host, and a name no other group's
/// replica already has.
void check_processes(const ClusterConfig& config) {
  std::map<std::string, const NodeConfig*> first_of_process;
  for (const NodeConfig& node : config.nodes) {
    if (node.process.empty()) continue;
    const std::string key = "nodes." + node.name + ".process";
    const auto [first, inserted] = first_of_process.emplace(node.process, &node);
    if (!inserted && first->second->host != node.host) {
      throw ConfigError(config.file, node.process_line, key,
                        "process '" + node.process + "' would hold '" + first->second->name +
                            "' on host " + first->second->host + " and '" + node.name +
                            "' on host " + node.host + "; a process runs on one host");
    }
    for (const NodeConfig& other : config.nodes) {
      if (&other == &node || other.process == node.process) continue;
      for (int r = 0; r < other.replicas; ++r) {
        if (replica_name(other, r) != node.process) continue;
        throw ConfigError(config.file, node.process_line, key,
                          "process name '" + node.process +
                              "' is already the name of a replica of '" + other.name +
                              "'; pick another name");
      }
    }
  }
}

/// A node's outputs may depend on its inputs at the same tag, so a loop of connections without
/// `after` would ask every node on it to wait for itself.
void check_zero_delay_cycles(const ClusterConfig& config) {
  std::map<std::string, std::vector<const ConnectionConfig*>> edges;
  for (const ConnectionConfig& c : config.connections) {
    if (!c.after) edges[c.from_node].push_back(&c);
  }
  enum class Mark { unvisited, active, done };
  std::map<std::string, Mark> marks;
  std::vector<const ConnectionConfig*> path;
  std::function<void(const std::string&)> visit = [&](const std::string& node) {
    marks[node] = Mark::active;
    for (const ConnectionConfig* edge : edges[node]) {
      path.push_back(edge);
      if (marks[edge->to_node] == Mark::active) {
        std::string cycle;
        auto start = std::find_if(path.begin(), path.end(), [&](const ConnectionConfig* e) {
          return e->from_node == edge->to_node;
        });
        for (auto it = start; it != path.end(); ++it) {
          cycle += (*it)->from_node + "." + (*it)->from_port + " -> " + (*it)->to_node + "." +
                   (*it)->to_port + "; ";
        }
        const auto index = static_cast<std::size_t>(edge - config.connections.data());
        throw ConfigError(config.file, edge->line, "connections[" + std::to_string(index) + "]",
                          "cycle without a delay: " + cycle +
                              "give one of these connections an `after` delay (after: 0 is one "
                              "microstep)");
      }
      if (marks[edge->to_node] == Mark::unvisited) visit(edge->to_node);
      path.pop_back();
    }
    marks[node] = Mark::done;
  };
  for (const NodeConfig& n : config.nodes) {
    if (marks[n.name] == Mark::unvisited) visit(n.name);
  }
}

void check_port_clashes(const ClusterConfig& config) {
  // (machine, port) -> who uses it. A machine is its address; a Slurm or Kubernetes host, whose
  // addresses are only known inside the allocation, is a machine of its own.
  std::map<std::pair<std::string, int>, std::string> used;
  auto claim = [&](const std::string& host, int port, const std::string& who, int line,
                   const std::string& key) {
    if (port == 0) return;
    std::string machine = config.hosts.at(host).address;
    if (machine == "localhost") machine = "127.0.0.1";
    const std::string where = machine.empty() ? "host " + host : machine;
    const auto [it, inserted] =
        used.emplace(std::make_pair(machine.empty() ? "host " + host : machine, port), who);
    if (!inserted) {
      throw ConfigError(config.file, line, key,
                        "port " + std::to_string(port) + " on " + where + " is used by both " +
                            it->second + " and " + who);
    }
  };
  const CoordinatorConfig& c = config.coordinator;
  claim(c.host, c.port, "coordinator", c.line, "coordinator.port");
  claim(c.host, c.metrics_port, "coordinator metrics", c.metrics_port_line,
        "coordinator.metrics_port");
  for (const NodeConfig& n : config.nodes) {
    // Replica i listens on the group's port + i: the last one must still be a port.
    const auto fits = [&](std::uint16_t first, int line, const char* key) {
      if (first != 0 && first + n.replicas - 1 > 65535) {
        throw ConfigError(config.file, line, "nodes." + n.name + "." + key,
                          "replica ports run past 65535 (" + std::to_string(n.replicas) +
                              " replicas from " + std::to_string(first) + ")");
      }
    };
    fits(n.data_port, n.data_port_line, "data_port");
    fits(n.metrics_port, n.metrics_port_line, "metrics_port");
    for (int i = 0; i < n.replicas; ++i) {
      const std::string who = replica_name(n, i);
      claim(n.host, n.data_port + i, who + " data", n.data_port_line,
            "nodes." + n.name + ".data_port");
      if (n.metrics_port != 0) {
        claim(n.host, n.metrics_port + i, who + " metrics", n.metrics_port_line,
              "nodes." + n.name + ".metrics_port");
      }
    }
    // An inference group's service (nodes/gateway/PROTOCOL.md): replica i on gateway_port + i.
    // A value that is no port is the param check's to name (hosts/replica_params_check.hpp).
    const auto gateway = n.params.find("gateway_port");
    if (n.kind->hosts_policies && gateway != n.params.end()) {
      bool out_of_range = false;
      const std::optional<long> first = parse_yaml_integer(gateway->second, out_of_range);
      if (first && *first >= 1 && *first + n.replicas - 1 <= 65535) {
        const auto line = n.param_lines.find("gateway_port");
        for (int i = 0; i < n.replicas; ++i) {
          claim(n.host, static_cast<int>(*first) + i, replica_name(n, i) + " gateway",
                line == n.param_lines.end() ? n.line : line->second,
                "nodes." + n.name + ".params.gateway_port");
        }
      }
    }
  }
}

}  // namespace

void validate_topology(const ClusterConfig& config) {
  check_endpoints(config);
  check_needed_inputs(config);
  check_repeated_connections(config);
  check_link_shapes(config);
  validate_policy_hosting(config);
  check_zero_delay_cycles(config);
  check_port_clashes(config);
  check_processes(config);
}

}  // namespace tagflow::cluster
