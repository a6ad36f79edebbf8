// `tagflow up` with real processes: a shortened configs/local.yaml run as separate processes gives
// the digest of `--placement single` and the same digest again; a killed sampler ends the run with
// an error naming it and no process left; a bad file and an unknown host exit 2; `--host` starts
// only that host's processes, and SIGTERM stops them.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/launch/metrics_probe.hpp"
#include "federate/federate_client.hpp"
#include "nodes/cluster/federation_plan.hpp"
#include "tests/support/cluster_files.hpp"
#include "tests/support/launched_processes.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/shipped_config.hpp"

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

using testing::alive;
using testing::eventually;
using testing::read_text_file;
using testing::recorded_pids;
using testing::wait_exit;

/// configs/local.yaml on free ports, stopping after `env_steps` (learning from 200 items on);
/// `hosts` replaces its hosts section when not empty (then `sampler_host`/`learning_host` place
/// the acting and the learning nodes).
std::string shortened_local(int base, const std::string& stop, const std::string& hosts = "",
                            const std::string& acting_host = "",
                            const std::string& learning_host = "") {
  testing::LocalClusterOptions options;
  options.stop = stop;
  options.port = testing::local_cluster_ports_from(base);
  options.hosts = hosts;
  options.host = {{"coordinator", learning_host},
                  {"replay", learning_host},
                  {"learner", learning_host},
                  {"sampler", acting_host},
                  {"inference", acting_host}};
  return testing::local_cluster_yaml(options);
}

using testing::Launched;

/// Starts `tagflow ARGS...` with stdout and stderr in files of `dir`.
Launched launch(const std::vector<std::string>& args, const fs::path& dir, const std::string& tag) {
  Launched launched{-1, dir / (tag + ".out"), dir / (tag + ".err")};
  std::vector<std::string> argv{std::string(TAGFLOW_BIN_DIR) + "/tagflow"};
  argv.insert(argv.end(), args.begin(), args.end());
  launched.pid = testing::spawn_with_output(argv, launched.out, launched.err);
  return launched;
}

int run(const std::vector<std::string>& args, const fs::path& dir, const std::string& tag,
        std::chrono::seconds timeout = 150s) {
  return wait_exit(launch(args, dir, tag).pid, timeout);
}

class TagflowUp : public ::testing::Test {
 protected:
  void TearDown() override { testing::remove_unless_failed(dir_); }
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("tagflow_up_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    base_port_ = testing::free_local_cluster_ports();
    ASSERT_GT(base_port_, 0) << "no free port range";
  }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  /// The shortened local cluster on two loopback hosts, the samplers and the inference server on
  /// a, the rest on b, with `join_timeout` and `checkpoint` and `restart` ("" for none), as
  /// DIR/NAME.
  void write_split(const std::string& name, const std::string& join_timeout,
                   const std::string& checkpoint = "", const std::string& restart = "") {
    testing::LocalClusterOptions options;
    options.stop = "env_steps: 800";
    options.port = testing::local_cluster_ports_from(base_port_);
    options.hosts = "  a: {address: 127.0.0.1}\n  b: {address: 127.0.0.1}\n";
    options.host = {{"coordinator", "b"},
                    {"replay", "b"},
                    {"learner", "b"},
                    {"sampler", "a"},
                    {"inference", "a"}};
    options.checkpoint = checkpoint;
    options.restart = restart;
    std::string text = testing::local_cluster_yaml(options);
    const std::string heartbeat = "  heartbeat_timeout: 2s\n";
    const std::size_t at = text.find(heartbeat);
    ASSERT_NE(at, std::string::npos) << text;
    text.insert(at + heartbeat.size(), "  join_timeout: " + join_timeout + "\n");
    write(name, text);
  }

  fs::path dir_;
  int base_port_ = 0;
};

TEST_F(TagflowUp, ABadFileExitsTwoWithFileLineAndKey) {
  write("bad.yaml", "cluster: bad\nseed: 1\nnodez: {}\n");
  EXPECT_EQ(run({"up", path("bad.yaml"), "--quiet"}, dir_, "bad"), 2);
  const std::string err = read_text_file(dir_ / "bad.err");
  EXPECT_NE(err.find("bad.yaml:3: nodez"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "runs"));  // nothing started
}

// A bad node param used to be found by the replay process after every process had started, in
// a message without the file. Every node's params are checked before anything starts.
TEST_F(TagflowUp, ABadNodeParamExitsTwoNamingTheFileBeforeAnyProcessStarts) {
  std::string text = shortened_local(base_port_, "env_steps: 800");
  const std::size_t at = text.find("capacity: 50000");
  ASSERT_NE(at, std::string::npos);
  write("local.yaml", text.replace(at, 15, "capacity: -5"));
  // The error names the param's own line and key.
  const auto line =
      1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  EXPECT_EQ(run({"up", path("local.yaml"), "--quiet"}, dir_, "param"), 2);
  const std::string err = read_text_file(dir_ / "param.err");
  EXPECT_NE(err.find(path("local.yaml") + ":" + std::to_string(line) +
                     ": nodes.replay.params.capacity: node 'replay': param 'capacity'"),
            std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(dir_ / "runs"));  // nothing started
  // `tagflow coordinator` loads the file as `up` does, params included: refused at once, not
  // after its join timeout.
  EXPECT_EQ(run({"coordinator", "--config", path("local.yaml")}, dir_, "coordinator"), 2);
  const std::string said = read_text_file(dir_ / "coordinator.err");
  EXPECT_NE(said.find(":" + std::to_string(line) + ": nodes.replay.params.capacity:"),
            std::string::npos)
      << said;
}

// A directory or a named pipe as the coordinator's file is refused as `tagflow up` refuses it (a
// pipe blocked the read for ever).
TEST_F(TagflowUp, TheCoordinatorRefusesADirectoryOrAPipeAsItsFile) {
  const std::string pipe = path("pipe.yaml");
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  EXPECT_EQ(run({"coordinator", "--config", pipe}, dir_, "pipe"), 2);
  EXPECT_NE(read_text_file(dir_ / "pipe.err").find("not a regular file"), std::string::npos)
      << read_text_file(dir_ / "pipe.err");
  EXPECT_EQ(run({"coordinator", "--config", dir_.string()}, dir_, "dir"), 2);
  EXPECT_NE(read_text_file(dir_ / "dir.err").find("a directory, not a cluster file"),
            std::string::npos)
      << read_text_file(dir_ / "dir.err");
}

// The same for the params only the LibTorch processes use: the learner's and the inference
// server's are checked by the launcher too.
TEST_F(TagflowUp, ABadLearnerOrInferenceParamExitsTwoBeforeAnyProcessStarts) {
  const std::string text = shortened_local(base_port_, "env_steps: 800");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"learning_rate: 0.001",
       "nodes.learner.params.learning_rate: node 'learner': param 'learning_rate'"},
      {"max_batch: 64", "nodes.inference.params.max_batch: node 'inference': param 'max_batch'"}};
  for (const auto& [good, expected] : cases) {
    std::string bad = text;
    const std::size_t at = bad.find(good);
    ASSERT_NE(at, std::string::npos) << good;
    bad.replace(at, good.size(), good.substr(0, good.find(':')) + ": -1");
    write("local.yaml", bad);
    EXPECT_EQ(run({"up", path("local.yaml"), "--quiet"}, dir_, "torch-param"), 2);
    const std::string err = read_text_file(dir_ / "torch-param.err");
    EXPECT_NE(err.find(path("local.yaml") + ":"), std::string::npos) << err;
    EXPECT_NE(err.find(expected), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(dir_ / "runs"));  // nothing started
  }
}

// A policy's TorchScript file is read by the inference process (LibTorch): one it cannot serve
// ends the run with exit 2 and the file's line and key, as with --placement single (the process
// used to print the key alone).
TEST_F(TagflowUp, ATorchScriptFileTheInferenceProcessCannotServeIsNamedWithItsLine) {
  const std::string port = std::to_string(base_port_);
  write("ts.yaml", "cluster: ts\ncoordinator: {port: " + port +
                       "}\npolicies:\n  car: {hidden: \"64\", torchscript: nope.pt}\nnodes:\n"
                       "  junction: {kind: multi_agent, data_port: " +
                       std::to_string(base_port_ + 1) +
                       ", params: {env: TrafficJunction4-v1}}\n"
                       "  inference: {kind: inference, data_port: " +
                       std::to_string(base_port_ + 2) +
                       "}\nconnections:\n"
                       "  - {from: junction.observations, to: inference.observations}\n"
                       "  - {from: inference.actions, to: junction.actions, after: 0}\n"
                       "stop: {env_steps: 100}\n");
  EXPECT_EQ(run({"up", path("ts.yaml"), "--quiet", "--log-dir", path("logs")}, dir_, "ts"), 2);
  const std::string err = read_text_file(dir_ / "ts.err");
  EXPECT_NE(err.find("node inference failed (exit code 2)"), std::string::npos) << err;
  EXPECT_NE(err.find(path("ts.yaml") + ":4: policies.car.torchscript: no such file 'nope.pt'"),
            std::string::npos)
      << err;
}

// The cluster's name is the stem of the run's log directory: a path in it is refused.
TEST_F(TagflowUp, AClusterNameThatIsAPathIsRefusedAndNothingIsWritten) {
  std::string text = shortened_local(base_port_, "env_steps: 800");
  const std::size_t at = text.find("\ncluster: ");  // the key, not the file's first comment
  ASSERT_NE(at, std::string::npos);
  text.replace(at + 1, text.find('\n', at + 1) - at - 1, "cluster: ../../escaped");
  write("local.yaml", text);
  EXPECT_EQ(run({"up", path("local.yaml"), "--quiet"}, dir_, "name"), 2);
  EXPECT_NE(read_text_file(dir_ / "name.err").find("cluster names are"), std::string::npos)
      << read_text_file(dir_ / "name.err");
  EXPECT_FALSE(fs::exists(dir_ / "runs"));
  // runs/../../escaped-TIME would have been dir_'s sibling.
  for (const auto& entry : fs::directory_iterator(dir_.parent_path())) {
    EXPECT_NE(entry.path().filename().string().rfind("escaped", 0), 0U) << entry.path();
  }
}

TEST_F(TagflowUp, AnUnknownHostExitsTwoNamingTheHosts) {
  write("local.yaml", shortened_local(base_port_, "env_steps: 800"));
  EXPECT_EQ(run({"up", path("local.yaml"), "--host", "mars", "--quiet"}, dir_, "host"), 2);
  const std::string err = read_text_file(dir_ / "host.err");
  EXPECT_NE(err.find("no host 'mars' (hosts: local)"), std::string::npos) << err;
}

// A Slurm or Kubernetes host has no address outside its allocation: `tagflow up` (with --host
// or without) says which command runs such a file, instead of advice it cannot follow.
TEST_F(TagflowUp, AFileWithSlurmOrKubernetesHostsIsSentToItsOwnCommand) {
  const fs::path configs = fs::path(TAGFLOW_SOURCE_DIR) / "configs";
  EXPECT_EQ(run({"up", (configs / "kubernetes.yaml").string(), "--quiet"}, dir_, "k8s"), 2);
  std::string err = read_text_file(dir_ / "k8s.err");
  // Named at the line of host act's `kubernetes:` key.
  const std::string text = read_text_file(configs / "kubernetes.yaml");
  const std::size_t key = text.find("  act:\n    kubernetes:");
  ASSERT_NE(key, std::string::npos);
  const auto line =
      2 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(key), '\n');
  EXPECT_NE(err.find("kubernetes.yaml:" + std::to_string(line) +
                     ": hosts.act.kubernetes: a Kubernetes host runs in pods; "
                     "render them with `tagflow k8s "),
            std::string::npos)
      << err;
  EXPECT_EQ(
      run({"up", (configs / "slurm.yaml").string(), "--host", "act", "--quiet"}, dir_, "slurm"), 2);
  err = read_text_file(dir_ / "slurm.err");
  EXPECT_NE(err.find(": hosts.act.slurm: a Slurm host runs inside a Slurm job; submit the file "
                     "with `tagflow slurm "),
            std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(dir_ / "runs"));
}

TEST_F(TagflowUp, HostNameStartsOnlyThatHostsProcessesAndSigtermStopsThem) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  write("split.yaml",
        shortened_local(base_port_, "env_steps: 800",
                        "  a: {address: 127.0.0.1}\n  b: {address: 127.0.0.1}\n", "a", "b"));
  const fs::path logs = dir_ / "logs-a";
  const Launched up = launch(
      {"up", path("split.yaml"), "--host", "a", "--log-dir", logs.string(), "--quiet"}, dir_, "a");
  // Host a plays the samplers and the inference server; the coordinator is b's.
  ASSERT_TRUE(eventually([&] { return recorded_pids(logs).size() == 3; }, 30s))
      << read_text_file(up.err);
  const auto pids = recorded_pids(logs);
  EXPECT_EQ(pids.count("sampler-0") + pids.count("sampler-1") + pids.count("inference"), 3U);
  ::kill(up.pid, SIGTERM);
  EXPECT_EQ(wait_exit(up.pid, 30s), 130) << read_text_file(up.err);
  const std::string err = read_text_file(up.err);
  EXPECT_NE(err.find("host a: sampler-0, sampler-1, inference"), std::string::npos) << err;
  std::vector<std::string> logs_written;
  for (const auto& entry : fs::directory_iterator(logs)) {
    if (entry.path().extension() == ".log") logs_written.push_back(entry.path().stem().string());
  }
  std::sort(logs_written.begin(), logs_written.end());
  EXPECT_EQ(logs_written, (std::vector<std::string>{"inference", "sampler-0", "sampler-1"}));
  for (const auto& [name, pid] : pids) EXPECT_FALSE(alive(pid)) << name << " outlived the launcher";
}

// A host started while the coordinator's host is not: its processes wait `join_timeout` + 5 s for
// a START, exit, and are restarted, as the file allows, to wait again. Each restart says why, in
// the process's own words: it exits 4 as a federate told of another's failure does.
TEST_F(TagflowUp, AHostThatFindsNoCoordinatorSaysWhyAtEachRestart) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the inference process needs tagflow-torch";
  write_split("alone.yaml", "1s", "{every: 200ms, keep: 2}", "{max: 1}");
  EXPECT_EQ(run({"up", path("alone.yaml"), "--host", "a", "--log-dir", path("logs-a"), "--quiet"},
                dir_, "a", 90s),
            1);
  const std::string err = read_text_file(dir_ / "a.err");
  const std::size_t restart =
      err.find("; restart 1 of 1 from the checkpoint the coordinator's host");
  ASSERT_NE(restart, std::string::npos) << err;
  const std::size_t line = err.rfind('\n', restart) + 1;
  const std::string said = err.substr(line, restart - line);
  EXPECT_NE(said.find(" exit code 4: federate '"), std::string::npos) << said;
  EXPECT_NE(said.find("': no START from the coordinator at tcp://127.0.0.1:" +
                      std::to_string(base_port_) + " within 6000 ms"),
            std::string::npos)
      << said;
  EXPECT_EQ(err.find("restart 2 of"), std::string::npos) << err;
  // The last lines are the second attempt's failure, said to be the last.
  EXPECT_NE(err.find("tagflow up: no restart left: the run failed again after its 1 restart(s) "
                     "(restart: {max: 1})"),
            std::string::npos)
      << err;
}

// The coordinator's host started while the other is not: the run fails after `join_timeout`,
// naming the federates that never joined and the host whose launcher should run them (they
// failed nowhere, so not "on another host").
TEST_F(TagflowUp, TheCoordinatorsHostAloneNamesTheHostWhoseFederatesNeverJoined) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner process needs tagflow-torch";
  write_split("alone.yaml", "2s");
  EXPECT_EQ(run({"up", path("alone.yaml"), "--host", "b", "--log-dir", path("logs-b"), "--quiet"},
                dir_, "b", 90s),
            1);
  const std::string err = read_text_file(dir_ / "b.err");
  EXPECT_NE(err.find("tagflow up: the run failed: federate(s) 'sampler-0' 'sampler-1' "
                     "'inference' never joined within 2000 ms; is the launcher of host a "
                     "running, with the same file and keys? (the coordinator's log names "
                     "refused handshakes: " +
                     path("logs-b") + "/coordinator.log)"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("on another host"), std::string::npos) << err;
}

// A run whose federates never joined says, for each process of them, how long it ran and how much
// CPU it had: a process still starting on a busy machine is told from one that hung. Here
// `join_timeout: 1ms` fails the run while every process is still starting.
TEST_F(TagflowUp, AFederateThatNeverJoinedIsShownWithItsRunAndCpuTime) {
  std::string text = shortened_local(base_port_, "env_steps: 800");
  const std::string heartbeat = "  heartbeat_timeout: 2s\n";
  const std::size_t at = text.find(heartbeat);
  ASSERT_NE(at, std::string::npos) << text;
  text.insert(at + heartbeat.size(), "  join_timeout: 1ms\n");
  write("hurried.yaml", text);
  EXPECT_EQ(
      run({"up", path("hurried.yaml"), "--log-dir", path("logs"), "--quiet"}, dir_, "up", 60s), 1);
  const std::string err = read_text_file(dir_ / "up.err");
  EXPECT_NE(err.find("never joined within 1 ms"), std::string::npos) << err;
  // One line per process the message names (every one here), with its figures.
  for (const std::string process : {"sampler-0", "sampler-1", "replay", "learner", "inference"}) {
    const std::size_t line = err.find("tagflow up: " + process + " ran ");
    ASSERT_NE(line, std::string::npos) << process << "\n" << err;
    const std::string said = err.substr(line, err.find('\n', line) - line);
    EXPECT_NE(said.find(" s without joining and had "), std::string::npos) << said;
    EXPECT_NE(said.find(" CPU s of it ("), std::string::npos) << said;
  }
}

// Listens on 127.0.0.1:port until destroyed, as another program would.
class PortHolder {
 public:
  explicit PortHolder(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    held_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
            ::listen(fd_, 1) == 0;
  }
  ~PortHolder() {
    if (fd_ >= 0) ::close(fd_);
  }
  PortHolder(const PortHolder&) = delete;
  PortHolder& operator=(const PortHolder&) = delete;
  bool held() const { return held_; }

 private:
  int fd_;
  bool held_ = false;
};

// A port of this host's processes that another program holds is refused before anything starts
// (exit 2, the file's line and key), a data port as a metrics port: each process would otherwise
// find out alone, after the others started, a data port failing its process on every restart
// and a metrics port only its endpoint. Started by hand, the process fails on its own before it
// joins: exit 1, not 4 (the code of a federate ended by another's failure).
TEST_F(TagflowUp, APortTakenByAnotherProgramIsRefusedBeforeAnyProcessStarts) {
  write("local.yaml", shortened_local(base_port_, "env_steps: 800"));
  const auto port_of = testing::local_cluster_ports_from(base_port_);
  const std::string file = path("local.yaml");
  const std::string text = read_text_file(dir_ / "local.yaml");
  const auto line_of = [&text](int port) {
    const std::size_t at = text.find(": " + std::to_string(port));
    return 1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n');
  };
  for (const auto& [port, key] : std::vector<std::pair<int, std::string>>{
           {port_of(7620), "nodes.replay.data_port"},
           {port_of(9470) + 1, "nodes.sampler.metrics_port + 1"},
           {port_of(7600), "coordinator.port"}}) {
    const PortHolder holder(port);
    ASSERT_TRUE(holder.held()) << port;
    const std::string tag = "taken" + std::to_string(port);
    EXPECT_EQ(run({"up", file, "--log-dir", path(tag), "--quiet"}, dir_, tag, 60s), 2) << key;
    const std::string err = read_text_file(dir_ / (tag + ".err"));
    const long line = key == "nodes.sampler.metrics_port + 1" ? line_of(port - 1) : line_of(port);
    EXPECT_NE(err.find("tagflow up: " + file + ":" + std::to_string(line) + ": " + key +
                       ": cannot listen on 127.0.0.1 port " + std::to_string(port) +
                       ": Address already in use: another program listens there"),
              std::string::npos)
        << err;
    EXPECT_FALSE(fs::exists(dir_ / tag)) << "the run directory was made";
  }
  const PortHolder holder(port_of(7620));
  ASSERT_TRUE(holder.held());
  // In actor mode the replay, learner and inference are published on their data ports (the
  // samplers dial): the same refusal.
  EXPECT_EQ(run({"up", file, "--mode", "actor", "--log-dir", path("actor"), "--quiet"}, dir_,
                "actor", 60s),
            2);
  const std::string actor_err = read_text_file(dir_ / "actor.err");
  EXPECT_NE(actor_err.find("tagflow up: " + file + ":" + std::to_string(line_of(port_of(7620))) +
                           ": nodes.replay.data_port: cannot listen on 127.0.0.1 port " +
                           std::to_string(port_of(7620))),
            std::string::npos)
      << actor_err;
  EXPECT_FALSE(fs::exists(dir_ / "actor")) << "the run directory was made";
  EXPECT_EQ(run({"node", "--config", file, "--name", "replay", "--quiet"}, dir_, "node", 60s), 1);
  const std::string err = read_text_file(dir_ / "node.err");
  EXPECT_NE(err.find("federate 'replay': cannot listen for data on tcp://127.0.0.1:" +
                     std::to_string(port_of(7620)) + ": Address already in use"),
            std::string::npos)
      << err;
}

// The inference service's gateways are checked with the other ports (nodes/gateway/PROTOCOL.md
// §1): one that another program holds, or a gateway_bind that is no address of this machine, is
// refused before anything starts, at the param's line.
TEST_F(TagflowUp, AGatewayPortTakenOrBoundElsewhereIsRefusedBeforeAnyProcessStarts) {
  const auto port = [this](int offset) { return std::to_string(base_port_ + offset); };
  const auto marl = [&](const std::string& bind) {
    return "cluster: m\nmode: reactor\nseed: 1\nhosts:\n  local: {address: 127.0.0.1}\n"
           "coordinator: {host: local, port: " +
           port(0) +
           "}\n"
           "policies:\n  a: {}\n  b: {}\nagents: {0: a, 1: a, \"*\": b}\n"
           "nodes:\n"
           "  junction: {kind: multi_agent, data_port: " +
           port(2) +
           ", params: {env: TrafficJunction4-v1}}\n"
           "  inference: {kind: inference, replicas: 2, data_port: " +
           port(3) +
           ",\n"
           "              params: {gateway_port: " +
           port(5) + bind +
           "}}\n"
           "connections:\n"
           "  - {from: junction.observations, to: inference.observations}\n"
           "  - {from: inference.actions, to: junction.actions, after: 0}\n"
           "stop: {env_steps: 100}\n";
  };
  write("taken.yaml", marl(""));
  const PortHolder holder(base_port_ + 6);
  ASSERT_TRUE(holder.held());
  EXPECT_EQ(
      run({"up", path("taken.yaml"), "--log-dir", path("taken"), "--quiet"}, dir_, "taken", 60s),
      2);
  const std::string taken = read_text_file(dir_ / "taken.err");
  EXPECT_NE(taken.find("tagflow up: " + path("taken.yaml") +
                       ":14: nodes.inference.params.gateway_port + 1: cannot listen on 127.0.0.1 "
                       "port " +
                       port(6) + ": Address already in use"),
            std::string::npos)
      << taken;
  EXPECT_FALSE(fs::exists(dir_ / "taken")) << "the run directory was made";

  write("elsewhere.yaml", marl(", gateway_bind: 192.0.2.254"));
  EXPECT_EQ(run({"up", path("elsewhere.yaml"), "--quiet"}, dir_, "elsewhere", 60s), 2);
  const std::string elsewhere = read_text_file(dir_ / "elsewhere.err");
  EXPECT_NE(elsewhere.find(path("elsewhere.yaml") +
                           ":14: nodes.inference.params.gateway_bind: 192.0.2.254 is no address "
                           "of this machine (nodes.inference.params.gateway_port would listen "
                           "there"),
            std::string::npos)
      << elsewhere;
}

// A host's address may be a name: its processes listen on the name's IPv4 address (ZeroMQ takes a
// name to bind as an interface's, and `localhost` failed every federate with "No such device").
TEST_F(TagflowUp, AHostAddressThatIsANameIsListenedOnAtItsAddress) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  write("named.yaml", shortened_local(base_port_, "env_steps: 800",
                                      "  local: {address: localhost}\n", "local", "local"));
  EXPECT_EQ(
      run({"up", path("named.yaml"), "--log-dir", path("named"), "--quiet"}, dir_, "named", 90s), 0)
      << read_text_file(dir_ / "named.err");
  EXPECT_NE(read_text_file(dir_ / "named.out").find("stop env_steps: "), std::string::npos)
      << read_text_file(dir_ / "named.out");
}

// The address a process listens on must be this machine's: a host's address, or
// monitoring.bind for the metrics endpoints, is refused at its own line when it is not.
TEST_F(TagflowUp, AnAddressThatIsNotThisMachinesIsRefusedAtItsLine) {
  std::string text = shortened_local(base_port_, "env_steps: 800");
  const std::size_t bind = text.find("bind: 127.0.0.1");
  ASSERT_NE(bind, std::string::npos) << text;
  text.replace(bind, std::string("bind: 127.0.0.1").size(), "bind: 192.0.2.254");
  write("bind.yaml", text);
  const std::string file = path("bind.yaml");
  const long line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(bind), '\n');
  EXPECT_EQ(run({"up", file, "--quiet"}, dir_, "bind", 60s), 2);
  const std::string err = read_text_file(dir_ / "bind.err");
  EXPECT_NE(err.find("tagflow up: " + file + ":" + std::to_string(line) +
                     ": monitoring.bind: 192.0.2.254 is no address of this machine ("),
            std::string::npos)
      << err;
}

std::string digest_of(const fs::path& summary) {
  const nlohmann::json json = nlohmann::json::parse(read_text_file(summary), nullptr, false);
  if (json.is_discarded() || !json.contains("digest"))
    return "(no summary at " + summary.string() + ")";
  return json.at("digest").get<std::string>();
}

TEST_F(TagflowUp, ProcessesGiveTheDigestOfTheSingleProcessPlacementRunAfterRun) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  write("short.yaml", shortened_local(base_port_, "env_steps: 2400"));
  ASSERT_EQ(run({"up", path("short.yaml"), "--summary", path("first.json"), "--log-dir",
                 path("run1"), "--quiet"},
                dir_, "first"),
            0)
      << read_text_file(dir_ / "first.err");
  ASSERT_EQ(run({"up", path("short.yaml"), "--summary", path("second.json"), "--log-dir",
                 path("run2"), "--quiet"},
                dir_, "second"),
            0)
      << read_text_file(dir_ / "second.err");
  ASSERT_EQ(run({"up", path("short.yaml"), "--placement", "single", "--summary",
                 path("single.json"), "--quiet"},
                dir_, "single"),
            0)
      << read_text_file(dir_ / "single.err");

  EXPECT_NE(
      read_text_file(dir_ / "single.err").find("placement single, mode reactor, 1 worker(s)\n"),
      std::string::npos)
      << read_text_file(dir_ / "single.err");
  const std::string digest = digest_of(dir_ / "first.json");
  EXPECT_EQ(digest.size(), 16U) << digest;
  EXPECT_EQ(digest_of(dir_ / "second.json"), digest);
  EXPECT_EQ(digest_of(dir_ / "single.json"), digest);
  EXPECT_EQ(digest_of(dir_ / "run1" / "summary.json"), digest);
  // The run directory keeps the file the run started with.
  EXPECT_EQ(read_text_file(dir_ / "run1" / "cluster.yaml"), read_text_file(dir_ / "short.yaml"));

  const nlohmann::json summary = nlohmann::json::parse(read_text_file(dir_ / "first.json"));
  EXPECT_EQ(summary.at("placement"), "process");
  EXPECT_EQ(summary.at("stop_reason"), "env_steps");
  EXPECT_EQ(summary.at("env_steps"), 2400);
  const std::string out = read_text_file(dir_ / "first.out");
  EXPECT_NE(out.find("stop env_steps: "), std::string::npos) << out;
  EXPECT_NE(out.find("digest " + digest), std::string::npos) << out;
  for (const std::string process :
       {"coordinator", "sampler-0", "sampler-1", "replay", "learner", "inference"}) {
    EXPECT_TRUE(fs::exists(dir_ / "run1" / (process + ".log"))) << process;
  }
}

// A learner whose weights do not fit in one message between processes (hidden 2100,2100: 17.7
// MB, over the 16 MiB cap) ends the run with exit 2 naming the port and what to change, and is
// not restarted: every restart would fail alike.
TEST_F(TagflowUp, AValueOverTheMessageCapExitsTwoNamingItsPortAndIsNotRestarted) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  testing::LocalClusterOptions options;
  options.stop = "env_steps: 800";
  options.port = testing::local_cluster_ports_from(base_port_);
  options.restart = "{max: 3}";
  std::string text = testing::local_cluster_yaml(options);
  const std::size_t hidden = text.find("hidden: \"64,64\"");  // the learner's; the rest inherit it
  ASSERT_NE(hidden, std::string::npos) << text;
  write("big.yaml", text.replace(hidden, 15, "hidden: \"2100,2100\""));
  EXPECT_EQ(run({"up", path("big.yaml"), "--log-dir", path("run"), "--quiet"}, dir_, "big"), 2);
  const std::string err = read_text_file(dir_ / "big.err");
  EXPECT_NE(err.find("federate 'learner': a value of "), std::string::npos) << err;
  EXPECT_NE(err.find(" bytes for weights[0] of 'inference' is over the message cap of 16777216 "
                     "bytes"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("a smaller network (`hidden`)"), std::string::npos) << err;
  // The learner's own words, when it was restarted after all: which exit it took, and why.
  const auto learner_log = [&] { return read_text_file(dir_ / "run" / "learner.log"); };
  EXPECT_EQ(err.find("restart 1 of 3"), std::string::npos) << err << learner_log();
  EXPECT_FALSE(fs::exists(dir_ / "run" / "learner.restart1.log")) << learner_log();
}

// A host's address may be IPv6 in reactor mode too (its sockets take ZMQ_IPV6 for it): `::1` runs
// to the digest of 127.0.0.1, its links over the Unix-socket twins and, with
// TAGFLOW_LOCAL_LINKS=0, over TCP on ::1.
TEST_F(TagflowUp, AnIpv6HostAddressRunsToTheDigestOfAnIpv4One) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  write("v4.yaml", shortened_local(base_port_, "env_steps: 800"));
  write("v6.yaml", shortened_local(base_port_, "env_steps: 800", "  local: {address: \"::1\"}\n",
                                   "local", "local"));
  for (const std::string run_of : {"v4", "v6", "v6_tcp"}) {
    const std::string file = run_of == "v4" ? "v4.yaml" : "v6.yaml";
    if (run_of == "v6_tcp") ::setenv("TAGFLOW_LOCAL_LINKS", "0", 1);
    const int status =
        run({"up", path(file), "--quiet", "--summary", path(run_of + ".json")}, dir_, run_of, 90s);
    ::unsetenv("TAGFLOW_LOCAL_LINKS");
    ASSERT_EQ(status, 0) << run_of << ": " << read_text_file(dir_ / (run_of + ".err"));
  }
  const std::string digest = digest_of(dir_ / "v4.json");
  ASSERT_EQ(digest.size(), 16U) << digest;
  EXPECT_EQ(digest_of(dir_ / "v6.json"), digest);
  EXPECT_EQ(digest_of(dir_ / "v6_tcp.json"), digest);
}

TEST_F(TagflowUp, ProcessPlacementOptionsWithPlacementSingleExitTwoSayingWhy) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "--placement single runs in tagflow-torch";
  write("short.yaml", shortened_local(base_port_, "env_steps: 800"));
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--trace"}, "--trace records the processes of the process placement"},
      {{"--log-dir", path("logs")}, "--log-dir holds the logs and results of the processes"},
      {{"--host", "local"}, "--host starts one host's processes"},
      {{"--resume", path("logs")}, "--resume continues a process-placement run"},
      {{"--stop-with-stdin"}, "--stop-with-stdin stops the processes a launcher started"},
  };
  int n = 0;
  for (const auto& [extra, why] : cases) {
    std::vector<std::string> args{"up", path("short.yaml"), "--placement", "single", "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    const std::string tag = "refused" + std::to_string(n++);
    EXPECT_EQ(run(args, dir_, tag), 2) << extra.front();
    const std::string err = read_text_file(dir_ / (tag + ".err"));
    EXPECT_NE(err.find("tagflow up: " + why), std::string::npos) << err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "logs"));
}

// A log directory that cannot be made is a bad argument too, refused before any process starts:
// the one --log-dir names, or the default one under a working directory that cannot hold it.
TEST_F(TagflowUp, ALogDirectoryThatCannotBeMadeIsRefusedBeforeAnyProcessStarts) {
  write("short.yaml", shortened_local(base_port_, "env_steps: 800"));
  write("plain-file", "x");
  const std::string logs = path("plain-file") + "/logs";
  EXPECT_EQ(run({"up", path("short.yaml"), "--quiet", "--log-dir", logs}, dir_, "given"), 2);
  const std::string given = read_text_file(dir_ / "given.err");
  EXPECT_NE(given.find("tagflow up: --log-dir " + logs + ": cannot create the directory: "),
            std::string::npos)
      << given;
  EXPECT_EQ(given.find("cpu_bind"), std::string::npos) << given;  // nothing was started
  // The default, runs/NAME-TIME, under a working directory where `runs` is a plain file.
  write("runs", "x");
  const auto result = testing::run_command("cd " + dir_.string() + " && " + TAGFLOW_BIN_DIR +
                                           "/tagflow up " + path("short.yaml") + " --quiet 2>&1");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("tagflow up: cannot create the log directory runs/"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("(--log-dir DIR puts it elsewhere)"), std::string::npos)
      << result.output;
}

// A --log-dir that is not empty is refused before anything is written to it: an earlier run
// there would have had its logs overwritten, and a restart would have resumed from its
// checkpoints (another seed's run ended with the earlier run's digest); a user's files would
// have been overwritten too. A --summary that is the cluster file or inside the log directory is
// refused as well. An empty directory is taken.
TEST_F(TagflowUp, ANonEmptyLogDirectoryOrASummaryOverTheRunsFilesIsRefused) {
  write("short.yaml", shortened_local(base_port_, "env_steps: 800"));
  const std::string shortened = read_text_file(dir_ / "short.yaml");
  fs::create_directories(dir_ / "earlier" / "checkpoints" / "2600000000");
  write("earlier/cluster.yaml", "cluster: earlier\n");
  fs::create_directories(dir_ / "mine");
  write("mine/summary.json", "{\"mine\": true}\n");
  const std::string earlier = path("earlier");
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"--log-dir", earlier},
       "tagflow up: --log-dir " + earlier +
           " is not empty (an earlier run's: cluster.yaml is "
           "there): "},
      {{"--log-dir", path("mine")}, "tagflow up: --log-dir " + path("mine") + " is not empty: "},
      {{"--summary", path("short.yaml")},
       "tagflow up: --summary " + path("short.yaml") + " is " + path("short.yaml") +
           ", the file the command reads: it would be overwritten"},
      {{"--log-dir", path("fresh"), "--summary", path("fresh/s.json")},
       "tagflow up: --summary " + path("fresh/s.json") + " is in the log directory " +
           path("fresh")},
  };
  int n = 0;
  for (const auto& [args, says] : refused) {
    std::vector<std::string> argv = {"up", path("short.yaml"), "--quiet"};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string tag = "refused" + std::to_string(n++);
    EXPECT_EQ(run(argv, dir_, tag), 2) << says;
    const std::string err = read_text_file(dir_ / (tag + ".err"));
    EXPECT_NE(err.find(says), std::string::npos) << err;
    EXPECT_EQ(err.find("cpu_bind"), std::string::npos) << err;  // nothing was started
  }
  EXPECT_NE(read_text_file(dir_ / "refused0.err").find("--resume " + earlier), std::string::npos);
  EXPECT_EQ(read_text_file(dir_ / "earlier" / "cluster.yaml"), "cluster: earlier\n");
  EXPECT_EQ(read_text_file(dir_ / "mine" / "summary.json"), "{\"mine\": true}\n");
  EXPECT_EQ(read_text_file(dir_ / "short.yaml"), shortened);
  EXPECT_FALSE(fs::exists(dir_ / "fresh"));
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  fs::create_directories(dir_ / "empty");
  EXPECT_EQ(run({"up", path("short.yaml"), "--quiet", "--log-dir", path("empty")}, dir_, "empty"),
            0)
      << read_text_file(dir_ / "empty.err");
  EXPECT_TRUE(fs::exists(dir_ / "empty" / "summary.json"));
}

// A file with key files (`security.keys_dir`) that lack a key this host's processes read is a bad
// file, refused before any process starts, naming the key: each process used to exit 1 on its own.
TEST_F(TagflowUp, AMissingKeyFileIsRefusedBeforeAnyProcessStarts) {
  std::string text = shortened_local(base_port_, "env_steps: 800");
  const std::string open = "security:\n  curve: false\n";
  const std::size_t at = text.find(open);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, open.size(), "security:\n  curve: true\n  keys_dir: keys\n");
  write("keyed.yaml", text);
  // Refusals name the file's keys_dir line.
  const std::string keys_line = std::to_string(
      1 + std::count(text.begin(),
                     text.begin() + static_cast<std::ptrdiff_t>(text.find("  keys_dir: keys")),
                     '\n'));
  const auto made =
      testing::run_command(std::string(TAGFLOW_BIN_DIR) + "/tagflow keys generate " + path("keys") +
                           " --config " + path("keyed.yaml") + " 2>&1");
  ASSERT_EQ(made.exit_code, 0) << made.output;
  ASSERT_TRUE(fs::remove(dir_ / "keys" / "replay.key"));
  EXPECT_EQ(run({"up", path("keyed.yaml"), "--quiet", "--log-dir", path("logs")}, dir_, "keyed"),
            2);
  const std::string err = read_text_file(dir_ / "keyed.err");
  EXPECT_NE(err.find("tagflow up: " + path("keyed.yaml") + ":" + keys_line +
                     ": security.keys_dir: cannot read key file " + path("keys") + "/replay.key"),
            std::string::npos)
      << err;
  // The directory as the file resolves it: the command works from wherever tagflow up ran.
  EXPECT_NE(err.find("(`tagflow keys generate " + path("keys") + " --config " + path("keyed.yaml") +
                     "` writes a pair"),
            std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(dir_ / "logs")) << err;  // nothing was started
  // Actor mode reads the TLS certificates under actor/ instead.
  ASSERT_TRUE(fs::remove(dir_ / "keys" / "actor" / "replay.key"));
  EXPECT_EQ(run({"up", path("keyed.yaml"), "--mode", "actor", "--quiet", "--log-dir", path("logs")},
                dir_, "keyed-actor"),
            2);
  const std::string actor_err = read_text_file(dir_ / "keyed-actor.err");
  EXPECT_NE(actor_err.find("tagflow up: " + path("keyed.yaml") + ":" + keys_line +
                           ": security.keys_dir: no actor-mode credential " + path("keys") +
                           "/actor/replay.key"),
            std::string::npos)
      << actor_err;
  EXPECT_FALSE(fs::exists(dir_ / "logs")) << actor_err;
}

// --resume of a file that cannot resume (no checkpoint:, or actor mode) is refused before
// anything is written to the run directory it names: no keys minted there, no logs.
TEST_F(TagflowUp, ResumeOfAFileWithoutCheckpointsIsRefusedBeforeAnythingIsWritten) {
  write("short.yaml", shortened_local(base_port_, "env_steps: 800"));
  fs::create_directories(dir_ / "old-run");
  for (const std::string mode : {"reactor", "actor"}) {
    const std::string tag = "resume-" + mode;
    EXPECT_EQ(
        run({"up", path("short.yaml"), "--mode", mode, "--resume", path("old-run")}, dir_, tag), 2)
        << mode;
    const std::string err = read_text_file(dir_ / (tag + ".err"));
    EXPECT_NE(err.find("tagflow up: --resume needs a reactor-mode file with checkpoint:"),
              std::string::npos)
        << err;
    EXPECT_EQ(err.find("minted"), std::string::npos) << err;
  }
  EXPECT_TRUE(fs::is_empty(dir_ / "old-run"));
}

// A run directory keeps the file it started with (LOG_DIR/cluster.yaml); --resume with another
// file, whose run would end with a digest neither file gives, is refused, and so is a --log-dir
// beside --resume, which continues in the run's own directory.
TEST_F(TagflowUp, ResumeWithAnotherFileOrALogDirIsRefused) {
  const std::string text =
      shortened_local(base_port_, "env_steps: 800") + "checkpoint: {every: 200ms}\n";
  write("ckpt.yaml", text);
  fs::create_directories(dir_ / "old-run");
  write("old-run/cluster.yaml", text + "# changed after the run started\n");
  EXPECT_EQ(run({"up", path("ckpt.yaml"), "--resume", path("old-run")}, dir_, "other"), 2);
  const std::string err = read_text_file(dir_ / "other.err");
  EXPECT_NE(err.find("tagflow up: --resume " + path("old-run") + ": " + path("ckpt.yaml") +
                     " is not the file this run started with (" + path("old-run") +
                     "/cluster.yaml): resume it with that file"),
            std::string::npos)
      << err;
  EXPECT_EQ(
      run({"up", path("ckpt.yaml"), "--resume", path("old-run"), "--log-dir", path("elsewhere")},
          dir_, "logdir"),
      2);
  EXPECT_NE(read_text_file(dir_ / "logdir.err")
                .find("tagflow up: --resume continues the run in its own directory: leave out "
                      "--log-dir " +
                      path("elsewhere")),
            std::string::npos)
      << read_text_file(dir_ / "logdir.err");
  EXPECT_FALSE(fs::exists(dir_ / "elsewhere"));
}

// In actor mode --workers sizes the actor system's scheduler, and the first line says so.
TEST_F(TagflowUp, AnActorModeRunInOneProcessSaysHowManySchedulerThreadsItRuns) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference nodes need tagflow-torch";
  write("short.yaml", shortened_local(base_port_, "env_steps: 800"));
  ASSERT_EQ(run({"up", path("short.yaml"), "--placement", "single", "--mode", "actor", "--workers",
                 "2", "--quiet"},
                dir_, "actor"),
            0)
      << read_text_file(dir_ / "actor.err");
  const std::string err = read_text_file(dir_ / "actor.err");
  EXPECT_NE(err.find("placement single, mode actor, 2 actor scheduler thread(s)\n"),
            std::string::npos)
      << err;
  EXPECT_NE(read_text_file(dir_ / "actor.out").find("stop env_steps: "), std::string::npos)
      << read_text_file(dir_ / "actor.out");
}

// A --summary the run could not write at its end is a bad argument, refused before the run in
// either placement (the directories it names are made when they are missing).
TEST_F(TagflowUp, ASummaryPathThatCannotBeWrittenIsRefusedBeforeTheRun) {
  write("short.yaml", shortened_local(base_port_, "env_steps: 800"));
  write("plain-file", "x");
  const std::string summary = path("plain-file") + "/summary.json";
  for (const std::string placement : {"process", "single"}) {
    if (placement == "single" && !TAGFLOW_HAS_TORCH) continue;
    const std::string tag = "summary-" + placement;
    std::vector<std::string> args{"up",      path("short.yaml"), "--placement", placement,
                                  "--quiet", "--summary",        summary};
    if (placement == "process") args.insert(args.end(), {"--log-dir", path("logs")});
    EXPECT_EQ(run(args, dir_, tag), 2) << placement;
    const std::string err = read_text_file(dir_ / (tag + ".err"));
    EXPECT_NE(err.find("tagflow up: --summary " + summary + ": cannot create the directory " +
                       path("plain-file")),
              std::string::npos)
        << err;
    EXPECT_EQ(read_text_file(dir_ / (tag + ".out")).find("stop "), std::string::npos)
        << "the run went ahead";
  }
  EXPECT_FALSE(fs::exists(dir_ / "logs")) << "the run directory was made";
}

// CLI11's own refusals (an unknown option value, a missing argument) are bad arguments: exit 2, as
// a bad file is, in either placement, and name the command as its own refusals do; a missing
// file is named as the file loader names it.
TEST_F(TagflowUp, BadArgumentsExitTwoInEitherPlacement) {
  write("short.yaml", shortened_local(base_port_, "env_steps: 800"));
  std::string bad_param = shortened_local(base_port_, "env_steps: 800");
  const std::string capacity = "capacity: 50000";
  ASSERT_NE(bad_param.find(capacity), std::string::npos);
  bad_param.replace(bad_param.find(capacity), capacity.size(), "capacity: -5");
  write("bad_param.yaml", bad_param);
  const auto capacity_line =
      1 + std::count(bad_param.begin(),
                     bad_param.begin() + static_cast<std::ptrdiff_t>(bad_param.find("capacity")),
                     '\n');
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"up"}, "tagflow up: file is required\nRun 'tagflow up --help' for more information.\n"},
      {{"up", path("short.yaml"), "--mode", "bogus"},
       "tagflow up: --mode: bogus not in {reactor,actor}"},
      {{"up", path("short.yaml"), "--workers", "2"},
       "tagflow up: --workers sets the reactor threads of a one-process run"},
      {{"up", path("short.yaml"), "--no-such-option"}, "--no-such-option"},
      {{"up", path("missing.yaml"), "--placement", "single"},
       "tagflow up: " + path("missing.yaml") + ":0: (file): cannot open the cluster file"},
      {{"up", path("short.yaml"), "--placement", "single", "--workers", "0"},
       "tagflow up: --workers: Value 0 not in range 1 to 64"},
      {{"keys", "generate"}, "tagflow keys generate: dir is required\nRun 'tagflow keys generate"},
      // CLI11 alone said "A subcommand is required" for a misspelt command.
      {{"nosuch"}, "tagflow: unknown command 'nosuch' (commands: train, doctor, "},
      {{"keys", "nosuch"},
       "tagflow keys: unknown command 'nosuch' (commands: generate)\nRun 'tagflow keys --help' "
       "for more information.\n"},
      {{"node", "--config", path("short.yaml"), "--name", "replay", "--peers-restart"},
       "--peers-restart is for actor mode only"},
      // A node's params are checked as `tagflow up` checks them: file, line and key.
      {{"node", "--config", path("bad_param.yaml"), "--name", "sampler-0"},
       "tagflow node sampler-0: " + path("bad_param.yaml") + ":" + std::to_string(capacity_line) +
           ": nodes.replay.params.capacity: "},
      // A newline in a value stays inside the one-line message.
      {{"up", "a\nb.yaml"},
       "tagflow up: a\\nb.yaml:0: (file): cannot open the cluster file: No such file or "
       "directory\n"},
      // ZeroMQ bound port 99999 as 34463; a negative start time was taken.
      {{"coordinator", "--config", path("short.yaml"), "--bind", "tcp://127.0.0.1:99999"},
       "tagflow coordinator: --bind: the port of tcp://127.0.0.1:99999 is not a number from 1 to "
       "65535 (or *)"},
      {{"coordinator", "--config", path("short.yaml"), "--bind", "127.0.0.1:7600"},
       "tagflow coordinator: --bind: an endpoint is tcp://ADDRESS:PORT, not 127.0.0.1:7600"},
      {{"coordinator", "--config", path("short.yaml"), "--start-time", "-1"},
       "tagflow coordinator: --start-time: Value -1 not in range 0 to "},
      // Keys a process reads and cannot: a bad argument, in either mode (it exited 1).
      {{"node", "--config", path("short.yaml"), "--name", "replay", "--run-keys", path("nokeys")},
       "tagflow node replay: cannot read key file " + path("nokeys") + "/"},
      {{"node", "--config", path("short.yaml"), "--name", "replay", "--mode", "actor", "--run-keys",
        path("nokeys")},
       "tagflow node replay: no actor-mode credential " + path("nokeys") + "/actor/"},
  };
  int n = 0;
  for (const auto& [args, says] : cases) {
    if (!TAGFLOW_HAS_TORCH && std::find(args.begin(), args.end(), "single") != args.end()) continue;
    const std::string tag = "bad" + std::to_string(n++);
    EXPECT_EQ(run(args, dir_, tag), 2) << args.back();
    const std::string err = read_text_file(dir_ / (tag + ".err"));
    EXPECT_NE(err.find(says), std::string::npos) << err;
  }
}

// `tagflow node --join` on a reactor-mode file says that --join needs actor mode, also for a
// name the file does not have (a joining sampler's usually is not), where it said "no process".
TEST_F(TagflowUp, JoinOnAReactorModeFileNamesActorMode) {
  write("short.yaml", shortened_local(base_port_, "env_steps: 800"));
  EXPECT_EQ(
      run({"node", "--config", path("short.yaml"), "--name", "sampler-2", "--join"}, dir_, "join"),
      2);
  const std::string err = read_text_file(dir_ / "join.err");
  EXPECT_NE(err.find("--join is for actor mode only: " + path("short.yaml") +
                     " runs in reactor mode (add --mode actor"),
            std::string::npos)
      << err;
}

// Only a sampler joins: --join with the name of another kind's process is refused before it
// starts (it ran, announcing it had joined).
TEST_F(TagflowUp, JoinStartsOnlyASampler) {
  write("short.yaml", shortened_local(base_port_, "env_steps: 800"));
  EXPECT_EQ(
      run({"node", "--config", path("short.yaml"), "--name", "replay", "--mode", "actor", "--join"},
          dir_, "join-replay"),
      2);
  const std::string err = read_text_file(dir_ / "join-replay.err");
  EXPECT_NE(err.find("--join starts a sampler (a replica of a transient kind): replay is a "
                     "replay of " +
                     path("short.yaml")),
            std::string::npos)
      << err;
}

// Ctrl-C (SIGINT) ends a one-process run at once with the launcher's status for an interrupt.
TEST_F(TagflowUp, ASinglePlacementRunInterruptedBySigintExits130) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "--placement single runs in tagflow-torch";
  write("long.yaml", shortened_local(base_port_, "env_steps: 100000000"));
  const Launched up =
      launch({"up", path("long.yaml"), "--placement", "single", "--quiet"}, dir_, "single");
  // Its first line comes once it handles the signal.
  ASSERT_TRUE(eventually(
      [&] { return read_text_file(up.err).find("placement single") != std::string::npos; }, 60s))
      << read_text_file(up.err);
  ::kill(up.pid, SIGINT);
  EXPECT_EQ(wait_exit(up.pid, 30s), 130) << read_text_file(up.err);
  EXPECT_NE(read_text_file(up.err).find("tagflow up: interrupted"), std::string::npos)
      << read_text_file(up.err);
}

TEST_F(TagflowUp, AnActorModeRunEndsWithTheSummaryOfItsProcesses) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  write("short.yaml", shortened_local(base_port_, "env_steps: 2400"));
  const fs::path logs = dir_ / "actor";
  ASSERT_EQ(run({"up", path("short.yaml"), "--mode", "actor", "--summary", path("actor.json"),
                 "--log-dir", logs.string(), "--quiet"},
                dir_, "actor"),
            0)
      << read_text_file(dir_ / "actor.err");
  const std::string err = read_text_file(dir_ / "actor.err");
  // Actor mode has no coordinator.
  EXPECT_NE(err.find("host local: sampler-0, sampler-1, replay, learner, inference\n"),
            std::string::npos)
      << err;
  const nlohmann::json summary = nlohmann::json::parse(read_text_file(dir_ / "actor.json"));
  EXPECT_EQ(summary.at("mode"), "actor");
  EXPECT_EQ(summary.at("placement"), "process");
  EXPECT_EQ(summary.at("stop_reason"), "env_steps");
  EXPECT_GT(summary.at("env_steps").get<std::int64_t>(), 0);
  EXPECT_EQ(summary.at("digest_reproducible"), false);
  EXPECT_EQ(read_text_file(logs / "summary.json"), read_text_file(dir_ / "actor.json"));
  for (const std::string process : {"sampler-0", "sampler-1", "replay", "learner", "inference"}) {
    EXPECT_TRUE(fs::exists(logs / (process + ".json"))) << process << " wrote no result";
  }
  const std::string out = read_text_file(dir_ / "actor.out");
  EXPECT_NE(out.find("(actor mode: not reproducible)"), std::string::npos) << out;
}

TEST_F(TagflowUp, TwoLaunchersPlayingHostsAAndBRunOneClusterTogether) {
  // The multi-host walk-through on one machine: the same file, `--host a` and `--host b` at once.
  // Actor mode: the summary of each host covers its own processes only.
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  write("split.yaml",
        shortened_local(base_port_, "env_steps: 2400",
                        "  a: {address: 127.0.0.1}\n  b: {address: 127.0.0.1}\n", "a", "b"));
  const Launched b = launch({"up", path("split.yaml"), "--mode", "actor", "--host", "b",
                             "--log-dir", path("logs-b"), "--quiet"},
                            dir_, "b");
  const Launched a = launch({"up", path("split.yaml"), "--mode", "actor", "--host", "a",
                             "--log-dir", path("logs-a"), "--quiet"},
                            dir_, "a");
  EXPECT_EQ(wait_exit(a.pid, 150s), 0) << read_text_file(a.err);
  EXPECT_EQ(wait_exit(b.pid, 150s), 0) << read_text_file(b.err);
  const std::string out_a = read_text_file(a.out);
  const std::string out_b = read_text_file(b.out);
  EXPECT_NE(out_a.find("this host ran 3 of 5 processes"), std::string::npos) << out_a;
  EXPECT_NE(out_b.find("this host ran 2 of 5 processes"), std::string::npos) << out_b;
  EXPECT_NE(out_b.find("  learner: "), std::string::npos) << out_b;
  for (const std::string process : {"sampler-0", "sampler-1", "inference"}) {
    EXPECT_TRUE(fs::exists(dir_ / "logs-a" / (process + ".json"))) << process;
    EXPECT_FALSE(fs::exists(dir_ / "logs-b" / (process + ".log"))) << process;
  }
  for (const std::string process : {"replay", "learner"}) {
    EXPECT_TRUE(fs::exists(dir_ / "logs-b" / (process + ".json"))) << process;
    EXPECT_FALSE(fs::exists(dir_ / "logs-a" / (process + ".log"))) << process;
  }
}

// Two hosts started from files that differ (here only in the seed) would run two clusters under
// one digest: the coordinator's START carries its file's digest, and a federate of the other
// file ends the run on both hosts, naming itself (federation/PROTOCOL.md §2.3).
TEST_F(TagflowUp, TwoLaunchersStartedFromDifferentFilesEndTheRunNamingAFederate) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  const std::string text =
      shortened_local(base_port_, "env_steps: 2400",
                      "  a: {address: 127.0.0.1}\n  b: {address: 127.0.0.1}\n", "a", "b");
  write("split.yaml", text);
  std::string other = text;
  testing::replace_once(other, "\nseed: ", "\nseed: 1", "split.yaml");
  write("split-a.yaml", other);
  const Launched b = launch(
      {"up", path("split.yaml"), "--host", "b", "--log-dir", path("logs-b"), "--quiet"}, dir_, "b");
  const Launched a =
      launch({"up", path("split-a.yaml"), "--host", "a", "--log-dir", path("logs-a"), "--quiet"},
             dir_, "a");
  EXPECT_EQ(wait_exit(a.pid, 150s), 1) << read_text_file(a.err);
  EXPECT_EQ(wait_exit(b.pid, 150s), 1) << read_text_file(b.err);
  const std::string err_b = read_text_file(b.err);
  EXPECT_NE(err_b.find("' failed: its cluster file (digest "), std::string::npos) << err_b;
  EXPECT_NE(err_b.find(") is not the coordinator's (digest "), std::string::npos) << err_b;
  EXPECT_NE(err_b.find("): run the same file on every host"), std::string::npos) << err_b;
  EXPECT_FALSE(fs::exists(dir_ / "logs-b" / "summary.json"));
}

TEST_F(TagflowUp, AKilledSamplerEndsTheRunWithAnErrorNamingItAndNoProcessLeft) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  write("long.yaml", shortened_local(base_port_, "env_steps: 100000000"));
  const fs::path logs = dir_ / "logs";
  const Launched up =
      launch({"up", path("long.yaml"), "--log-dir", logs.string(), "--quiet"}, dir_, "up");
  ASSERT_TRUE(eventually([&] { return recorded_pids(logs).size() == 6; }, 30s))
      << read_text_file(up.err);
  const auto pids = recorded_pids(logs);
  // Mid-run: sampler-1 (metrics on base + 5) has stepped its environments.
  const auto stepping = [&] {
    const ProbeResult probe = probe_metrics("127.0.0.1", static_cast<std::uint16_t>(base_port_ + 5),
                                            {"tagflow_env_steps_total"}, 200ms);
    return probe.answered && probe.values.count("tagflow_env_steps_total") == 1 &&
           probe.values.at("tagflow_env_steps_total") > 0;
  };
  ASSERT_TRUE(eventually(stepping, 60s)) << read_text_file(up.err);
  ASSERT_EQ(::kill(pids.at("sampler-1"), SIGKILL), 0);

  EXPECT_EQ(wait_exit(up.pid, 60s), 1);
  const std::string err = read_text_file(up.err);
  EXPECT_NE(err.find("tagflow up: node sampler-1 failed (killed by signal 9)"), std::string::npos)
      << err;
  for (const auto& [name, pid] : pids) EXPECT_FALSE(alive(pid)) << name << " outlived the run";
}

// docs/ARCHITECTURE.md, Trust: a file that names no keys still runs closed. A squatter here that
// sends the replay's very JOIN (its id, upstreams and data endpoint, from the same file) over and
// over from before the launcher starts never gets an answer, and the run ends as usual.
TEST_F(TagflowUp, AProcessTheLauncherDidNotStartCannotJoinEvenIfItJoinsFirst) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  write("short.yaml", shortened_local(base_port_, "env_steps: 2400"));
  const coordinator::FederationSpec spec =
      cluster::federation_spec(cluster::load_cluster_config(path("short.yaml")));
  ASSERT_FALSE(spec.keys_dir.has_value());  // the file itself names no keys
  std::atomic<bool> stop{false};
  std::atomic<int> tries{0};
  std::atomic<int> answered{0};
  std::thread squatter([&] {
    zmq::context_t context;
    while (!stop.load()) {
      try {
        coordinator::FederateOptions options =
            coordinator::FederateOptions::from_spec(spec, "replay");
        coordinator::FederateClient client(context, options);
        ++tries;
        (void)client.join(300ms);
        ++answered;  // START: it took the replay's place
      } catch (const std::exception&) {
        // No answer within the wait (or refused): try again.
      }
    }
  });
  std::this_thread::sleep_for(500ms);  // its first JOINs go out before the launcher starts
  const int code = run({"up", path("short.yaml"), "--summary", path("closed.json"), "--log-dir",
                        path("run"), "--quiet"},
                       dir_, "closed");
  stop = true;
  squatter.join();
  EXPECT_EQ(code, 0) << read_text_file(dir_ / "closed.err");
  EXPECT_GT(tries.load(), 2);
  EXPECT_EQ(answered.load(), 0);
  const std::string err = read_text_file(dir_ / "closed.err");
  EXPECT_NE(err.find("closed cluster: CURVE keys minted for this run in"), std::string::npos)
      << err;
  const fs::path keys = dir_ / "run" / "keys";
  EXPECT_EQ(fs::status(keys).permissions(), fs::perms::owner_all);
  EXPECT_EQ(fs::status(keys / "replay.key").permissions(),
            fs::perms::owner_read | fs::perms::owner_write);
  const nlohmann::json summary = nlohmann::json::parse(read_text_file(dir_ / "closed.json"));
  EXPECT_EQ(summary.at("env_steps"), 2400);
  EXPECT_EQ(summary.at("digest").get<std::string>().size(), 16U);
  EXPECT_EQ(summary.at("security"), "per-run keys");
  EXPECT_NE(read_text_file(dir_ / "closed.out").find("security per-run keys"), std::string::npos);
}

// `security: none` leaves the cluster open, and says so.
TEST_F(TagflowUp, SecurityNoneRunsOpenAndSaysSo) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference processes need tagflow-torch";
  std::string text = shortened_local(base_port_, "env_steps: 600");
  const std::string closed = "security:\n  curve: false\n";
  ASSERT_NE(text.find(closed), std::string::npos);
  text.replace(text.find(closed), closed.size(), "security: none\n");
  write("open.yaml", text);
  EXPECT_EQ(run({"up", path("open.yaml"), "--log-dir", path("run"), "--quiet"}, dir_, "open"), 0)
      << read_text_file(dir_ / "open.err");
  const std::string err = read_text_file(dir_ / "open.err");
  EXPECT_NE(err.find("security: none: any local process may join"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "run" / "keys"));
  EXPECT_EQ(nlohmann::json::parse(read_text_file(dir_ / "run" / "summary.json")).at("security"),
            "none");
  EXPECT_NE(read_text_file(dir_ / "open.out").find("security none"), std::string::npos);
}

}  // namespace
}  // namespace tagflow::cli
