// Tests of cli/launch/k8s_manifests.hpp: the objects a cluster file becomes, and the files refused
// with their line and key before anything is written; and what a pod's launcher (`tagflow
// k8s-pod`) says when its peers never get an address.
#include "cli/launch/k8s_manifests.hpp"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/run_command.hpp"

namespace tagflow::cli {
namespace {

namespace fs = std::filesystem;

std::string k8s_file(const std::string& act, const std::string& extra = "",
                     const std::string& name = "k8s-test", int data_port = 7610) {
  return "cluster: " + name +
         "\n"
         "hosts:\n"
         "  learn: {kubernetes: {cpu: \"2\", memory: 2Gi, gpu: 1}}\n"
         "  " +
         act +
         "\n"
         "coordinator: {host: learn, port: 7600, metrics_port: 9460}\n"
         "nodes:\n"
         "  sampler: {kind: sampler, replicas: 3, host: act, data_port: " +
         std::to_string(data_port) +
         ", metrics_port: 9470}\n"
         "  replay: {kind: replay, host: learn, data_port: 7620}\n"
         "connections:\n"
         "  - {from: sampler.transitions, to: replay.transitions}\n"
         "stop: {env_steps: 100}\n" +
         extra;
}

class K8sManifests : public ::testing::Test {
 protected:
  /// `text` as a file (lines are read back from it for errors), loaded.
  cluster::ClusterConfig load(const std::string& text) {
    path_ = fs::path(::testing::TempDir()) / ("k8s_" + std::to_string(::getpid()) + ".yaml");
    std::ofstream(path_) << text;
    return cluster::load_cluster_config(path_.string());
  }
  void TearDown() override { fs::remove(path_); }

  /// The error k8s_hosts() throws for `text` ("" when it accepts it).
  std::string refusal(const std::string& text, const K8sOptions& options = {}) {
    try {
      std::vector<std::string> notes;
      (void)k8s_hosts(load(text), options, notes);
      return "";
    } catch (const cluster::ConfigError& e) {
      return e.what();
    }
  }

  fs::path path_;
};

TEST_F(K8sManifests, EveryHostIsAnIndexedJobOfItsPodsBehindOneHeadlessService) {
  const std::string text = k8s_file("act: {kubernetes: {pods: 3, cpu: 500m, memory: 1Gi}}");
  const cluster::ClusterConfig config = load(text);
  std::vector<std::string> notes;
  const std::vector<K8sHost> hosts = k8s_hosts(config, {}, notes);
  ASSERT_EQ(hosts.size(), 2U);
  const auto files =
      render_k8s(config, hosts, text, {{"coordinator.key", "secret\n"}, {"actor/ca.crt", "pem"}},
                 {"reg.example/tagflow:1", "rl", "", "", true});
  for (const char* name : {"kustomization.yaml", "configmap.yaml", "secret.yaml", "service.yaml",
                           "job-act.yaml", "job-learn.yaml", "podmonitor.yaml"}) {
    EXPECT_EQ(files.count(name), 1U) << name;
  }
  const YAML::Node kustomization = YAML::Load(files.at("kustomization.yaml"));
  EXPECT_EQ(kustomization["namespace"].as<std::string>(), "rl");
  EXPECT_EQ(kustomization["resources"].size(), files.size() - 1);

  const YAML::Node service = YAML::Load(files.at("service.yaml"));
  EXPECT_EQ(service["metadata"]["name"].as<std::string>(), "k8s-test");
  EXPECT_EQ(service["spec"]["clusterIP"].as<std::string>(), "None");
  EXPECT_TRUE(service["spec"]["publishNotReadyAddresses"].as<bool>());

  // The cluster file travels unchanged; the keys are base64, and each Secret item goes back to
  // its path under the keys directory.
  EXPECT_EQ(YAML::Load(files.at("configmap.yaml"))["data"]["cluster.yaml"].as<std::string>(), text);
  const YAML::Node secret = YAML::Load(files.at("secret.yaml"));
  EXPECT_EQ(secret["data"]["coordinator.key"].as<std::string>(), "c2VjcmV0Cg==");
  EXPECT_EQ(secret["data"]["actor.ca.crt"].as<std::string>(), "cGVt");

  const YAML::Node act = YAML::Load(files.at("job-act.yaml"));
  EXPECT_EQ(act["metadata"]["name"].as<std::string>(), "k8s-test-act");
  EXPECT_EQ(act["spec"]["completionMode"].as<std::string>(), "Indexed");
  EXPECT_EQ(act["spec"]["completions"].as<int>(), 3);
  EXPECT_EQ(act["spec"]["backoffLimit"].as<int>(), 0);
  const YAML::Node pod = act["spec"]["template"]["spec"];
  EXPECT_EQ(pod["subdomain"].as<std::string>(), "k8s-test");
  const YAML::Node container = pod["containers"][0];
  EXPECT_EQ(container["image"].as<std::string>(), "reg.example/tagflow:1");
  EXPECT_EQ(container["command"][1].as<std::string>(), "k8s-pod");
  // The Service's name as written, the namespace from the downward API (where the pod runs).
  EXPECT_EQ(container["env"][0]["name"].as<std::string>(), "TAGFLOW_K8S_SERVICE");
  EXPECT_EQ(container["env"][0]["value"].as<std::string>(), "k8s-test");
  EXPECT_EQ(container["env"][1]["name"].as<std::string>(), "TAGFLOW_K8S_NAMESPACE");
  EXPECT_EQ(container["env"][1]["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>(),
            "metadata.namespace");
  EXPECT_EQ(container["resources"]["requests"]["cpu"].as<std::string>(), "500m");
  EXPECT_EQ(container["resources"]["limits"]["memory"].as<std::string>(), "1Gi");
  EXPECT_FALSE(container["resources"]["limits"]["nvidia.com/gpu"]);
  // Every port of the host's processes: 3 sampler data ports, 3 metrics ports.
  EXPECT_EQ(container["ports"].size(), 6U);
  EXPECT_EQ(container["readinessProbe"]["exec"]["command"][1].as<std::string>(), "k8s-probe");
  EXPECT_EQ(pod["volumes"][2]["secret"]["items"][0]["path"].as<std::string>(), "actor/ca.crt");
  // Strings stay strings: an annotation's value is never read back as a number.
  EXPECT_EQ(
      act["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"].as<std::string>(),
      "9470");
  EXPECT_NE(files.at("job-act.yaml").find("prometheus.io/port: \"9470\""), std::string::npos);

  const YAML::Node learn = YAML::Load(files.at("job-learn.yaml"));
  EXPECT_EQ(
      learn["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]
          .as<std::string>(),
      "1");
  // The coordinator's metrics port makes the head host probed too.
  EXPECT_TRUE(learn["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]);
  // Three pods share the metrics ports of the host, and the metrics bind to 127.0.0.1: both said.
  EXPECT_EQ(notes.size(), 2U);
}

// A pod whose peers never get an address (not scheduled, a Service missing) gives up after
// --wait seconds naming them, with the kubectl line that lists the run's pods in its namespace.
TEST_F(K8sManifests, APodWhosePeersHaveNoAddressGivesUpNamingThemAndTheirNamespace) {
  (void)load(k8s_file("act: {kubernetes: {cpu: \"1\", memory: 1Gi, pods: 2}}", "security: none\n",
                      "k8s-wait"));
  const fs::path run = fs::path(::testing::TempDir()) / ("k8s_wait_" + std::to_string(::getpid()));
  const testing::CommandResult result = testing::run_command(
      "TAGFLOW_K8S_NAMESPACE=rl JOB_COMPLETION_INDEX=1 " + testing::tagflow_binary() + " k8s-pod " +
      path_.string() + " --host act --run-dir " + run.string() + " --wait 1 2>&1");
  fs::remove_all(run);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("these pods have no address after 1 s: "), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("k8s-wait-act-1.k8s-wait"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("(kubectl -n rl get pods -l app.kubernetes.io/instance=k8s-wait)"),
            std::string::npos)
      << result.output;
}

TEST_F(K8sManifests, PodDnsNamesAreJobIndexAndService) {
  EXPECT_EQ(k8s_pod_dns_name("tf", "tf-act", 2), "tf-act-2.tf");
}

TEST_F(K8sManifests, AnAddressHostIsOnePodWithTheCommandLinesResources) {
  const std::string text = k8s_file("act: {address: 10.0.0.2}");
  EXPECT_NE(refusal(text).find(":4: hosts.act: no resources for its pod"), std::string::npos)
      << refusal(text);
  K8sOptions options;
  options.cpu = "1";
  options.memory = "512Mi";
  std::vector<std::string> notes;
  const auto hosts = k8s_hosts(load(text), options, notes);
  ASSERT_EQ(hosts.size(), 2U);
  EXPECT_EQ(hosts[0].host, "act");
  EXPECT_EQ(hosts[0].pods, 1);
  EXPECT_EQ(hosts[0].memory, "512Mi");
  options.memory = "lots";
  try {
    (void)k8s_hosts(load(text), options, notes);
    ADD_FAILURE() << "--memory lots was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "--memory 'lots' is not a Kubernetes quantity (e.g. 2, 500m, 4Gi)");
  }
  // A quantity of 0 asks for nothing: a pod that could not run.
  for (const std::string zero : {"0", "0.0Gi", "+0e3", ".0m"}) {
    options.memory = zero;
    try {
      (void)k8s_hosts(load(text), options, notes);
      ADD_FAILURE() << "--memory " << zero << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()),
                "--memory '" + zero + "' asks for nothing: each pod needs more than 0");
    }
  }
  options.memory = "0.5Gi";
  EXPECT_EQ(k8s_hosts(load(text), options, notes)[0].memory, "0.5Gi");
  // How `tagflow up` starts it over ssh is not used in a pod: said, not dropped silently.
  notes.clear();
  (void)k8s_hosts(load(k8s_file("act: {address: 10.0.0.2, ssh: u@m, workdir: /srv}")), options,
                  notes);
  ASSERT_FALSE(notes.empty());
  EXPECT_EQ(notes.front(),
            "host act: its ssh and workdir are not used here: its pod runs the image's tagflow in "
            "the image's working directory");
}

TEST_F(K8sManifests, FilesThatCannotBePlacedAreRefusedWithLineAndKey) {
  const std::string pods = "act: {kubernetes: {cpu: \"1\", memory: 1Gi}}";
  EXPECT_NE(refusal(k8s_file(pods, "", "K8s_Test")).find(":1: cluster: 'K8s_Test'"),
            std::string::npos);
  EXPECT_NE(refusal(k8s_file(pods, "", "9lives")).find(":1: cluster:"), std::string::npos);
  std::string upper = k8s_file(pods);
  for (std::size_t at = upper.find("act"); at != std::string::npos; at = upper.find("act", at)) {
    upper.replace(at, 3, "Act");
  }
  EXPECT_NE(refusal(upper).find(":4: hosts.Act: 'Act' names a Job"), std::string::npos)
      << refusal(upper);
  // Replicas' ports run past 65535: 65534, 65535, 65536 (refused as the file is loaded).
  EXPECT_NE(refusal(k8s_file(pods, "", "k8s-test", 65534))
                .find(":7: nodes.sampler.data_port: replica ports run past 65535 (3 replicas "
                      "from 65534)"),
            std::string::npos)
      << refusal(k8s_file(pods, "", "k8s-test", 65534));
  EXPECT_NE(refusal(k8s_file("act: {kubernetes: {pods: 4, cpu: \"1\", memory: 1Gi}}"))
                .find("hosts.act.kubernetes.pods: 4 pods for 3 node process(es)"),
            std::string::npos);
  // A host nothing runs on: its pod's launcher would refuse to start and fail its Job.
  std::string idle = k8s_file(pods);
  idle.insert(idle.find("coordinator:"), "  idle: {kubernetes: {cpu: \"1\", memory: 1Gi}}\n");
  EXPECT_NE(refusal(idle).find(":5: hosts.idle: no node group and not the coordinator runs on "
                               "host idle: its pods would have nothing to run"),
            std::string::npos)
      << refusal(idle);
  std::string alone = k8s_file(pods);
  alone.replace(alone.find("gpu: 1}"), 7, "gpu: 1, pods: 2}");
  alone.replace(alone.find("replay, host: learn"), 19, "replay, host: act");
  EXPECT_NE(refusal(alone).find("hosts.learn.kubernetes.pods: 2 pods for the coordinator alone"),
            std::string::npos)
      << refusal(alone);
  EXPECT_EQ(refusal(k8s_file(pods, "restart: {max: 2}\n")), "");  // restarts work across pods
  EXPECT_NE(refusal(k8s_file("act: {slurm: {nodes: 1}}")).find("hosts.act.slurm"),
            std::string::npos);
  // Written as a block, the refusal names the `slurm:` line (5), not the host's (4).
  const std::string block = k8s_file("act:\n    slurm: {nodes: 1}");
  EXPECT_NE(refusal(block).find(":5: hosts.act.slurm: a Slurm host cannot run on Kubernetes"),
            std::string::npos)
      << refusal(block);
  EXPECT_EQ(refusal(k8s_file(pods)), "");
  // The refusal of key files points at keys_dir's own line, not at security's.
  const std::string keyed = k8s_file(pods, "security:\n  curve: true\n  keys_dir: k\n");
  const auto keys_line =
      1 + std::count(keyed.begin(),
                     keyed.begin() + static_cast<std::ptrdiff_t>(keyed.find("keys_dir")), '\n');
  EXPECT_NE(refusal(keyed).find(":" + std::to_string(keys_line) +
                                ": security.keys_dir: a "
                                "Kubernetes run's keys are minted into its Secret"),
            std::string::npos)
      << refusal(keyed);
  // Without keys_dir, the file is not sent to `tagflow keys generate` (whose keys_dir would then
  // be refused): its keys are minted.
  EXPECT_NE(refusal(k8s_file(pods, "security: {curve: true}\n"))
                .find("security.curve: a file with Slurm or Kubernetes hosts takes no key files: "
                      "tagflow slurm and tagflow k8s mint its keys"),
            std::string::npos)
      << refusal(k8s_file(pods, "security: {curve: true}\n"));
  // Merged in from an x- map, keys_dir is named at the line where it is written.
  const std::string anchored =
      k8s_file(pods, "x-keys: &keys {curve: true, keys_dir: k}\nsecurity: {<<: *keys}\n");
  const auto merged_line =
      1 + std::count(anchored.begin(),
                     anchored.begin() + static_cast<std::ptrdiff_t>(anchored.find("keys_dir")),
                     '\n');
  EXPECT_NE(refusal(anchored).find(":" + std::to_string(merged_line) + ": security.keys_dir: a "),
            std::string::npos)
      << refusal(anchored);
}

TEST_F(K8sManifests, KubernetesHostsNeedResourcesAsKubernetesQuantities) {
  auto error = [&](const std::string& act) {
    try {
      (void)load(k8s_file(act));
      return std::string();
    } catch (const cluster::ConfigError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_NE(error("act: {kubernetes: {memory: 1Gi}}").find("hosts.act.kubernetes.cpu: is needed"),
            std::string::npos);
  // A missing key of a map written over lines is named at the key that names the map (line 5),
  // not at the map's first key.
  EXPECT_NE(error("act:\n    kubernetes:\n      pods: 1\n      memory: 1Gi")
                .find(":5: hosts.act.kubernetes.cpu: is needed"),
            std::string::npos)
      << error("act:\n    kubernetes:\n      pods: 1\n      memory: 1Gi");
  EXPECT_NE(error("act: {kubernetes: {cpu: 1, memory: lots}}")
                .find("hosts.act.kubernetes.memory: 'lots' is not a Kubernetes quantity"),
            std::string::npos);
  EXPECT_NE(error("act: {kubernetes: {cpu: \"0\", memory: 1Gi}}")
                .find("hosts.act.kubernetes.cpu: '0' asks for nothing: each pod needs more than 0"),
            std::string::npos)
      << error("act: {kubernetes: {cpu: \"0\", memory: 1Gi}}");
  EXPECT_NE(error("act: {kubernetes: {cpu: 1, memory: 1Gi, replicas: 2}}")
                .find("hosts.act.kubernetes.replicas"),
            std::string::npos);
  EXPECT_NE(error("act: {address: 10.0.0.1, kubernetes: {cpu: 1, memory: 1Gi}}")
                .find("hosts.act.address: a Kubernetes host has none"),
            std::string::npos);
  EXPECT_EQ(error("act: {kubernetes: {cpu: 1.5, memory: 1e9}}"), "");
}

// The inference service's ports are declared on the container ("g" + port), and a gateway left on
// its loopback default is named in a note that says how other pods would reach it; the file has no
// metrics port, which --pod-monitor's note names.
TEST_F(K8sManifests, AGatewayPortIsDeclaredAndNotesNameALoopbackGatewayAndAnEmptyPodMonitor) {
  const std::string text =
      "cluster: serve\nhosts:\n  all: {kubernetes: {cpu: \"1\", memory: 1Gi}}\n"
      "coordinator: {host: all, port: 7800}\n"
      "policies:\n  car: {hidden: \"16\", per_agent: true}\n"
      "nodes:\n"
      "  junction: {kind: multi_agent, host: all, data_port: 7810,"
      " params: {env: TrafficJunction4-v1}}\n"
      "  inference: {kind: inference, host: all, data_port: 7820, replicas: 2,"
      " params: {policies: all, gateway_port: 7830}}\n"
      "connections:\n"
      "  - {from: junction.observations, to: inference.observations}\n"
      "  - {from: inference.actions, to: junction.actions, after: 0}\n"
      "stop: {env_steps: 100}\n";
  const cluster::ClusterConfig config = load(text);
  std::vector<std::string> notes;
  const std::vector<K8sHost> hosts = k8s_hosts(config, {}, notes);
  ASSERT_EQ(hosts.size(), 1U);
  EXPECT_EQ(hosts[0].gateways, (std::vector<std::uint16_t>{7830, 7831}));
  const auto files = render_k8s(config, hosts, text, {}, {"tagflow:1", "", "", "", false});
  const YAML::Node ports =
      YAML::Load(files.at("job-all.yaml"))["spec"]["template"]["spec"]["containers"][0]["ports"];
  std::vector<std::string> names;
  for (const auto& port : ports) names.push_back(port["name"].as<std::string>());
  EXPECT_NE(std::find(names.begin(), names.end(), "g7831"), names.end());
  std::string said;
  for (const std::string& note : notes) said += note + "\n";
  EXPECT_NE(said.find("inference-1's inference service binds 127.0.0.1 (gateway_bind; 127.0.0.1 "
                      "is its default): only programs in pod serve-all-0 reach it; with "
                      "gateway_bind: \"*\" other pods reach it at tcp://serve-all-0.serve:7831"),
            std::string::npos)
      << said;
  // No process has a metrics port: --pod-monitor has nothing to list, and says so.
  K8sOptions monitor;
  monitor.pod_monitor = true;
  notes.clear();
  (void)k8s_hosts(config, monitor, notes);
  said.clear();
  for (const std::string& note : notes) said += note + "\n";
  EXPECT_NE(said.find("--pod-monitor: no process of the file has a metrics_port"),
            std::string::npos)
      << said;
  // Bound to every address: no note.
  std::string open = text;
  open.replace(open.find("gateway_port: 7830"), 18, "gateway_port: 7830, gateway_bind: \"*\"");
  notes.clear();
  (void)k8s_hosts(load(open), {}, notes);
  for (const std::string& note : notes) {
    EXPECT_EQ(note.find("inference service binds"), std::string::npos) << note;
  }
}

}  // namespace
}  // namespace tagflow::cli
