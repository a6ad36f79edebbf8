#include "nodes/cluster/cluster_config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include "common/bind_address.hpp"
#include "common/fnv1a.hpp"
#include "common/log_text.hpp"
#include "common/numerics.hpp"
#include "nodes/cluster/cluster_names.hpp"
#include "nodes/cluster/cluster_validation.hpp"
#include "nodes/cluster/policy_config.hpp"
#include "nodes/cluster/yaml_reader.hpp"
#include "nodes/kind/process_result.hpp"
#include "nodes/kind/registry.hpp"

namespace tagflow::cluster {
namespace {

const NodeKind* parse_kind(const YamlReader& node) {
  const std::string kind = node.string("kind");
  if (const NodeKind* found = nodes::find_node_kind(kind)) return found;
  node.fail("kind", "unknown node kind '" + kind + "' (known: " + nodes::node_kind_names() + ")");
}

/// [a-z][a-z0-9_]{0,63}: a replica's name (NAME-INDEX) names its files and key files in the run's
/// log directory, its metrics' labels and its Kubernetes and Slurm objects.
constexpr std::size_t kMaxNodeName = 64;
bool is_node_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxNodeName) return false;
  if (!std::islower(static_cast<unsigned char>(name[0]))) return false;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (!std::islower(u) && !std::isdigit(u) && c != '_') return false;
  }
  return true;
}

// A process's name names its files in the run's log directory (NAME.log, NAME.json, its keys),
// beside the coordinator's and the run's own.
constexpr const char* kReservedNamesWhy =
    "the run's log directory has coordinator.log, summary.json and trace.json of its own";

bool is_reserved_process_name(const std::string& name) {
  return name == "coordinator" || name == "summary" || name == "trace";
}

bool is_process_name(const std::string& name) {
  // At most 64: a process's name is its key pair's and its certificate's (whose name holds 64).
  if (name.empty() || name.size() > kMaxNodeName ||
      !std::isalpha(static_cast<unsigned char>(name[0]))) {
    return false;
  }
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '_' && c != '-') return false;
  }
  return true;
}

std::chrono::milliseconds to_ms(std::chrono::nanoseconds d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

/// Slurm's own spelling of a few values: one line, no blanks (they go on #SBATCH lines).
void check_slurm_word(const YamlReader& slurm, const char* key) {
  if (!slurm.has(key)) return;
  const std::string value = slurm.string(key);
  if (value.empty() || value.find_first_of(" \t\n\r'\"#\\$`") != std::string::npos) {
    slurm.fail(key, "must be one word without blanks, quotes, '#', '$' or '\\'");
  }
}

SlurmRequest parse_slurm(const YamlReader& host) {
  const YamlReader slurm = host.map("slurm");
  slurm.only_keys(
      {"partition", "nodes", "gres", "cpus_per_task", "mem", "time", "account", "constraint"});
  SlurmRequest request;
  for (const char* key : {"partition", "gres", "mem", "time", "account", "constraint"}) {
    check_slurm_word(slurm, key);
  }
  request.partition = slurm.string_or("partition", "");
  request.nodes = static_cast<int>(slurm.integer_or("nodes", 1, 1, 4096));
  request.gres = slurm.string_or("gres", "");
  request.cpus_per_task = static_cast<int>(slurm.integer_or("cpus_per_task", 0, 1, 4096));
  request.mem = slurm.string_or("mem", "");
  request.time = slurm.string_or("time", "");
  request.account = slurm.string_or("account", "");
  request.constraint = slurm.string_or("constraint", "");
  request.line = host.line_of("slurm");
  return request;
}

KubernetesRequest parse_kubernetes(const YamlReader& host) {
  const YamlReader kubernetes = host.map("kubernetes");
  kubernetes.only_keys({"pods", "cpu", "memory", "gpu"});
  KubernetesRequest request;
  request.pods = static_cast<int>(kubernetes.integer_or("pods", 1, 1, 1000));
  for (const char* key : {"cpu", "memory"}) {
    if (!kubernetes.has(key)) {
      kubernetes.fail(
          key, "is needed: each pod requests it (a Kubernetes quantity, e.g. " +
                   std::string(key == std::string("cpu") ? "\"2\" or \"500m\"" : "4Gi") + ")");
    }
    const std::string value = kubernetes.string(key);
    if (!is_kubernetes_quantity(value))
      kubernetes.fail(key, "'" + value + "' is not a Kubernetes quantity (e.g. 2, 500m, 4Gi)");
    if (is_zero_kubernetes_quantity(value))
      kubernetes.fail(key, "'" + value + "' asks for nothing: each pod needs more than 0");
  }
  request.cpu = kubernetes.string("cpu");
  request.memory = kubernetes.string("memory");
  request.gpu = static_cast<int>(kubernetes.integer_or("gpu", 0, 0, 64));
  request.line = host.line_of("kubernetes");
  return request;
}

/// "HOST=ADDR,ADDR;HOST=ADDR" (kNodeAddressesVariable) into host -> addresses. A value that is
/// not of that form, or that names a host `hosts` does not have, is refused at the `hosts:` map:
/// read as unset, it gave addresses nobody listens on without a word.
std::map<std::string, std::vector<std::string>> node_addresses_given(const YamlReader& hosts) {
  std::map<std::string, std::vector<std::string>> out;
  const char* name = kNodeAddressesVariable;
  const char* value = std::getenv(name);
  if (value == nullptr) value = std::getenv(name = kSlurmAddressesVariable);
  if (value == nullptr) return out;
  const std::string text = value;
  const auto refuse = [&](const std::string& why) {
    hosts.fail_here(std::string(name) + "='" + escape_for_log(text, 256) + "' " + why +
                    " (the form is HOST=ADDR[,ADDR...][;HOST=ADDR...], as a Slurm job's "
                    "runs/CLUSTER-JOBID/addresses holds it)");
  };
  std::stringstream entries(text);
  std::string entry;
  while (std::getline(entries, entry, ';')) {
    if (entry.empty()) continue;  // a trailing ';'
    const auto equals = entry.find('=');
    if (equals == std::string::npos || equals == 0) {
      refuse("has '" + escape_for_log(entry, 128) + "', which is no HOST=ADDR");
    }
    const std::string host = entry.substr(0, equals);
    if (!hosts.node()[host])
      refuse("names host '" + escape_for_log(host, 128) + "', which the file does not have");
    std::stringstream addresses(entry.substr(equals + 1));
    std::string address;
    auto& list = out[host];
    while (std::getline(addresses, address, ',')) {
      if (address.empty()) refuse("gives host '" + host + "' an empty address");
      list.push_back(address);
    }
    if (list.empty()) refuse("gives host '" + host + "' no address");
  }
  return out;
}

void parse_hosts(const YamlReader& top, ClusterConfig& config) {
  if (!top.has("hosts")) {
    HostConfig local;
    local.name = "local";
    local.address = "127.0.0.1";
    config.hosts["local"] = local;
    config.first_host = "local";
    return;
  }
  const YamlReader hosts = top.map("hosts");
  const auto allocated = node_addresses_given(hosts);
  for (const auto& entry : hosts.node()) {
    const std::string name = entry.first.Scalar();
    // A host's name goes into file names (LOG_DIR/host-NAME.log, a far half's log directory),
    // --host and the lines that name it: the cluster names' rule.
    if (!is_safe_cluster_name(name)) hosts.fail(name, safe_cluster_name_rule(name, "host names"));
    const YamlReader host = hosts.map_entry(entry.first, entry.second);
    host.only_keys({"address", "ssh", "tagflow", "workdir", "slurm", "kubernetes"});
    HostConfig parsed;
    parsed.name = name;
    if (host.has("slurm") && host.has("kubernetes")) {
      host.fail("kubernetes", "a host is a Slurm resource or Kubernetes pods, not both");
    }
    if (host.has("slurm") || host.has("kubernetes")) {
      const bool slurm = host.has("slurm");
      for (const char* key : {"address", "ssh", "workdir"}) {
        if (host.has(key)) {
          host.fail(key, slurm
                             ? "a Slurm host has none: its nodes are found inside the allocation"
                             : "a Kubernetes host has none: its pods are found by their DNS names");
        }
      }
      if (slurm) {
        parsed.slurm = parse_slurm(host);
      } else {
        parsed.kubernetes = parse_kubernetes(host);
      }
      const auto nodes = allocated.find(name);
      if (nodes != allocated.end()) {
        const int count = node_count(parsed);
        if (static_cast<int>(nodes->second.size()) != count) {
          host.fail(slurm ? "slurm" : "kubernetes",
                    "the allocation has " + std::to_string(nodes->second.size()) + " " +
                        (slurm ? "node(s)" : "pod(s)") + " for it, the file asks for " +
                        std::to_string(count));
        }
        parsed.node_addresses = nodes->second;
        parsed.address = parsed.node_addresses.front();
      }
    } else {
      parsed.address = host.string("address");
      // The form only (an IPv4 or IPv6 address, or a host name): whether it is one of the
      // machine's addresses is known on that host alone (tagflow up checks it there).
      if (const std::string problem = resolvable_bind_problem(parsed.address); !problem.empty()) {
        host.fail("address", problem);
      }
      // A pod of a Kubernetes run stands in for an address host: its address is the pod's.
      const auto pod = allocated.find(name);
      if (pod != allocated.end() && pod->second.size() == 1) {
        parsed.node_addresses = pod->second;
        parsed.address = pod->second.front();
      }
    }
    parsed.ssh = host.string_or("ssh", "");
    parsed.tagflow = host.string_or("tagflow", "tagflow");
    parsed.workdir = host.string_or("workdir", "");
    for (const char* key : {"ssh", "tagflow", "workdir"}) {
      const std::string value = host.string_or(key, "x");
      if (value.empty()) host.fail(key, "must not be empty");
      if (value.find('\n') != std::string::npos) host.fail(key, "must be one line");
    }
    if (!parsed.ssh.empty() && parsed.ssh.front() == '-') {
      host.fail("ssh", "an ssh destination cannot start with '-'");
    }
    parsed.line = line_of(entry.first);
    if (config.first_host.empty()) config.first_host = name;
    config.hosts[name] = std::move(parsed);
  }
  if (config.hosts.empty()) {
    top.fail("hosts", "name at least one host (or leave hosts: out for one local host)");
  }
}

std::string check_host(const YamlReader& reader, const ClusterConfig& config) {
  const std::string host = reader.string_or("host", config.first_host);
  if (config.hosts.count(host) == 0) reader.fail("host", "no host '" + host + "' under hosts");
  return host;
}

void parse_coordinator(const YamlReader& top, ClusterConfig& config) {
  CoordinatorConfig& c = config.coordinator;
  c.host = config.first_host;
  if (!top.has("coordinator")) return;
  const YamlReader reader = top.map("coordinator");
  c.line = top.line_of("coordinator");
  reader.only_keys(
      {"host", "port", "metrics_port", "heartbeat_interval", "heartbeat_timeout", "join_timeout"});
  c.host = check_host(reader, config);
  c.port = reader.port_or("port", c.port);
  c.port_line = reader.line_of("port");
  c.metrics_port = reader.port_or("metrics_port", 0);
  c.metrics_port_line = reader.line_of("metrics_port");
  // Files of earlier versions set the heartbeat period; a federate sends one every
  // heartbeat_timeout / 4 (federation/PROTOCOL.md §6), so it is read and ignored.
  if (reader.has("heartbeat_interval")) (void)reader.duration("heartbeat_interval");
  const auto timeout = [&](const char* key, std::chrono::milliseconds min,
                           std::chrono::milliseconds fallback) {
    if (!reader.has(key)) return fallback;
    const std::chrono::nanoseconds value = reader.duration(key);
    if (value < min || value > std::chrono::hours(24)) {
      reader.fail(key, "must be at least " + std::to_string(min.count()) +
                           "ms and at most 24 hours, got '" + reader.string(key) + "'");
    }
    return to_ms(value);
  };
  // A heartbeat goes every heartbeat_timeout / 4: at least every millisecond.
  c.heartbeat_timeout =
      timeout("heartbeat_timeout", std::chrono::milliseconds(4), c.heartbeat_timeout);
  c.join_timeout = timeout("join_timeout", std::chrono::milliseconds(1), c.join_timeout);
}

void parse_nodes(const YamlReader& top, ClusterConfig& config) {
  const YamlReader nodes = top.map("nodes");
  config.nodes_line = top.line_of("nodes");
  for (const auto& entry : nodes.node()) {
    const std::string name = entry.first.Scalar();
    if (!is_node_name(name)) {
      nodes.fail(
          name,
          "node names are 1 to 64 lower-case letters, digits and '_', starting with a letter");
    }
    if (is_reserved_process_name(name)) {
      nodes.fail(name,
                 "'" + name + "' is reserved (" + kReservedNamesWhy + "); name the node otherwise");
    }
    const YamlReader node = nodes.map_entry(entry.first, entry.second);
    node.only_keys({"kind", "replicas", "host", "data_port", "metrics_port", "params", "process"});
    NodeConfig n;
    n.name = name;
    n.line = line_of(entry.first);
    n.kind = parse_kind(node);
    n.replicas = static_cast<int>(node.integer_or("replicas", 1, 1, 1024));
    // A replica's name is its process's (without `process:`), its key pair's and its TLS
    // certificate's, whose name holds at most 64 characters.
    if (const std::string last = name + "-" + std::to_string(n.replicas - 1);
        n.replicas > 1 && last.size() > kMaxNodeName) {
      node.fail("replicas", "its replicas are named " + name + "-0 to " + last + ", over " +
                                std::to_string(kMaxNodeName) +
                                " characters (a key's certificate holds 64): shorten the name");
    }
    n.host = check_host(node, config);
    n.data_port = node.port_or("data_port", 0);
    if (n.data_port == 0) node.fail("data_port", "missing (required)");
    n.data_port_line = node.line_of("data_port");
    n.metrics_port = node.port_or("metrics_port", 0);
    if (n.metrics_port != 0) n.metrics_port_line = node.line_of("metrics_port");
    if (node.has("process")) {
      n.process = node.string("process");
      n.process_line = node.line_of("process");
      if (!is_process_name(n.process)) {
        node.fail("process",
                  "process names are 1 to 64 letters, digits, '_' and '-', starting with a "
                  "letter; got '" +
                      n.process + "'");
      }
      if (is_reserved_process_name(n.process)) {
        node.fail("process", "'" + n.process + "' is reserved (" + kReservedNamesWhy +
                                 "); name the process otherwise");
      }
    }
    if (node.has("params")) {
      n.params_line = node.line_of("params");
      const YamlReader params = node.map("params");
      for (const auto& param : params.node()) {
        const std::string key = param.first.Scalar();
        if (param.second.IsNull()) {
          params.fail(key, "an empty value: give the param a value or leave it out");
        }
        // A scalar is kept as its value: YAML's emitter would quote one that needs quotes in
        // YAML ("*" for `gateway_bind: "*"`, "" for an empty string), and a kind would read the
        // quotes as part of the value. A list or a map is kept as YAML text.
        if (param.second.IsScalar()) {
          n.params[key] = param.second.Scalar();
        } else {
          std::ostringstream text;
          text << param.second;
          n.params[key] = text.str();
          n.param_collections[key] = param.second.IsSequence() ? "a list" : "a map";
        }
        n.param_lines[key] = line_of(param.first);
      }
    }
    config.nodes.push_back(std::move(n));
  }
  if (config.nodes.empty()) top.fail("nodes", "a cluster needs at least one node");
}

void split_endpoint(const YamlReader& item, const std::string& key, std::string& node,
                    std::string& port) {
  const std::string text = item.string(key);
  const auto dot = text.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == text.size()) {
    item.fail(key, "expected NODE.PORT, got '" + text + "'");
  }
  node = text.substr(0, dot);
  port = text.substr(dot + 1);
}

void parse_connections(const YamlReader& top, const std::string& file, ClusterConfig& config) {
  if (!top.has("connections")) return;
  const YAML::Node list = top.raw("connections");
  if (!list.IsSequence()) top.fail("connections", "expected a list of {from, to, after}");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YamlReader item(list[i], file, "connections[" + std::to_string(i) + "]");
    item.only_keys({"from", "to", "after"});
    ConnectionConfig c;
    split_endpoint(item, "from", c.from_node, c.from_port);
    split_endpoint(item, "to", c.to_node, c.to_port);
    if (item.has("after")) c.after = item.duration("after");
    c.line = line_of(list[i]);
    c.from_line = item.line_of("from");
    c.to_line = item.line_of("to");
    config.connections.push_back(std::move(c));
  }
}

void parse_stop(const YamlReader& top, ClusterConfig& config) {
  const YamlReader stop = top.map("stop");
  stop.only_keys({"env_steps", "seconds", "target_return"});
  if (stop.has("env_steps")) config.stop.env_steps = stop.integer("env_steps", 1, 1L << 62);
  if (stop.has("seconds")) {
    config.stop.seconds = stop.number("seconds");
    // At most a year: a run of wall time, counted in nanoseconds by the launcher.
    if (!(*config.stop.seconds > 0 && *config.stop.seconds <= 31'536'000)) {
      stop.fail("seconds", "must be positive and at most 31536000 (a year)");
    }
  }
  if (stop.has("target_return")) {
    config.stop.target_return = stop.number("target_return");
    if (!std::isfinite(*config.stop.target_return)) stop.fail("target_return", "must be finite");
  }
  if (!config.stop.env_steps && !config.stop.seconds && !config.stop.target_return) {
    top.fail("stop", "give at least one of env_steps, seconds, target_return");
  }
}

void parse_trace(const YamlReader& top, ClusterConfig& config) {
  if (!top.has("trace")) return;
  const auto refuse = [&top] {
    top.fail("trace", "expected true, false or a map of keys (events, digests, values_mb)");
  };
  if (top.raw("trace").IsNull()) refuse();
  if (top.raw("trace").IsScalar()) {
    try {
      config.trace.enabled = top.boolean_or("trace", false);
    } catch (const ConfigError&) {
      refuse();
    }
  } else {
    const YamlReader trace = top.map("trace");
    trace.only_keys({"events", "digests", "values_mb"});
    config.trace.enabled = true;
    config.trace.events_per_thread =
        static_cast<std::size_t>(trace.integer_or("events", 200'000, 1'000, 10'000'000));
    config.trace.digests = trace.boolean_or("digests", false);
    config.trace.values_mb = static_cast<std::uint64_t>(trace.integer_or("values_mb", 64, 0, 4096));
  }
}

void parse_recovery(const YamlReader& top, ClusterConfig& config) {
  if (top.has("checkpoint")) {
    const YamlReader checkpoint = top.map("checkpoint");
    checkpoint.only_keys({"every", "keep"});
    config.checkpoint.line = top.line_of("checkpoint");
    const std::chrono::nanoseconds every = checkpoint.duration("every");
    constexpr std::int64_t kMs = 1000000;
    if (every.count() < kMs || every.count() % kMs != 0) {
      checkpoint.fail("every",
                      "must be a whole number of milliseconds, at least 1ms (logical time in "
                      "reactor mode, where the samplers' rounds are 1 ms apart; wall time in "
                      "actor mode)");
    }
    config.checkpoint.every = every;
    config.checkpoint.keep = static_cast<int>(checkpoint.integer_or("keep", 2, 1, 1000));
    for (const NodeConfig& node : config.nodes) {
      if (!node.kind->checkpointable) {
        std::string kinds;
        for (const NodeKind* k : nodes::node_kinds()) {
          if (k->checkpointable) kinds += (kinds.empty() ? "" : ", ") + k->name;
        }
        top.fail("checkpoint", "node '" + node.name + "' (" + node.kind->name +
                                   ") cannot be checkpointed; checkpoints cover " + kinds +
                                   " nodes");
      }
    }
  }
  if (top.has("restart")) {
    const YamlReader restart = top.map("restart");
    restart.only_keys({"max"});
    config.restart.line = top.line_of("restart");
    config.restart.max = static_cast<int>(restart.integer_or("max", 0, 0, 100));
  }
}

}  // namespace

ConfigError::ConfigError(std::string file, int line, std::string key, const std::string& message)
    : std::runtime_error(file + ":" + std::to_string(line) + ": " + escape_for_log(key, 256) +
                         ": " + message),
      file_(std::move(file)),
      line_(line),
      key_(std::move(key)) {}

const char* to_string(Mode mode) { return mode == Mode::reactor ? "reactor" : "actor"; }

bool is_kubernetes_quantity(const std::string& value) {
  // A decimal number with an optional binary (Ki..Ei) or decimal (n, u, m, k, M..E) suffix, or
  // an exponent.
  static const std::regex pattern(
      R"(^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$)");
  return std::regex_match(value, pattern);
}

bool is_zero_kubernetes_quantity(const std::string& value) {
  if (!is_kubernetes_quantity(value)) return false;
  // The number before the suffix or exponent: zero when it has no digit but 0.
  const std::string number = value.substr(0, value.find_first_not_of("+0123456789."));
  return number.find_first_of("123456789") == std::string::npos;
}

int node_count(const HostConfig& host) {
  if (host.slurm) return host.slurm->nodes;
  if (host.kubernetes) return host.kubernetes->pods;
  return 1;
}

const NodeConfig* ClusterConfig::find_node(const std::string& node_name) const {
  for (const NodeConfig& n : nodes) {
    if (n.name == node_name) return &n;
  }
  return nullptr;
}

bool ClusterConfig::feeds(const std::string& node, const std::string& port) const {
  return std::any_of(connections.begin(), connections.end(), [&](const ConnectionConfig& c) {
    return c.to_node == node && c.to_port == port;
  });
}

bool ClusterConfig::drains(const std::string& node, const std::string& port) const {
  return std::any_of(connections.begin(), connections.end(), [&](const ConnectionConfig& c) {
    return c.from_node == node && c.from_port == port;
  });
}

std::optional<std::chrono::nanoseconds> parse_duration(const std::string& text) {
  bool too_long = false;
  return parse_duration(text, too_long);
}

std::optional<std::chrono::nanoseconds> parse_duration(const std::string& text, bool& too_long) {
  too_long = false;
  // NUMBER [UNIT] with optional blanks (spaces and tabs; no line breaks) around; NUMBER is
  // digits with an optional fraction.
  std::size_t i = 0;
  const auto skip_blanks = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  };
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    return i > from;
  };
  skip_blanks();
  const std::size_t whole_start = i;
  if (!digits()) return std::nullopt;
  std::string whole = text.substr(whole_start, i - whole_start);
  std::string fraction;
  if (i < text.size() && text[i] == '.') {
    const std::size_t fraction_start = ++i;
    if (!digits()) return std::nullopt;
    fraction = text.substr(fraction_start, i - fraction_start);
  }
  skip_blanks();
  const std::size_t unit_start = i;
  while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
  const std::string unit = text.substr(unit_start, i - unit_start);
  skip_blanks();
  if (i != text.size()) return std::nullopt;
  // Exact decimal arithmetic: a duration is a whole number of nanoseconds, so "1.5ns" is none,
  // and the longest is 2^62 ns to the nanosecond.
  whole.erase(0, std::min(whole.find_first_not_of('0'), whole.size()));
  fraction.erase(fraction.find_last_not_of('0') + 1);
  if (unit.empty()) {
    if (!whole.empty() || !fraction.empty()) return std::nullopt;  // only 0 may omit its unit
    return std::chrono::nanoseconds(0);
  }
  static const std::map<std::string, std::uint64_t> kScale = {
      {"ns", 1}, {"us", 1'000}, {"ms", 1'000'000}, {"s", 1'000'000'000}, {"m", 60'000'000'000}};
  const auto scale = kScale.find(unit);
  if (scale == kScale.end()) return std::nullopt;
  // More whole digits than 2^62 has (19) is too long whatever the unit; a fraction of more
  // digits than any scale can make whole (11) is finer than a nanosecond.
  if (whole.size() > 19) {
    too_long = true;
    return std::nullopt;
  }
  if (fraction.size() > 11) return std::nullopt;
  __extension__ typedef unsigned __int128 Wide;  // GCC and Clang; exact to 2^128
  Wide ns = 0;
  for (const char digit : whole) ns = ns * 10 + static_cast<Wide>(digit - '0');
  ns *= scale->second;
  Wide part = 0;
  Wide tenths = 1;
  for (const char digit : fraction) {
    part = part * 10 + static_cast<Wide>(digit - '0');
    tenths *= 10;
  }
  part *= scale->second;
  if (part % tenths != 0) return std::nullopt;  // finer than a nanosecond
  ns += part / tenths;
  if (ns > static_cast<Wide>(kMaxDurationNs)) {
    too_long = true;
    return std::nullopt;
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
}

namespace {

/// Notes where each document starts, and nothing else: reading a text's documents as events
/// takes no memory per document (building each, as YAML::LoadAll does, takes a pool of its own).
class DocumentStarts : public YAML::EventHandler {
 public:
  int last_line = 0;
  void OnDocumentStart(const YAML::Mark& mark) override { last_line = mark.line + 1; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

/// The 1-based line where a second YAML document of `text` starts, or 0 when it has one.
int second_document_line(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  if (!parser.HandleNextDocument(starts)) return 0;
  if (!parser.HandleNextDocument(starts)) return 0;
  return std::max(starts.last_line, 1);
}

/// " (...)" when the 0-based line `line` (or the one before: yaml-cpp may report the next) is
/// indented with a tab, which YAML does not allow; else "".
std::string tab_hint(const std::string& text, int line) {
  std::istringstream lines(text);
  std::string current;
  for (int i = 0; std::getline(lines, current) && i <= line; ++i) {
    if (i < line - 1) continue;
    const std::size_t indent = current.find_first_not_of(" \t");
    if (current.substr(0, indent).find('\t') != std::string::npos) {
      return " (line " + std::to_string(i + 1) +
             " is indented with a tab: YAML indents with spaces)";
    }
  }
  return "";
}

/// " (...)" when the 0-based line `line` is indented by a number of spaces that no line of the
/// maps or lists it closes has (YAML then finds no end to the map or list above it: "end of map
/// not found", "end of sequence not found"), naming the indents of the lines above; else "". The
/// mistake may be that line's indent or one above it.
std::string indent_hint(const std::string& text, int line) {
  std::istringstream lines(text);
  std::string current;
  std::vector<std::size_t> levels;  // the indents of the blocks still open, outermost first
  for (int i = 0; std::getline(lines, current) && i <= line; ++i) {
    const std::size_t indent = current.find_first_not_of(' ');
    if (indent == std::string::npos || current[indent] == '#' || current[indent] == '\r') {
      continue;  // a blank line or a comment
    }
    while (!levels.empty() && levels.back() > indent) levels.pop_back();
    if (i == line) {
      if (!levels.empty() && levels.back() == indent) return "";
      std::string above;
      for (const std::size_t level : levels)
        above += (above.empty() ? "" : ", ") + std::to_string(level);
      return " (line " + std::to_string(i + 1) + " is indented " + std::to_string(indent) +
             " spaces, as no line of the maps or lists around it is" +
             (above.empty() ? "" : " (" + above + ")") +
             ": check the indentation of the lines above it)";
    }
    if (levels.empty() || levels.back() < indent) levels.push_back(indent);
  }
  return "";
}

/// The 0-based line, `line` or the line with content before it (yaml-cpp reports a missing ':'
/// at the next key), that holds a word and a value but no ':' (`data_port 7620`); else -1.
int missing_colon_line(const std::string& text, int line) {
  const auto word_then_value = [](const std::string& l) {
    const std::size_t first = l.find_first_not_of(" \t");
    if (first == std::string::npos || std::isalpha(static_cast<unsigned char>(l[first])) == 0) {
      return false;
    }
    const std::size_t blank = l.find_first_of(" \t", first);
    return blank != std::string::npos && l.find_first_not_of(" \t\r", blank) != std::string::npos &&
           l.find(':') == std::string::npos && l.find('#') == std::string::npos;
  };
  std::istringstream lines(text);
  std::string current;
  int previous = -1;
  bool previous_has_no_colon = false;
  for (int i = 0; std::getline(lines, current) && i <= line; ++i) {
    const std::size_t start = current.find_first_not_of(" \t\r");
    if (start == std::string::npos || current[start] == '#') continue;
    if (i < line) {
      previous = i;
      previous_has_no_colon = word_then_value(current);
      continue;
    }
    if (previous >= 0 && previous_has_no_colon) return previous;
    return word_then_value(current) ? i : -1;
  }
  return -1;
}

/// What is still open above the 0-based line `error_line` (-1: nothing). YAML lets a quoted value
/// and a flow list or map run on over lines, so one left open is found only where another value's
/// quote closes it, or the parser runs out of lines or meets a block key, far below it.
struct OpenAbove {
  int quote = -1;  // the first line where a quoted value opens and is not closed on that line
  int flow = -1;   // the line of the innermost `[` or `{` still open at `error_line`
};

/// Finds OpenAbove's lines: a quote, `[` or `{` opens a value where one starts (after `-`, `:`,
/// `?`, `[`, `{`, `,` or at a line's start), a bracket inside a flow collection too.
OpenAbove open_above(const std::string& text, int error_line) {
  OpenAbove found;
  std::istringstream lines(text);
  std::string line;
  // The brackets still open and their lines, innermost last.
  std::vector<std::pair<int, char>> open;
  for (int i = 0; i <= error_line && std::getline(lines, line); ++i) {
    char quote = 0;
    char before = 0;  // the last character outside a quote that was not a blank
    for (std::size_t c = 0; c < line.size(); ++c) {
      const char ch = line[c];
      const bool value_starts = (c == 0 || std::strchr(" \t[{,", line[c - 1]) != nullptr) &&
                                (before == 0 || std::strchr("-:[{,?", before) != nullptr);
      if (quote == '"' && ch == '\\') {
        ++c;
      } else if (quote != 0) {
        if (ch != quote) continue;
        if (quote == '\'' && c + 1 < line.size() && line[c + 1] == '\'') {
          ++c;  // '' inside single quotes is one quote
          continue;
        }
        quote = 0;
        before = ch;
      } else if ((ch == '"' || ch == '\'') && value_starts) {
        quote = ch;
      } else if ((ch == '[' || ch == '{') && (value_starts || !open.empty())) {
        open.emplace_back(i, ch);
        before = ch;
      } else if ((ch == ']' || ch == '}') && !open.empty()) {
        // A bracket of the other kind closes nothing (YAML fails there, at its own line).
        if (open.back().second == (ch == ']' ? '[' : '{')) open.pop_back();
        before = ch;
      } else if (ch == '#' && (c == 0 || line[c - 1] == ' ' || line[c - 1] == '\t')) {
        break;  // a comment
      } else if (ch != ' ' && ch != '\t' && ch != '\r') {
        before = ch;
      }
    }
    if (quote != 0 && found.quote < 0 && i < error_line) found.quote = i;
  }
  if (!open.empty() && open.back().first < error_line) found.flow = open.back().first;
  return found;
}

/// The ConfigError for yaml-cpp's syntax error `e` in `text`: at an unclosed quote's line when
/// one opens above the error, at an unclosed flow list's or map's line when the parser found no
/// end to one that opens above it, else at the error's line, with a hint for a tab in the
/// indentation.
ConfigError syntax_error(const std::string& text, const std::string& file,
                         const YAML::ParserException& e) {
  // yaml-cpp names the line after the last one when it ran out of text.
  const auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) +
                     (text.empty() || text.back() == '\n' ? 0 : 1);
  const auto read_on = [&] {
    return std::string(" (YAML read on and failed ") +
           (e.mark.line >= lines ? std::string("at the end of the file")
                                 : "at line " + std::to_string(e.mark.line + 1)) +
           ": " + e.msg + ")";
  };

  const OpenAbove open = open_above(text, e.mark.line);
  if (open.quote >= 0) {
    return ConfigError(file, open.quote + 1, "(syntax)",
                       "a quoted value opens on this line and is not closed on it" + read_on());
  }
  // A bracket still open where YAML failed: the lines below it were read as its content
  // ("end of sequence flow not found", "illegal block entry" at a `- ` item, ...).
  if (open.flow >= 0) {
    return ConfigError(
        file, open.flow + 1, "(syntax)",
        "a flow list or map ('[' or '{') opens on this line and is not closed" + read_on());
  }
  std::string hint = tab_hint(text, e.mark.line);
  if (hint.empty() && (e.msg == "end of map not found" || e.msg == "end of sequence not found")) {
    hint = indent_hint(text, e.mark.line);
  }
  if (const int colon = missing_colon_line(text, e.mark.line); hint.empty() && colon >= 0) {
    return ConfigError(
        file, colon + 1, "(syntax)",
        "no ':' after the key on this line: a key and its value are written `key: value`" +
            read_on());
  }
  return ConfigError(file, e.mark.line + 1, "(syntax)", e.msg + hint);
}

}  // namespace

NodeConfig::ParamPlace NodeConfig::place_of(const std::string& param) const {
  const auto it = param_lines.find(param);
  if (it != param_lines.end()) return {it->second, "nodes." + name + ".params." + param, true};
  if (params_line > 0) return {params_line, "nodes." + name + ".params", false};
  return {line, "nodes." + name, false};
}

std::string replica_name(const NodeConfig& node, int index) {
  return node.replicas == 1 ? node.name : node.name + "-" + std::to_string(index);
}

ClusterConfig parse_cluster_config(const std::string& yaml_text, const std::string& file) {
  check_cluster_text(yaml_text, file);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
    if (const int second = second_document_line(yaml_text); second != 0) {
      throw ConfigError(file, second, "(file)",
                        "a second YAML document (after `---`): a cluster file is one document");
    }
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own depth guard, which words it "bad file".
    throw ConfigError(file, e.mark.line + 1, "(syntax)",
                      "nested " + std::to_string(e.depth()) +
                          " levels deep or more, past what the YAML reader reads (a cluster file "
                          "nests at most 100 levels below its top-level map)");
  } catch (const YAML::ParserException& e) {
    throw syntax_error(yaml_text, file, e);
  }
  resolve_merge_keys(root, file);
  check_cluster_tree(root, file, yaml_text);
  if (root.IsNull()) {
    throw ConfigError(file, 0, "(file)",
                      "empty: a cluster file is a map of keys (cluster, nodes, ...)");
  }
  const YamlReader top(root, file, "");
  top.only_keys({"cluster", "mode", "seed", "hosts", "coordinator", "nodes", "connections", "stop",
                 "checkpoint", "restart", "monitoring", "security", "policies", "agents",
                 "numerics", "trace", "cpu_bind"},
                kUnreadKeyPrefix);
  ClusterConfig config;
  config.file = file;
  config.file_digest = nodes::hex64(fnv1a64(yaml_text));
  config.name = top.string("cluster");
  if (!is_safe_cluster_name(config.name)) top.fail("cluster", safe_cluster_name_rule(config.name));
  const std::string mode = top.string_or("mode", "reactor");
  if (mode != "reactor" && mode != "actor") top.fail("mode", "expected reactor or actor");
  config.mode = mode == "reactor" ? Mode::reactor : Mode::actor;
  config.seed = static_cast<std::uint64_t>(top.integer_or("seed", 0, 0, 1L << 62));
  const std::string numerics = top.string_or("numerics", "portable");
  if (!numerics::parse_mode(numerics)) {
    top.fail("numerics",
             "expected portable (the same digest on every x86-64-v3 machine) or "
             "native (the CPU's fastest kernels; the digest is specific to the CPU)");
  }
  config.numerics = *numerics::parse_mode(numerics);
  const std::string cpu_bind = top.string_or("cpu_bind", "auto");
  if (cpu_bind != "auto" && cpu_bind != "none") {
    top.fail("cpu_bind",
             "expected auto (reactor mode: where a machine runs at least as many processes as it "
             "has CPUs, each process runs on one of them) or none (the scheduler places every "
             "thread)");
  }
  config.cpu_bind_auto = cpu_bind == "auto";
  parse_hosts(top, config);
  parse_coordinator(top, config);
  parse_nodes(top, config);
  parse_policies(top, config);
  parse_connections(top, file, config);
  parse_stop(top, config);
  parse_recovery(top, config);
  parse_trace(top, config);
  if (top.has("monitoring")) {
    const YamlReader monitoring = top.map("monitoring");
    monitoring.only_keys({"bind"});
    config.monitoring.bind = monitoring.string_or("bind", config.monitoring.bind);
    if (monitoring.has("bind")) config.monitoring.bind_line = monitoring.line_of("bind");
    if (const std::string problem = resolvable_bind_problem(config.monitoring.bind);
        !problem.empty()) {
      monitoring.fail("bind", problem);
    }
  }
  if (top.has("security") && top.raw("security").IsScalar()) {
    if (top.string("security") != "none") {
      top.fail("security", "expected a map (curve, keys_dir) or none");
    }
    config.security.none = true;
  } else if (top.has("security")) {
    const YamlReader security = top.map("security");
    security.only_keys({"curve", "keys_dir"});
    config.security.curve = security.boolean_or("curve", false);
    config.security.keys_dir = security.string_or("keys_dir", "");
    if (security.has("keys_dir")) config.security.keys_dir_line = security.line_of("keys_dir");
    // Slurm and Kubernetes hosts get keys minted by `tagflow slurm` and `tagflow k8s`, which
    // refuse a keys_dir: sending such a file to `tagflow keys generate` led in a circle.
    const bool minted =
        std::any_of(config.hosts.begin(), config.hosts.end(), [](const auto& entry) {
          return entry.second.slurm.has_value() || entry.second.kubernetes.has_value();
        });
    if (config.security.curve && config.security.keys_dir.empty() && minted) {
      security.fail("curve",
                    "a file with Slurm or Kubernetes hosts takes no key files: tagflow "
                    "slurm and tagflow k8s mint its keys, and a file without `security:` "
                    "is closed with them (remove the security map)");
    }
    if (config.security.curve && config.security.keys_dir.empty()) {
      security.fail("keys_dir", security.has("keys_dir")
                                    ? "is empty: give the directory `tagflow keys generate DIR` "
                                      "wrote (curve: true reads its keys there)"
                                    : "curve: true needs keys_dir (make one with tagflow keys "
                                      "generate)");
    }
    if (!config.security.curve && security.has("keys_dir")) {
      security.fail("keys_dir", "read only with curve: true (add it, or leave keys_dir out)");
    }
  }
  validate_topology(config);
  return config;
}

void refuse_keys_dir(const ClusterConfig& config, const std::string& minted) {
  if (config.security.keys_dir.empty()) return;
  throw ConfigError(config.file, config.security.keys_dir_line, "security.keys_dir",
                    minted +
                        ": remove the security map (curve: true needs keys_dir; a cluster "
                        "without `security:` is closed with those minted keys)");
}

void use_run_keys(ClusterConfig& config, const std::string& keys_dir) {
  config.security.curve = true;
  // A command line's path: from the working directory (the file's keys_dir is from the file's).
  config.security.keys_dir = std::filesystem::absolute(keys_dir).lexically_normal().string();
  config.security.none = false;
  config.security.run_keys = true;
}

std::string resolved_keys_dir(const ClusterConfig& config) {
  if (!config.security.curve) return "";
  std::filesystem::path keys = config.security.keys_dir;
  if (keys.is_relative()) keys = std::filesystem::path(config.file).parent_path() / keys;
  return keys.string();
}

std::string security_mode(const ClusterConfig& config) {
  if (config.security.run_keys) return "per-run keys";
  if (config.security.curve) return "key files";
  return config.security.none ? "none" : "open";
}

ClusterConfig load_cluster_config(const std::string& path) {
  return parse_cluster_config(read_cluster_file(path), path);
}

std::string read_cluster_file(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status)) {
    throw ConfigError(path, 0, "(file)", "a directory, not a cluster file");
  }
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    throw ConfigError(path, 0, "(file)", "not a regular file (a pipe or a device?)");
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int why = errno;  // open(2)'s, which the stream keeps to itself
    throw ConfigError(path, 0, "(file)",
                      std::string("cannot open the cluster file") +
                          (why != 0 ? std::string(": ") + std::strerror(why) : std::string()));
  }
  std::string text(kMaxClusterFileBytes + 1, '\0');  // one byte more tells a file over the cap
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace tagflow::cluster
