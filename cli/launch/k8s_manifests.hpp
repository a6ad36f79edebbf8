// K8sManifests: a cluster file as plain Kubernetes objects (`tagflow k8s FILE`,
// docs/kubernetes.md), written as one directory that `kubectl apply -k` takes:
//   kustomization.yaml   the list below, and the namespace
//   configmap.yaml       CLUSTER-file: the cluster file, mounted at kClusterFileDir
//   secret.yaml          CLUSTER-keys: the run's CURVE keys (and actor-mode TLS credentials),
//                        minted when the manifests are rendered, mounted at kKeysDir
//   service.yaml         CLUSTER: headless (clusterIP None), publishing pods before they are
//                        ready, so every pod has its DNS name POD.CLUSTER from the start
//   job-HOST.yaml        CLUSTER-HOST: an Indexed Job of the host's pods (POD = CLUSTER-HOST-i);
//                        each runs `tagflow k8s-pod` for its index
//   podmonitor.yaml      (with --pod-monitor) a prometheus-operator PodMonitor of every pod
//
// Every host of the file is one Job. A host with `kubernetes: {pods, cpu, memory, gpu}` gives
// its pods' count and resources; any other host (an address) is one pod whose resources come
// from --cpu and --memory. Its processes are dealt over its pods in file order
// (cluster/process_plan.hpp), as over a Slurm host's nodes, so ports stay the file's.
//
// k8s_hosts() checks the file before anything is written and throws cluster::ConfigError
// (file, line, key): a name that is not a DNS label, a host without resources (ports outside
// 1..65535 the file's loader refuses), more pods than processes or `security.keys_dir`.
// (`restart:` over several pods is allowed: each pod's launcher restarts its own processes from
// the checkpoint, docs/kubernetes.md.)
// render_k8s() is pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cli {

/// Where the pods see the cluster file and the keys.
inline constexpr const char* kClusterFileDir = "/etc/tagflow/cluster";
inline constexpr const char* kClusterFileName = "cluster.yaml";
inline constexpr const char* kKeysDir = "/etc/tagflow/keys";
inline constexpr const char* kPodRunDir = "/var/run/tagflow";
/// The variable that names the headless Service to every pod (the pods' DNS subdomain).
inline constexpr const char* kServiceVariable = "TAGFLOW_K8S_SERVICE";
/// The variable that gives a pod its namespace (the downward API's metadata.namespace), for the
/// kubectl lines its launcher prints.
inline constexpr const char* kNamespaceVariable = "TAGFLOW_K8S_NAMESPACE";

struct K8sOptions {
  std::string image = "tagflow:latest";
  std::string name_space = "tagflow";
  std::string cpu;     // --cpu: each pod of a host without `kubernetes:`
  std::string memory;  // --memory: the same
  bool pod_monitor = false;
};

/// One host of the file as an Indexed Job.
struct K8sHost {
  std::string host;
  std::string job;  // CLUSTER-HOST
  int pods = 1;
  std::string cpu;
  std::string memory;
  int gpu = 0;
  bool head = false;                    // runs the coordinator (on pod 0)
  std::vector<std::uint16_t> ports;     // every data and coordinator port of its processes
  std::vector<std::uint16_t> metrics;   // every metrics port of its processes
  std::vector<std::uint16_t> gateways;  // every inference-service port of its processes
};

/// The file's hosts as Jobs, checked as described above; `notes` gets warnings for the user.
/// Throws std::invalid_argument for a --cpu or --memory that is no Kubernetes quantity, a
/// --namespace that is no DNS label, and an empty --image or one with spaces.
std::vector<K8sHost> k8s_hosts(const cluster::ClusterConfig& config, const K8sOptions& options,
                               std::vector<std::string>& notes);

/// POD's DNS name inside the namespace: JOB-INDEX.SERVICE.
std::string k8s_pod_dns_name(const std::string& service, const std::string& job, int index);

/// File name -> YAML text of every object above. `file_text` is the cluster file;
/// `key_files` maps each key file's path under the keys directory to its bytes.
std::map<std::string, std::string> render_k8s(const cluster::ClusterConfig& config,
                                              const std::vector<K8sHost>& hosts,
                                              const std::string& file_text,
                                              const std::map<std::string, std::string>& key_files,
                                              const K8sOptions& options);

}  // namespace tagflow::cli
