#include "cli/launch/k8s_manifests.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <stdexcept>

#include "common/log_text.hpp"
#include "nodes/cluster/process_plan.hpp"
#include "nodes/cluster/scrape_targets.hpp"
#include "nodes/cluster/service_endpoints.hpp"
#include "nodes/cluster/yaml_reader.hpp"

namespace tagflow::cli {
namespace {

using json = nlohmann::ordered_json;

constexpr std::size_t kMaxLabel = 63;

bool is_dns_label(const std::string& name, bool letter_first) {
  static const std::regex label("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  return !name.empty() && name.size() <= kMaxLabel && std::regex_match(name, label) &&
         (!letter_first || (name.front() >= 'a' && name.front() <= 'z'));
}

/// The line of a key of the file, `key` at the top and then each of `inner` in the map under the
/// one before (0 when it cannot be read again or is not there).
int top_line(const std::string& file, const std::string& key,
             const std::vector<std::string>& inner = {}) {
  try {
    YAML::Node map = YAML::LoadFile(file);
    cluster::resolve_merge_keys(map, file);  // as the loader read it: merged keys are found too
    int line = 0;
    std::vector<std::string> path{key};
    path.insert(path.end(), inner.begin(), inner.end());
    for (const std::string& name : path) {
      if (!map.IsMap()) return line;
      bool found = false;
      for (const auto& entry : map) {
        if (entry.first.Scalar() == name) {
          line = entry.first.Mark().line + 1;
          map.reset(entry.second);  // rebinds map, leaving the tree as it is
          found = true;
          break;
        }
      }
      if (!found) return line;
    }
    return line;
  } catch (const std::exception&) {  // the file changed since it was loaded
  }
  return 0;
}

/// Every port of `host`'s processes: data (and the coordinator's) in `ports`, metrics in
/// `metrics`; a replica's ports are the group's plus its index (the loader refused any past
/// 65535).
void collect_ports(const cluster::ClusterConfig& config, K8sHost& host) {
  std::set<std::uint16_t> ports;
  std::set<std::uint16_t> metrics;
  if (host.head) {
    ports.insert(config.coordinator.port);
    if (config.coordinator.metrics_port != 0) metrics.insert(config.coordinator.metrics_port);
  }
  for (const cluster::NodeConfig& node : config.nodes) {
    if (node.host != host.host) continue;
    for (int i = 0; i < node.replicas; ++i) {
      // The file's loader refused replica ports past 65535.
      ports.insert(static_cast<std::uint16_t>(node.data_port + i));
      if (node.metrics_port != 0) metrics.insert(static_cast<std::uint16_t>(node.metrics_port + i));
    }
  }
  host.ports.assign(ports.begin(), ports.end());
  host.metrics.assign(metrics.begin(), metrics.end());
  for (const cluster::GatewayEndpoint& e : cluster::gateway_endpoints(config)) {
    if (e.host == host.host) host.gateways.push_back(e.port);
  }
}

// --- YAML out -----------------------------------------------------------------------------

/// A string that YAML would read back as something else (a number, a bool, null) or that needs
/// quoting anyway.
bool needs_quotes(const std::string& text) {
  static const std::regex plain("^[A-Za-z/][-A-Za-z0-9_./:]*$");
  static const std::set<std::string> special = {
      "true",  "false", "yes", "no", "on",  "off", "null", "y",    "n",
      "True",  "False", "Yes", "No", "On",  "Off", "Null", "NULL", "TRUE",
      "FALSE", "YES",   "NO",  "ON", "OFF", "Y",   "N"};
  return !std::regex_match(text, plain) || special.count(text) > 0;
}

void emit(YAML::Emitter& out, const json& value) {
  if (value.is_object() && value.empty()) {
    out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
  } else if (value.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [key, item] : value.items()) {
      out << YAML::Key << key << YAML::Value;
      emit(out, item);
    }
    out << YAML::EndMap;
  } else if (value.is_array()) {
    out << YAML::BeginSeq;
    for (const json& item : value) emit(out, item);
    out << YAML::EndSeq;
  } else if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text.find('\n') != std::string::npos) {
      out << YAML::Literal << text;
    } else if (needs_quotes(text)) {
      out << YAML::DoubleQuoted << text;
    } else {
      out << text;
    }
  } else if (value.is_boolean()) {
    out << value.get<bool>();
  } else if (value.is_number_integer()) {
    out << value.get<std::int64_t>();
  } else if (value.is_number()) {
    out << value.get<double>();
  } else {
    out << YAML::Null;
  }
}

std::string to_yaml(const json& object) {
  YAML::Emitter out;
  emit(out, object);
  return std::string(out.c_str()) + "\n";
}

std::string base64(const std::string& bytes) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto n = (static_cast<unsigned char>(bytes[i]) << 16U) |
                   (static_cast<unsigned char>(bytes[i + 1]) << 8U) |
                   static_cast<unsigned char>(bytes[i + 2]);
    for (const unsigned shift : {18U, 12U, 6U, 0U}) out += alphabet[(n >> shift) & 63U];
  }
  if (i < bytes.size()) {
    unsigned n = static_cast<unsigned char>(bytes[i]) << 16U;
    if (i + 1 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 1]) << 8U;
    out += alphabet[(n >> 18U) & 63U];
    out += alphabet[(n >> 12U) & 63U];
    out += i + 1 < bytes.size() ? alphabet[(n >> 6U) & 63U] : '=';
    out += '=';
  }
  return out;
}

/// A Secret's key for the file at `path` under the keys directory ('/' is not allowed).
std::string secret_key(const std::string& path) {
  std::string key = path;
  std::replace(key.begin(), key.end(), '/', '.');
  return key;
}

json labels_of(const cluster::ClusterConfig& config) {
  return {{"app.kubernetes.io/name", "tagflow"}, {"app.kubernetes.io/instance", config.name}};
}

json metadata(const cluster::ClusterConfig& config, const std::string& name) {
  return {{"name", name}, {"labels", labels_of(config)}};
}

json probe(const K8sHost& host, const char* which, int period, int failures) {
  return {{"exec",
           {{"command",
             {"tagflow", "k8s-probe", std::string(kClusterFileDir) + "/" + kClusterFileName,
              "--host", host.host, "--run-dir", kPodRunDir, which}}}},
          {"periodSeconds", period},
          {"timeoutSeconds", 3},
          {"failureThreshold", failures}};
}

json job(const cluster::ClusterConfig& config, const K8sHost& host,
         const std::map<std::string, std::string>& key_files) {
  json ports = json::array();
  for (const std::uint16_t port : host.ports) {
    ports.push_back({{"name", "d" + std::to_string(port)}, {"containerPort", port}});
  }
  for (const std::uint16_t port : host.metrics) {
    ports.push_back({{"name", "m" + std::to_string(port)}, {"containerPort", port}});
  }
  for (const std::uint16_t port : host.gateways) {
    ports.push_back({{"name", "g" + std::to_string(port)}, {"containerPort", port}});
  }
  json requests = {{"cpu", host.cpu}, {"memory", host.memory}};
  json limits = {{"memory", host.memory}};
  if (host.gpu > 0) limits["nvidia.com/gpu"] = std::to_string(host.gpu);
  json mounts =
      json::array({{{"name", "cluster-file"}, {"mountPath", kClusterFileDir}, {"readOnly", true}},
                   {{"name", "run"}, {"mountPath", kPodRunDir}}});
  json volumes =
      json::array({{{"name", "cluster-file"}, {"configMap", {{"name", config.name + "-file"}}}},
                   {{"name", "run"}, {"emptyDir", json::object()}}});
  json args = {"--host", host.host, "--run-dir", kPodRunDir};
  if (!key_files.empty()) {
    mounts.push_back({{"name", "keys"}, {"mountPath", kKeysDir}, {"readOnly", true}});
    json items = json::array();
    for (const auto& [path, bytes] : key_files) {
      items.push_back({{"key", secret_key(path)}, {"path", path}});
    }
    volumes.push_back(
        {{"name", "keys"},
         {"secret",
          {{"secretName", config.name + "-keys"}, {"defaultMode", 0400}, {"items", items}}}});
    args.push_back("--keys");
    args.push_back(kKeysDir);
  }
  json container = {
      {"name", "tagflow"},
      {"image", ""},  // set by the caller
      {"imagePullPolicy", "IfNotPresent"},
      {"command", {"tagflow", "k8s-pod", std::string(kClusterFileDir) + "/" + kClusterFileName}},
      {"args", args},
      {"env",
       json::array({{{"name", kServiceVariable}, {"value", config.name}},
                    {{"name", kNamespaceVariable},
                     {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.namespace"}}}}}}})},
      {"ports", ports},
      {"resources", {{"requests", requests}, {"limits", limits}}},
      {"volumeMounts", mounts}};
  if (!host.metrics.empty()) {
    container["readinessProbe"] = probe(host, "--ready", 5, 3);
    container["livenessProbe"] = probe(host, "--live", 10, 3);
  }
  json annotations = json::object();
  if (!host.metrics.empty()) {
    annotations = {{"prometheus.io/scrape", "true"},
                   {"prometheus.io/port", std::to_string(host.metrics.front())},
                   {"prometheus.io/path", "/metrics"}};
  }
  json labels = labels_of(config);
  labels["tagflow.io/host"] = host.host;
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", metadata(config, host.job)},
          {"spec",
           {{"completionMode", "Indexed"},
            {"completions", host.pods},
            {"parallelism", host.pods},
            {"backoffLimit", 0},
            {"template",
             {{"metadata", {{"labels", labels}, {"annotations", annotations}}},
              {"spec",
               {{"subdomain", config.name},
                {"restartPolicy", "Never"},
                {"terminationGracePeriodSeconds", 10},
                {"containers", json::array({container})},
                {"volumes", volumes}}}}}}}};
}

}  // namespace

std::string k8s_pod_dns_name(const std::string& service, const std::string& job, int index) {
  return job + "-" + std::to_string(index) + "." + service;
}

std::vector<K8sHost> k8s_hosts(const cluster::ClusterConfig& config, const K8sOptions& options,
                               std::vector<std::string>& notes) {
  for (const auto& [flag, value] :
       {std::pair{"--cpu", options.cpu}, {"--memory", options.memory}}) {
    if (!value.empty() && !cluster::is_kubernetes_quantity(value)) {
      throw std::invalid_argument(std::string(flag) + " '" + value +
                                  "' is not a Kubernetes quantity (e.g. 2, 500m, 4Gi)");
    }
    if (cluster::is_zero_kubernetes_quantity(value)) {
      throw std::invalid_argument(std::string(flag) + " '" + value +
                                  "' asks for nothing: each pod needs more than 0");
    }
  }
  if (!is_dns_label(options.name_space, false)) {
    throw std::invalid_argument("--namespace '" + single_line(options.name_space) +
                                "' is not a DNS label: 1 to 63 lowercase letters, digits and '-', "
                                "starting and ending with a letter or a digit");
  }
  const auto blank = [](char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0 ||
           std::iscntrl(static_cast<unsigned char>(c)) != 0;
  };
  if (options.image.empty() || std::any_of(options.image.begin(), options.image.end(), blank)) {
    throw std::invalid_argument("--image '" + single_line(options.image) +
                                "' is not an image reference (empty, or with spaces)");
  }
  if (!is_dns_label(config.name, true)) {
    throw cluster::ConfigError(
        config.file, top_line(config.file, "cluster"), "cluster",
        "'" + config.name +
            "' names the Service and every Job: it must be a DNS label (1 to 63 lower-case "
            "letters, digits and '-', starting with a letter and ending with a letter or a "
            "digit)");
  }
  cluster::refuse_keys_dir(config,
                           "a Kubernetes run's keys are minted into its Secret when the manifests "
                           "are rendered");
  std::map<std::string, int> processes;
  for (const cluster::ProcessPlan& process : cluster::plan_processes(config)) {
    ++processes[process.host];
  }
  std::vector<K8sHost> hosts;
  for (const auto& [name, host] : config.hosts) {
    const std::string key = "hosts." + name;
    if (host.slurm) {
      throw cluster::ConfigError(config.file, host.slurm->line, key + ".slurm",
                                 "a Slurm host cannot run on Kubernetes: give it `kubernetes:` "
                                 "(configs/README.md)");
    }
    K8sHost out;
    out.host = name;
    out.job = config.name + "-" + name;
    out.head = config.coordinator.host == name;
    if (host.kubernetes) {
      out.pods = host.kubernetes->pods;
      out.cpu = host.kubernetes->cpu;
      out.memory = host.kubernetes->memory;
      out.gpu = host.kubernetes->gpu;
    } else if (!options.cpu.empty() && !options.memory.empty()) {
      out.cpu = options.cpu;
      out.memory = options.memory;
      // How `tagflow up` would start this host over ssh means nothing in a pod.
      if (!host.ssh.empty() || !host.workdir.empty()) {
        notes.push_back("host " + name + ": its " +
                        (!host.ssh.empty() && !host.workdir.empty() ? std::string("ssh and workdir")
                         : !host.ssh.empty()                        ? std::string("ssh")
                                                                    : std::string("workdir")) +
                        " are not used here: its pod runs the image's tagflow in the image's "
                        "working directory");
      }
    } else {
      throw cluster::ConfigError(config.file, host.line, key,
                                 "no resources for its pod: give the host `kubernetes: {cpu, "
                                 "memory}` or run `tagflow k8s` with --cpu and --memory");
    }
    if (!is_dns_label(name, false)) {
      throw cluster::ConfigError(config.file, host.line, key,
                                 "'" + name +
                                     "' names a Job and its pods: it must be a DNS label (1 "
                                     "to 63 lower-case letters, digits and '-', starting and "
                                     "ending with a letter or a digit)");
    }
    const std::string last_pod = out.job + "-" + std::to_string(out.pods - 1);
    if (last_pod.size() > kMaxLabel) {
      throw cluster::ConfigError(config.file, host.line, key,
                                 "pod name " + last_pod +
                                     " is longer than 63 characters: "
                                     "shorten the cluster's or the host's name");
    }
    const int work = processes[name];
    const bool coordinator = config.coordinator.host == name;
    // A pod whose launcher has nothing to run fails its Job, and the run's Jobs never complete.
    if (work == 0 && !coordinator) {
      throw cluster::ConfigError(config.file, host.line, key,
                                 "no node group and not the coordinator runs on host " + name +
                                     ": its pods would have nothing to run (remove the host, or "
                                     "put a node group on it)");
    }
    if (out.pods > std::max(work, 1)) {
      throw cluster::ConfigError(config.file, host.kubernetes->line, key + ".kubernetes.pods",
                                 std::to_string(out.pods) + " pods for " +
                                     (work == 0 ? std::string("the coordinator alone")
                                                : std::to_string(work) + " node process(es)") +
                                     ": a pod would have nothing to run");
    }
    collect_ports(config, out);
    hosts.push_back(std::move(out));
  }
  bool any_metrics = false;
  for (const K8sHost& host : hosts) any_metrics = any_metrics || !host.metrics.empty();
  if (options.pod_monitor && !any_metrics) {
    notes.push_back(
        "--pod-monitor: no process of the file has a metrics_port, so no PodMonitor "
        "is written");
  }
  // "::" listens on every address too (IPv4 as well, where the pod's kernel maps it).
  const std::string& bind = config.monitoring.bind;
  if (any_metrics && !cluster::binds_every_address(bind)) {
    notes.push_back("monitoring.bind '" + bind +
                    "' is not every address: the probes work, but Prometheus cannot scrape the "
                    "pods (set monitoring.bind: 0.0.0.0)");
  }
  // A gateway on a loopback address (gateway_bind's default) serves its own pod only.
  const std::vector<cluster::ProcessPlan> processes_of = cluster::plan_processes(config);
  for (const cluster::GatewayEndpoint& e : cluster::gateway_endpoints(config)) {
    const bool loopback = e.bind_address.rfind("127.", 0) == 0 || e.bind_address == "::1";
    const cluster::ProcessPlan* process = cluster::process_of_replica(processes_of, e.replica);
    if (!loopback || process == nullptr) continue;
    const std::string pod = config.name + "-" + e.host + "-" + std::to_string(process->node);
    notes.push_back(e.replica + "'s inference service binds " + e.bind_address +
                    " (gateway_bind; 127.0.0.1 is its default): only programs in pod " + pod +
                    " reach it; with gateway_bind: \"*\" other pods reach it at tcp://" + pod +
                    "." + config.name + ":" + std::to_string(e.port));
  }
  for (const K8sHost& host : hosts) {
    if (host.pods > 1 && !host.metrics.empty()) {
      notes.push_back("host " + host.host + ": each of its " + std::to_string(host.pods) +
                      " pods declares all of the host's metrics ports; only those of the "
                      "processes dealt to a pod answer there");
    }
  }
  return hosts;
}

std::map<std::string, std::string> render_k8s(const cluster::ClusterConfig& config,
                                              const std::vector<K8sHost>& hosts,
                                              const std::string& file_text,
                                              const std::map<std::string, std::string>& key_files,
                                              const K8sOptions& options) {
  std::map<std::string, std::string> files;
  json resources = json::array({"configmap.yaml"});
  files["configmap.yaml"] = to_yaml({{"apiVersion", "v1"},
                                     {"kind", "ConfigMap"},
                                     {"metadata", metadata(config, config.name + "-file")},
                                     {"data", {{kClusterFileName, file_text}}}});
  if (!key_files.empty()) {
    json data = json::object();
    for (const auto& [path, bytes] : key_files) data[secret_key(path)] = base64(bytes);
    files["secret.yaml"] = to_yaml({{"apiVersion", "v1"},
                                    {"kind", "Secret"},
                                    {"metadata", metadata(config, config.name + "-keys")},
                                    {"type", "Opaque"},
                                    {"data", data}});
    resources.push_back("secret.yaml");
  }
  files["service.yaml"] =
      to_yaml({{"apiVersion", "v1"},
               {"kind", "Service"},
               {"metadata", metadata(config, config.name)},
               {"spec",
                {{"clusterIP", "None"},
                 {"publishNotReadyAddresses", true},
                 {"selector", {{"app.kubernetes.io/instance", config.name}}},
                 {"ports", json::array({{{"name", "coordinator"},
                                         {"port", config.coordinator.port},
                                         {"targetPort", config.coordinator.port}}})}}}});
  resources.push_back("service.yaml");
  json monitor_endpoints = json::array();
  std::set<std::uint16_t> monitored;
  for (const K8sHost& host : hosts) {
    json object = job(config, host, key_files);
    object["spec"]["template"]["spec"]["containers"][0]["image"] = options.image;
    const std::string name = "job-" + host.host + ".yaml";
    files[name] = to_yaml(object);
    resources.push_back(name);
    for (const std::uint16_t port : host.metrics) {
      if (monitored.insert(port).second) {
        monitor_endpoints.push_back({{"port", "m" + std::to_string(port)}, {"path", "/metrics"}});
      }
    }
  }
  if (options.pod_monitor && !monitor_endpoints.empty()) {
    files["podmonitor.yaml"] =
        to_yaml({{"apiVersion", "monitoring.coreos.com/v1"},
                 {"kind", "PodMonitor"},
                 {"metadata", metadata(config, config.name)},
                 {"spec",
                  {{"selector", {{"matchLabels", {{"app.kubernetes.io/instance", config.name}}}}},
                   {"podMetricsEndpoints", monitor_endpoints}}}});
    resources.push_back("podmonitor.yaml");
  }
  files["kustomization.yaml"] = to_yaml({{"apiVersion", "kustomize.config.k8s.io/v1beta1"},
                                         {"kind", "Kustomization"},
                                         {"namespace", options.name_space},
                                         {"resources", resources}});
  return files;
}

}  // namespace tagflow::cli
