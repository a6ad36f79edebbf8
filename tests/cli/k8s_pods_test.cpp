// configs/kubernetes.yaml as the pods `tagflow k8s` describes, run without Kubernetes: no API
// server or kubelet can run here, so the test plays the kubelet's part for every pod of every
// Job of the rendered manifests, as closely as this machine allows:
//   - the container's command, args and env exactly as written (and nothing else of the test's
//     environment), plus what the kubelet adds: JOB_COMPLETION_INDEX, HOSTNAME, and PATH (the
//     image's /usr/local/bin is this build's bin directory);
//   - its own network namespace (the pod's address) and UTS namespace (hostname JOB-INDEX);
//   - the pods' DNS names (JOB-INDEX.SERVICE) in the namespace's hosts file
//     (/etc/netns/NS/hosts, which `ip netns exec` mounts over /etc/hosts);
//   - in its own mount namespace, the ConfigMap's data and the Secret's items (decoded, at their
//     item paths, with the volume's defaultMode) bind-mounted at their mountPath, and an empty
//     directory for each emptyDir.
// It checks that the run ends with the one-host digest, that the readiness probe as written
// passes while the run goes on, and that a pod killed mid-run (every process in its network
// namespace) is named by the head pod, with no process left. Root only (namespaces and mounts):
// skipped with the reason elsewhere.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cli/launch/remote_hosts.hpp"
#include "tests/support/launched_processes.hpp"
#include "tests/support/namespace_pair.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/shipped_config.hpp"

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using testing::alive;
using testing::eventually;
using testing::NamespacePair;
using testing::read_text_file;
using testing::replace_once;
using testing::sh;
using testing::summary_digest;

std::string decode_base64(const std::string& text) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (const char c : text) {
    const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const std::size_t value = alphabet.find(c);
    if (value == std::string::npos) continue;  // '=' and line breaks
    buffer = (buffer << 6U) | static_cast<unsigned>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> static_cast<unsigned>(bits)) & 0xFFU);
    }
  }
  return out;
}

/// One pod of the rendered manifests, as the kubelet would start it.
struct Pod {
  std::string name;  // its hostname, JOB-INDEX
  std::string job;
  int index = 0;
  std::vector<std::string> command;  // command, then args
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::pair<std::string, fs::path>> mounts;  // mountPath, the directory bound there
  std::vector<std::string> readiness;                    // the readiness probe's exec command
};

/// The rendered directory: every Job's pods, with their volumes written under `volumes`.
struct Manifests {
  std::string service;
  std::string name_space;  // the kustomization's
  std::vector<Pod> pods;
};

/// Reads every object `kustomization.yaml` lists; writes the ConfigMap and Secret volumes.
Manifests read_manifests(const fs::path& dir, const fs::path& volumes) {
  std::map<std::string, YAML::Node> config_maps;
  std::map<std::string, YAML::Node> secrets;
  std::vector<YAML::Node> jobs;
  Manifests out;
  const YAML::Node kustomization = YAML::LoadFile((dir / "kustomization.yaml").string());
  out.name_space = kustomization["namespace"].as<std::string>();
  for (const auto& file : kustomization["resources"]) {
    for (const YAML::Node& object :
         YAML::LoadAllFromFile((dir / file.as<std::string>()).string())) {
      const std::string kind = object["kind"].as<std::string>();
      const std::string name = object["metadata"]["name"].as<std::string>();
      if (kind == "ConfigMap") config_maps[name] = object;
      if (kind == "Secret") secrets[name] = object;
      if (kind == "Job") jobs.push_back(object);
      if (kind == "Service") out.service = name;
    }
  }
  for (const YAML::Node& job : jobs) {
    const YAML::Node spec = job["spec"]["template"]["spec"];
    EXPECT_EQ(job["spec"]["completionMode"].as<std::string>(), "Indexed");
    EXPECT_EQ(spec["subdomain"].as<std::string>(), out.service);
    const YAML::Node container = spec["containers"][0];
    for (int index = 0; index < job["spec"]["completions"].as<int>(); ++index) {
      Pod pod;
      pod.job = job["metadata"]["name"].as<std::string>();
      pod.index = index;
      pod.name = pod.job + "-" + std::to_string(index);
      for (const auto& word : container["command"]) pod.command.push_back(word.as<std::string>());
      for (const auto& word : container["args"]) pod.command.push_back(word.as<std::string>());
      for (const auto& variable : container["env"]) {
        // As the kubelet does: a value, or the pod's namespace from the downward API.
        const std::string name = variable["name"].as<std::string>();
        if (variable["value"]) {
          pod.env.emplace_back(name, variable["value"].as<std::string>());
        } else {
          EXPECT_EQ(variable["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>(),
                    "metadata.namespace");
          pod.env.emplace_back(name, out.name_space);
        }
      }
      pod.env.emplace_back("JOB_COMPLETION_INDEX", std::to_string(index));
      pod.env.emplace_back("HOSTNAME", pod.name);
      if (container["readinessProbe"]) {
        for (const auto& word : container["readinessProbe"]["exec"]["command"]) {
          pod.readiness.push_back(word.as<std::string>());
        }
      }
      for (const auto& volume : spec["volumes"]) {
        const std::string name = volume["name"].as<std::string>();
        const fs::path root = volumes / pod.name / name;
        fs::create_directories(root);
        if (volume["configMap"]) {
          const YAML::Node& map = config_maps.at(volume["configMap"]["name"].as<std::string>());
          for (const auto& item : map["data"]) {
            std::ofstream(root / item.first.as<std::string>()) << item.second.as<std::string>();
          }
        } else if (volume["secret"]) {
          const YAML::Node& secret = secrets.at(volume["secret"]["secretName"].as<std::string>());
          const auto mode = static_cast<fs::perms>(volume["secret"]["defaultMode"].as<int>());
          for (const auto& item : volume["secret"]["items"]) {
            const fs::path path = root / item["path"].as<std::string>();
            fs::create_directories(path.parent_path());
            std::ofstream(path) << decode_base64(
                secret["data"][item["key"].as<std::string>()].as<std::string>());
            fs::permissions(path, mode, fs::perm_options::replace);
          }
        }  // emptyDir: the empty directory
        for (const auto& mount : container["volumeMounts"]) {
          if (mount["name"].as<std::string>() == name) {
            pod.mounts.emplace_back(mount["mountPath"].as<std::string>(), root);
          }
        }
      }
      out.pods.push_back(std::move(pod));
    }
  }
  return out;
}

/// The K8sPods tests' shared files in the temp directory: `lock` and `list` (SetUp).
fs::path made_mount_points(const std::string& what) {
  return fs::temp_directory_path() / ("tagflow-k8s-mount-points." + what);
}

class K8sPods : public ::testing::Test {
 public:
  void SetUp() override {
    if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference need tagflow-torch";
    if (sh("command -v unshare").exit_code != 0) GTEST_SKIP() << "no unshare (util-linux)";
    const std::string why = namespaces_.create();
    if (!why.empty()) GTEST_SKIP() << why;
    // The mount points (/etc/tagflow/..., made when missing) are shared with any K8sPods test
    // running at the same time: each holds this lock shared while it runs and lists the ones it
    // made in made_mount_points("list"); a test that can take the lock exclusively at its end (no
    // other one runs) removes every listed one. Removing a directory that another test's pod has
    // mounted over would unmount it there (Linux detaches a mount whose point is removed in another
    // mount namespace), and that pod's restarted process would find no cluster file.
    mounts_lock_ = ::open(made_mount_points("lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    ASSERT_GE(mounts_lock_, 0) << "cannot open the mount points' lock file";
    ASSERT_EQ(::flock(mounts_lock_, LOCK_SH), 0);
    dir_ = fs::path(::testing::TempDir()) /
           ("tagflow_k8s_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    for (const pid_t pid : launched_) {
      if (alive(pid)) ::kill(pid, SIGKILL);
      (void)testing::wait_exit(pid, 5s);
    }
    for (const std::string& ns : {namespaces_.ns_a, namespaces_.ns_b}) {
      fs::remove_all(fs::path("/etc/netns") / ns);
    }
    if (mounts_lock_ >= 0) {
      if (::flock(mounts_lock_, LOCK_EX | LOCK_NB) == 0) {  // no other K8sPods test runs
        std::vector<std::string> made;
        std::ifstream list(made_mount_points("list"));
        for (std::string line; std::getline(list, line);) {
          if (!line.empty()) made.push_back(line);
        }
        // Deepest first, each only if still empty.
        std::sort(made.begin(), made.end(),
                  [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
        for (const std::string& point : made) {
          std::error_code ignored;
          fs::remove(point, ignored);
        }
        std::ofstream(made_mount_points("list"), std::ios::trunc);
      }
      ::close(mounts_lock_);  // drops the lock
    }
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  /// configs/kubernetes.yaml stopping after `env_steps` (or after 120 s when 0), learning from
  /// 200 items on, with `extra` appended, as DIR/kubernetes.yaml; its path.
  std::string write(long env_steps, const std::string& extra = "") {
    std::string text = read_text_file(fs::path(TAGFLOW_SOURCE_DIR) / "configs" / "kubernetes.yaml");
    const std::string file = "configs/kubernetes.yaml";
    replace_once(text, "  target_return: 475\n  seconds: 900\n",
                 env_steps > 0 ? "  env_steps: " + std::to_string(env_steps) + "\n"
                               : std::string("  seconds: 120\n"),
                 file);
    replace_once(text, "min_size: 1000", "min_size: 200", file);
    replace_once(text, "join_timeout: 300s", "join_timeout: 60s", file);
    std::ofstream(dir_ / "kubernetes.yaml") << text << extra;
    return path("kubernetes.yaml");
  }

  /// `tagflow k8s FILE -o DIR/manifests`, then the pods it describes (two: one per host).
  Manifests render(const std::string& file) {
    const testing::CommandResult rendered =
        sh(testing::tagflow_binary() + " k8s " + file + " -o " + path("manifests"));
    EXPECT_EQ(rendered.exit_code, 0) << rendered.output;
    Manifests manifests = read_manifests(dir_ / "manifests", dir_ / "volumes");
    EXPECT_EQ(manifests.pods.size(), 2U);
    return manifests;
  }

  /// The namespace pod `i` runs in.
  const std::string& ns_of(std::size_t i) const {
    return i == 0 ? namespaces_.ns_a : namespaces_.ns_b;
  }

  /// Every pod's DNS names in both namespaces' hosts files.
  void write_hosts(const Manifests& manifests) {
    std::string hosts = "127.0.0.1 localhost\n";
    for (std::size_t i = 0; i < manifests.pods.size(); ++i) {
      const std::string& name = manifests.pods[i].name;
      hosts += (i == 0 ? namespaces_.address_a : namespaces_.address_b) + " " + name + "." +
               manifests.service + " " + name + "\n";
    }
    for (std::size_t i = 0; i < manifests.pods.size(); ++i) {
      fs::create_directories(fs::path("/etc/netns") / ns_of(i));
      std::ofstream(fs::path("/etc/netns") / ns_of(i) / "hosts") << hosts;
    }
  }

  /// `words` run in pod `pod`'s namespaces with its mounts and only its environment.
  std::string in_pod(const Pod& pod, std::size_t i, const std::vector<std::string>& words) {
    std::string script = "set -e; hostname " + shell_quote(pod.name) + "; ";
    for (const auto& [mount_path, source] : pod.mounts) {
      // The mount point must exist: made once, removed by the last K8sPods test to end.
      fs::path point = mount_path;
      std::vector<fs::path> created;
      for (fs::path p = point; !p.empty() && p != p.root_path() && !fs::exists(p);
           p = p.parent_path()) {
        created.push_back(p);
      }
      fs::create_directories(point);
      std::ofstream list(made_mount_points("list"), std::ios::app);
      for (const fs::path& made : created) list << made.string() << "\n";
      script +=
          "mount --bind " + shell_quote(source.string()) + " " + shell_quote(mount_path) + "; ";
    }
    script += "exec env -i";
    for (const auto& [name, value] : pod.env) script += " " + shell_quote(name + "=" + value);
    script +=
        " " + shell_quote("PATH=" + fs::path(testing::tagflow_binary()).parent_path().string() +
                          ":/usr/local/bin:/usr/bin:/bin");
    for (const std::string& word : words) script += " " + shell_quote(word);
    return "ip netns exec " + ns_of(i) + " unshare --uts --mount --propagation private sh -c " +
           shell_quote(script);
  }

  /// Starts every pod; their pids (output in DIR/POD.log).
  std::vector<pid_t> start(const Manifests& manifests) {
    write_hosts(manifests);
    std::vector<pid_t> pids;
    for (std::size_t i = 0; i < manifests.pods.size(); ++i) {
      const Pod& pod = manifests.pods[i];
      const fs::path log = dir_ / (pod.name + ".log");
      pids.push_back(
          testing::spawn_with_output({"/bin/sh", "-c", in_pod(pod, i, pod.command)}, log, log));
      launched_.push_back(pids.back());
    }
    return pids;
  }

  /// The index of the pod with the coordinator (host learn).
  static std::size_t head_of(const Manifests& manifests) {
    return manifests.pods[0].job.find("-learn") != std::string::npos ? 0 : 1;
  }

  /// Every pod ended with exit status 0.
  void expect_success(const Manifests& manifests, const std::vector<pid_t>& pods) {
    for (std::size_t i = 0; i < pods.size(); ++i) {
      EXPECT_EQ(testing::wait_exit(pods[i], 240s), 0)
          << manifests.pods[i].name << ":\n"
          << read_text_file(dir_ / (manifests.pods[i].name + ".log"));
    }
  }

  /// The digest of `file` run in one process.
  std::string single_digest(const std::string& file) {
    const testing::CommandResult single =
        sh(testing::tagflow_binary() + " up " + file + " --placement single --summary " +
           path("single.json"));
    EXPECT_EQ(single.exit_code, 0) << single.output;
    const std::string digest = summary_digest(dir_ / "single.json");
    EXPECT_EQ(digest.size(), 16U) << digest;
    return digest;
  }

  /// The pod's emptyDir `run` as the test sees it.
  fs::path run_dir(const Pod& pod) const { return dir_ / "volumes" / pod.name / "run"; }

  NamespacePair namespaces_{"tfk8"};
  fs::path dir_;
  std::vector<pid_t> launched_;
  int mounts_lock_ = -1;  // shared while the test runs (SetUp)
};

TEST_F(K8sPods, TheRenderedPodsEndWithTheSingleProcessDigest) {
  const std::string file = write(1200);
  const Manifests manifests = render(file);
  ASSERT_EQ(manifests.pods.size(), 2U);
  const Pod& head = manifests.pods[head_of(manifests)];
  const std::vector<pid_t> pods = start(manifests);
  expect_success(manifests, pods);
  const std::string digest = single_digest(file);
  EXPECT_EQ(summary_digest(run_dir(head) / "summary.json"), digest);
  const std::string log = read_text_file(dir_ / (head.name + ".log"));
  EXPECT_NE(log.find("digest " + digest), std::string::npos) << log;
  // The other pod writes no summary, and does not say so as if one had been asked of it.
  for (const Pod& pod : manifests.pods) {
    if (pod.name == head.name) continue;
    const std::string other = read_text_file(dir_ / (pod.name + ".log"));
    EXPECT_EQ(other.find("--summary"), std::string::npos) << other;
    EXPECT_FALSE(fs::exists(run_dir(pod) / "summary.json"));
  }
  // Each pod's processes bound its own address, found by the pods' DNS names.
  const std::string started = read_text_file(run_dir(head) / "started");
  EXPECT_NE(started.find(namespaces_.address_a), std::string::npos) << started;
  EXPECT_NE(started.find(namespaces_.address_b), std::string::npos) << started;
}

TEST_F(K8sPods, AKilledPodIsNamedByTheHeadAndNoProcessIsLeft) {
  const Manifests manifests = render(write(0));
  ASSERT_EQ(manifests.pods.size(), 2U);
  const std::size_t head_index = head_of(manifests);
  const std::size_t victim_index = 1 - head_index;
  const Pod& head = manifests.pods[head_index];
  const Pod& victim = manifests.pods[victim_index];
  const std::vector<pid_t> pods = start(manifests);
  // Both pods' processes run: the head's coordinator, replay and learner; the samplers and
  // inference.
  const bool running = eventually(
      [&] {
        return testing::recorded_pids(run_dir(head) / head.name).size() == 3 &&
               testing::recorded_pids(run_dir(victim) / victim.name).size() == 3;
      },
      90s);
  ASSERT_TRUE(running) << read_text_file(dir_ / (head.name + ".log"))
                       << read_text_file(dir_ / (victim.name + ".log"));
  // The readiness probe, exactly as written, passes in the head's pod once its processes are
  // ready.
  ASSERT_FALSE(head.readiness.empty());
  const bool ready =
      eventually([&] { return sh(in_pod(head, head_index, head.readiness)).exit_code == 0; }, 60s);
  EXPECT_TRUE(ready) << sh(in_pod(head, head_index, head.readiness)).output;

  // The pod dies: every process in its network namespace, at once.
  const std::string& victim_ns = ns_of(victim_index);
  const auto killed = std::chrono::steady_clock::now();
  (void)sh("ip netns pids " + victim_ns + " | xargs -r kill -9");
  const int head_exit = testing::wait_exit(pods[head_index], 30s);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  RecordProperty("killed_pod_to_head_exit_seconds", std::to_string(seconds));
  std::cerr << "a killed pod to the head's exit: " << seconds << " s\n";
  const std::string log = read_text_file(dir_ / (head.name + ".log"));
  EXPECT_NE(head_exit, 0) << log;
  EXPECT_NE(log.find(victim.name), std::string::npos) << log;
  EXPECT_LT(seconds, 10.0) << log;
  EXPECT_TRUE(eventually(
      [&] {
        return sh("ip netns pids " + namespaces_.ns_a + "; ip netns pids " + namespaces_.ns_b)
            .output.empty();
      },
      10s))
      << "left: "
      << sh("ip netns pids " + namespaces_.ns_a + "; ip netns pids " + namespaces_.ns_b).output;
}

// With checkpoint: and restart:, each pod's launcher restarts its own processes; the head's pod
// picks the checkpoint and the other pod's processes load their own parts from their own run
// directory: the run ends with the one-process digest.
TEST_F(K8sPods, WithCheckpointsAProcessKilledInOnePodRestartsBothAndKeepsTheDigest) {
  const std::string file = write(6000, "checkpoint: {every: 50ms, keep: 2}\nrestart: {max: 2}\n");
  const Manifests manifests = render(file);
  ASSERT_EQ(manifests.pods.size(), 2U);
  const Pod& head = manifests.pods[head_of(manifests)];
  const Pod& other = manifests.pods[1 - head_of(manifests)];
  const std::vector<pid_t> pods = start(manifests);
  const bool checkpointed = eventually(
      [&] {
        std::error_code ec;
        for (const auto& entry :
             fs::directory_iterator(run_dir(head) / head.name / "checkpoints", ec)) {
          if (fs::exists(entry.path() / "manifest")) return true;
        }
        return false;
      },
      90s);
  ASSERT_TRUE(checkpointed) << read_text_file(dir_ / (head.name + ".log"));
  const auto pids = testing::recorded_pids(run_dir(other) / other.name);
  ASSERT_EQ(pids.count("sampler-0"), 1U);
  ASSERT_EQ(::kill(pids.at("sampler-0"), SIGKILL), 0);
  expect_success(manifests, pods);
  EXPECT_EQ(summary_digest(run_dir(head) / "summary.json"), single_digest(file));
  const std::string log = read_text_file(dir_ / (other.name + ".log"));
  EXPECT_NE(log.find("restart 1 of 2"), std::string::npos) << log;
}

// Options the manifests would carry into `kubectl apply` are checked before anything is written:
// a namespace that is no DNS label and an image with a space were written (exit 0), and an -o
// that cannot be made exited 1; each is a bad argument now.
TEST(K8sCommand, BadOptionsAreRefusedBeforeAnythingIsWritten) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("k8s-options-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "plain-file") << "x";
  const std::string file = std::string(TAGFLOW_SOURCE_DIR) + "/configs/kubernetes.yaml";
  const std::string out = (dir / "manifests").string();
  for (const auto& [options, says] : std::vector<std::pair<std::string, std::string>>{
           {"--namespace Bad_NS -o " + out,
            "tagflow k8s: --namespace 'Bad_NS' is not a DNS label: 1 to 63 lowercase letters"},
           {"--image 'x y' -o " + out,
            "tagflow k8s: --image 'x y' is not an image reference (empty, or with spaces)"},
           {"-o " + (dir / "plain-file" / "m").string(),
            "tagflow k8s: -o " + (dir / "plain-file" / "m").string() +
                ": cannot create the directory: Not a directory"},
           {"-o " + (dir / "plain-file").string(),
            "tagflow k8s: -o " + (dir / "plain-file").string() + ": not a directory"}}) {
    const auto r =
        testing::run_command(testing::tagflow_binary() + " k8s " + file + " " + options + " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << options << ": " << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << options << ": " << r.output;
  }
  EXPECT_FALSE(fs::exists(out));
  // A PodMonitor an earlier rendering wrote does not stay behind, unlisted, in a later one.
  const std::string render = testing::tagflow_binary() + " k8s " + file + " -o " + out;
  ASSERT_EQ(testing::run_command(render + " --pod-monitor 2>&1").exit_code, 0);
  ASSERT_TRUE(fs::exists(fs::path(out) / "podmonitor.yaml"));
  const auto again = testing::run_command(render + " 2>&1");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_FALSE(fs::exists(fs::path(out) / "podmonitor.yaml")) << again.output;
  EXPECT_NE(again.output.find("removed podmonitor.yaml of an earlier --pod-monitor rendering"),
            std::string::npos)
      << again.output;
  // Nor does a secret.yaml, with an earlier run's private keys, when the file has no keys.
  ASSERT_TRUE(fs::exists(fs::path(out) / "secret.yaml"));
  std::string open_text = read_text_file(file);
  open_text.replace(open_text.find("security:\n  curve: false"),
                    std::string("security:\n  curve: false").size(), "security: none");
  const fs::path open_file = dir / "open.yaml";
  std::ofstream(open_file) << open_text;
  const auto open = testing::run_command(testing::tagflow_binary() + " k8s " + open_file.string() +
                                         " -o " + out + " 2>&1");
  EXPECT_EQ(open.exit_code, 0) << open.output;
  EXPECT_FALSE(fs::exists(fs::path(out) / "secret.yaml")) << open.output;
  EXPECT_NE(open.output.find("removed secret.yaml of an earlier rendering"), std::string::npos)
      << open.output;
  // A manifest's name taken by a directory: refused before any file is written (the others were
  // written, with a kustomization.yaml listing a service.yaml that was not).
  const fs::path blocked = dir / "blocked";
  fs::create_directories(blocked / "service.yaml");
  const auto refused = testing::run_command(render.substr(0, render.find(" -o ")) + " -o " +
                                            blocked.string() + " 2>&1");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find((blocked / "service.yaml").string() +
                                " is not a regular file (a directory, a pipe or a device): "
                                "nothing was written"),
            std::string::npos)
      << refused.output;
  EXPECT_FALSE(fs::exists(blocked / "kustomization.yaml"));
  EXPECT_FALSE(fs::exists(blocked / "configmap.yaml"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tagflow::cli
