// Tests of cli/doctor.hpp: the port scan of a cluster file, the verdict, and the real doctor
// run against this machine (which scripts/setup prepared: OpenBLAS and CURVE must be found).
#include "cli/doctor.hpp"
#include "cli/doctor_checks.hpp"

#include <filesystem>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "common/numerics.hpp"
#include "tests/support/run_command.hpp"

namespace tagflow::cli {
namespace {

using testing::run_command;
using testing::tagflow_binary;

std::string write_temp_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

/// 127.0.0.1:`port` (0: a port the kernel chooses at bind), or another IPv4 `host` (host order).
sockaddr_in loopback(std::uint16_t port, std::uint32_t host = INADDR_LOOPBACK) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(host);
  return address;
}

/// A listening TCP socket on 127.0.0.1 (or `host`) at a kernel-chosen port; closed on destruction.
/// `reuse_address`: bound with SO_REUSEADDR, as ZeroMQ and the metrics server bind theirs.
class Listener {
 public:
  explicit Listener(bool reuse_address = false, std::uint32_t host = INADDR_LOOPBACK)
      : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    if (reuse_address) {
      const int on = 1;
      EXPECT_EQ(::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on), 0);
    }
    sockaddr_in address = loopback(0, host);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(::listen(fd_, 1), 0);
    socklen_t length = sizeof(address);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~Listener() { ::close(fd_); }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  std::uint16_t port() const { return port_; }
  int fd() const { return fd_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

TEST(DoctorPorts, CollectsPortKeysAndTcpEndpointsWithTheirPlace) {
  const std::string path = write_temp_file("ports.yaml",
                                           "coordinator:\n"
                                           "  address: tcp://127.0.0.1:7600\n"
                                           "  metrics_port: 9460\n"
                                           "nodes:\n"
                                           "  - {name: a, port: 7001}\n"
                                           "  - {name: b, data_port: 7002, note: tcp-ish}\n");
  const std::vector<ConfiguredPort> ports = collect_config_ports(path);
  ASSERT_EQ(ports.size(), 4U);
  EXPECT_EQ(ports[0].where, "coordinator.address");
  EXPECT_EQ(ports[0].port, 7600);
  EXPECT_EQ(ports[1].where, "coordinator.metrics_port");
  EXPECT_EQ(ports[2].where, "nodes[0].port");
  EXPECT_EQ(ports[3].where, "nodes[1].data_port");
  EXPECT_EQ(ports[3].port, 7002);
}

TEST(DoctorPorts, ListsThePortOfEveryReplicaOfAGroup) {
  const std::string path = write_temp_file("replica_ports.yaml",
                                           "nodes:\n"
                                           "  sampler:\n"
                                           "    replicas: 2\n"
                                           "    data_port: 7610\n"
                                           "    params: {gateway_port: 7830}\n"
                                           "  replay: {data_port: 7620}\n");
  const std::vector<ConfiguredPort> ports = collect_config_ports(path);
  ASSERT_EQ(ports.size(), 5U);
  EXPECT_EQ(ports[0].where, "nodes.sampler.data_port");
  EXPECT_EQ(ports[0].port, 7610);
  EXPECT_EQ(ports[1].where, "nodes.sampler.data_port + 1");
  EXPECT_EQ(ports[1].port, 7611);
  EXPECT_EQ(ports[2].where, "nodes.sampler.params.gateway_port");
  EXPECT_EQ(ports[3].where, "nodes.sampler.params.gateway_port + 1");
  EXPECT_EQ(ports[3].port, 7831);
  EXPECT_EQ(ports[4].where, "nodes.replay.data_port");
  EXPECT_EQ(ports[4].port, 7620);
}

TEST(DoctorPorts, ReadsMergedPortsOnceAndLeavesTopLevelXKeysUnread) {
  const std::string path = write_temp_file("merged_ports.yaml",
                                           "x-ports: &ports {data_port: 7640}\n"
                                           "nodes:\n"
                                           "  replay: {<<: *ports}\n");
  const std::vector<ConfiguredPort> ports = collect_config_ports(path);
  ASSERT_EQ(ports.size(), 1U);
  EXPECT_EQ(ports[0].where, "nodes.replay.data_port");
  EXPECT_EQ(ports[0].port, 7640);
}

TEST(DoctorPorts, RejectsAnOutOfRangePortNamingFileLineAndKey) {
  const std::string path =
      write_temp_file("bad_port.yaml", "coordinator:\n  metrics_port: 70000\n");
  try {
    collect_config_ports(path);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path + ":2:"), std::string::npos) << message;
    EXPECT_NE(message.find("coordinator.metrics_port"), std::string::npos) << message;
  }
}

TEST(DoctorPorts, ReportsAYamlSyntaxErrorWithItsLine) {
  const std::string path = write_temp_file("broken.yaml", "a: 1\nb: [unclosed\n");
  EXPECT_THROW(collect_config_ports(path), std::runtime_error);
}

TEST(DoctorPorts, SeesAPortThatSomethingListensOnAsTaken) {
  Listener listener;
  EXPECT_FALSE(tcp_port_is_free("127.0.0.1", listener.port()));
}

// A run's last connections leave its ports in TIME_WAIT, which does not keep the next run from
// binding them (ZeroMQ and the metrics server bind with SO_REUSEADDR): the doctor calls them free.
TEST(DoctorPorts, SeesAPortWhoseConnectionWaitsInTimeWaitAsFree) {
  std::uint16_t port = 0;
  {
    Listener listener(true);
    port = listener.port();
    const int client = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = loopback(port);
    ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    const int accepted = ::accept(listener.fd(), nullptr, nullptr);
    ASSERT_GE(accepted, 0);
    ::close(accepted);  // the listening side closes first: its end waits in TIME_WAIT
    char byte = 0;
    (void)::recv(client, &byte, 1, 0);  // the server's FIN
    ::close(client);
  }
  // Without SO_REUSEADDR the port is still in use while the connection waits.
  const int plain = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = loopback(port);
  EXPECT_NE(::bind(plain, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ::close(plain);
  EXPECT_TRUE(tcp_port_is_free("127.0.0.1", port));
}

TEST(DoctorVerdict, FailsOnlyOnARequiredFailure) {
  std::vector<Check> checks = {{"a", CheckStatus::ok, "", true},
                               {"b", CheckStatus::warn, "", true},
                               {"c", CheckStatus::fail, "", false}};
  EXPECT_TRUE(doctor_passed(checks));
  checks.push_back({"d", CheckStatus::fail, "", true});
  EXPECT_FALSE(doctor_passed(checks));
}

TEST(DoctorCommand, FindsOpenBlasAndCurveOnThisMachine) {
  const auto result = run_command(tagflow_binary() + " doctor --json");
  // Without tagflow-torch (asan and tsan presets) the LibTorch check fails, and so does doctor.
  ASSERT_EQ(result.exit_code, TAGFLOW_HAS_TORCH ? 0 : 1) << result.output;
  const nlohmann::json report = nlohmann::json::parse(result.output);
  EXPECT_EQ(report["passed"].get<bool>(), static_cast<bool>(TAGFLOW_HAS_TORCH));
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& check : report["checks"]) by_name[check["name"]] = check;
  std::vector<std::string> required = {"CAF", "ZeroMQ", "MessagePack", "prometheus-cpp"};
  if (TAGFLOW_HAS_TORCH) {
    required.insert(required.end(), {"LibTorch", "BLAS"});
  } else {
    EXPECT_EQ(by_name["LibTorch"]["status"], "fail");
  }
  for (const std::string& name : required) {
    ASSERT_TRUE(by_name.count(name)) << name;
    EXPECT_EQ(by_name[name]["status"], "ok") << name << ": " << by_name[name]["detail"];
  }
  EXPECT_NE(by_name["ZeroMQ"]["detail"].get<std::string>().find("CURVE available"),
            std::string::npos);
  if (TAGFLOW_HAS_TORCH) {
    EXPECT_NE(by_name["BLAS"]["detail"].get<std::string>().find("openblas"), std::string::npos);
    // The probe ran pinned (common/numerics.hpp): portable on an x86-64-v3 CPU, named otherwise.
    ASSERT_TRUE(by_name.count("numerics"));
    const std::string kernels = by_name["numerics"]["detail"].get<std::string>();
    if (numerics::this_cpu().x86_64_v3) {
      EXPECT_EQ(by_name["numerics"]["status"], "ok") << kernels;
      EXPECT_NE(kernels.find("OpenBLAS Haswell, ATen avx2, plain libm"), std::string::npos)
          << kernels;
    } else {
      EXPECT_EQ(by_name["numerics"]["status"], "warn") << kernels;
    }
  }
}

// The huge pages the processes' heaps ask for (cli/process_defaults.hpp): the kernel's mode, a
// warning (never a failure) when it offers none.
TEST(DoctorCommand, SaysWhetherTheKernelOffersTransparentHugePages) {
  EXPECT_EQ(huge_page_mode("always [madvise] never\n"), "madvise");
  EXPECT_EQ(huge_page_mode("[always] madvise never"), "always");
  EXPECT_EQ(huge_page_mode("always madvise [never]"), "never");
  EXPECT_EQ(huge_page_mode(""), "");
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(in, text);
  const std::string mode = huge_page_mode(text);
  const auto result = run_command(tagflow_binary() + " doctor --json");
  const nlohmann::json report = nlohmann::json::parse(result.output);
  bool found = false;
  for (const auto& check : report["checks"]) {
    if (check["name"] != "huge pages") continue;
    found = true;
    EXPECT_FALSE(check["required"].get<bool>());
    const std::string detail = check["detail"].get<std::string>();
    EXPECT_EQ(check["status"], mode == "always" || mode == "madvise" ? "ok" : "warn") << detail;
    if (!mode.empty()) {
      EXPECT_NE(detail.find(mode), std::string::npos) << detail;
    }
  }
  EXPECT_TRUE(found) << result.output;
}

TEST(DoctorCommand, ReportsATakenPortFromTheGivenConfig) {
  Listener listener;
  const std::string path = write_temp_file(
      "taken.yaml",
      "coordinator:\n  address: tcp://127.0.0.1:" + std::to_string(listener.port()) + "\n");
  const auto result = run_command(tagflow_binary() + " doctor --json --config " + path);
  // A taken port warns; it is not a missing piece.
  ASSERT_EQ(result.exit_code, TAGFLOW_HAS_TORCH ? 0 : 1) << result.output;
  const nlohmann::json report = nlohmann::json::parse(result.output);
  bool found = false;
  for (const auto& check : report["checks"]) {
    if (check["name"] == "port " + std::to_string(listener.port())) {
      found = true;
      EXPECT_EQ(check["status"], "warn");
      EXPECT_NE(check["detail"].get<std::string>().find("TAKEN"), std::string::npos);
    }
  }
  EXPECT_TRUE(found) << result.output;
}

// A port that an outgoing connection holds (the kernel picked it from its range for those) takes
// a listener's place too, but nothing listens there: the doctor says so, and names the range.
TEST(DoctorCommand, APortAConnectionHoldsIsNamedAsNoListeners) {
  Listener listener;
  const int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(client, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(listener.port()));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  sockaddr_in mine{};
  socklen_t size = sizeof mine;
  ASSERT_EQ(::getsockname(client, reinterpret_cast<sockaddr*>(&mine), &size), 0);
  const int port = ntohs(mine.sin_port);
  const std::string path = write_temp_file(
      "held.yaml", "coordinator:\n  address: tcp://127.0.0.1:" + std::to_string(port) + "\n");
  const auto result = run_command(tagflow_binary() + " doctor --json --config " + path);
  ::close(client);
  const nlohmann::json report = nlohmann::json::parse(result.output);
  std::string detail;
  for (const auto& check : report["checks"]) {
    if (check["name"] == "port " + std::to_string(port)) detail = check["detail"];
  }
  EXPECT_EQ(detail.rfind("TAKEN on 127.0.0.1: no program listens there: a socket of this machine "
                         "that is no listener holds the port",
                         0),
            0u)
      << result.output;
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0, high = 0;
  ASSERT_TRUE(range >> low >> high);
  EXPECT_NE(detail.find("ports " + std::to_string(low) + "-" + std::to_string(high) +
                        " are those the kernel gives outgoing connections"),
            std::string::npos)
      << detail;
  // A listener is still "another program".
  const std::string listened = write_temp_file(
      "listened.yaml",
      "coordinator:\n  address: tcp://127.0.0.1:" + std::to_string(listener.port()) + "\n");
  EXPECT_NE(run_command(tagflow_binary() + " doctor --config " + listened)
                .output.find("TAKEN on 127.0.0.1: another program listens there"),
            std::string::npos);
}

/// configs/local.yaml with its first `from` replaced by `to`, written as a temporary NAME; `line`
/// gets the replaced text's line (0 when `from` is not there).
std::string local_demo_with(const std::string& name, const std::string& from, const std::string& to,
                            long& line) {
  std::ifstream in(std::string(TAGFLOW_SOURCE_DIR) + "/configs/local.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const std::size_t at = yaml.find(from);
  line = 0;
  if (at == std::string::npos) return "";
  line = 1 + std::count(yaml.begin(), yaml.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  return write_temp_file(name, yaml.replace(at, from.size(), to));
}

// A cluster file's ports are checked where its processes will listen, as `tagflow up` checks them
// before it starts anything: here the file's host is 127.0.0.2, and a port another program holds
// there (free at 127.0.0.1, where the doctor used to look) is TAKEN, named by key and line.
TEST(DoctorPorts, ChecksAClusterFilesPortsAtTheAddressItsProcessesListenOn) {
  const Listener listener(false, (127U << 24) | 2U);  // 127.0.0.2
  ASSERT_NE(listener.port(), 0);
  ASSERT_TRUE(tcp_port_is_free("127.0.0.1", listener.port()));
  long host_line = 0, port_line = 0;
  std::string path = local_demo_with("host_address.yaml", "local: {address: 127.0.0.1}",
                                     "local: {address: 127.0.0.2}", host_line);
  ASSERT_GT(host_line, 0);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const std::string replay_port = "    data_port: 7620";
  const std::size_t at = yaml.find(replay_port);
  ASSERT_NE(at, std::string::npos);
  port_line = 1 + std::count(yaml.begin(), yaml.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  path = write_temp_file(
      "host_address.yaml",
      yaml.replace(at, replay_port.size(), "    data_port: " + std::to_string(listener.port())));
  const std::vector<Check> checks = check_ports(path);
  bool found = false;
  for (const Check& check : checks) {
    EXPECT_NE(check.status, CheckStatus::fail) << check.name << ": " << check.detail;
    if (check.name != "port " + std::to_string(listener.port())) continue;
    found = true;
    EXPECT_EQ(check.status, CheckStatus::warn);
    EXPECT_NE(check.detail.find("TAKEN on 127.0.0.2"), std::string::npos) << check.detail;
    EXPECT_NE(
        check.detail.find("nodes.replay.data_port in " + path + ":" + std::to_string(port_line)),
        std::string::npos)
        << check.detail;
  }
  EXPECT_TRUE(found);
}

// In actor mode the replay, learner and inference are published on their data ports and the
// samplers dial (hosts/actor/actor_process.hpp): those three data ports are checked, the
// samplers' are not, and no coordinator port (actor mode runs without one).
TEST(DoctorPorts, AnActorModeFileHasThePublishedReplicasDataPorts) {
  long line = 0;
  const std::string path =
      local_demo_with("actor_ports.yaml", "mode: reactor", "mode: actor", line);
  ASSERT_GT(line, 0);
  std::set<std::string> keys;
  for (const Check& check : check_ports(path)) {
    const std::size_t at = check.detail.find("(nodes.");
    if (at != std::string::npos)
      keys.insert(check.detail.substr(at + 1, check.detail.find(' ', at) - at - 1));
    EXPECT_EQ(check.detail.find("coordinator."), std::string::npos) << check.detail;
  }
  for (const char* key : {"nodes.replay.data_port", "nodes.learner.data_port",
                          "nodes.inference.data_port", "nodes.sampler.metrics_port"}) {
    EXPECT_EQ(keys.count(key), 1U) << key;
  }
  EXPECT_EQ(keys.count("nodes.sampler.data_port"), 0U);
}

// `--host NAME` plays one host of the file, as `tagflow up --host` does; a name the file lacks is
// a failed check naming the file's hosts.
TEST(DoctorPorts, AHostTheFileLacksIsAFailedCheck) {
  const std::string path = std::string(TAGFLOW_SOURCE_DIR) + "/configs/two-host.yaml";
  const std::vector<Check> checks = check_ports(path, "c");
  ASSERT_EQ(checks.size(), 1U);
  EXPECT_EQ(checks[0].name, "hosts");
  EXPECT_EQ(checks[0].status, CheckStatus::fail);
  EXPECT_NE(checks[0].detail.find("no host 'c' (hosts: a, b)"), std::string::npos)
      << checks[0].detail;
}

// A cluster file that `tagflow up` would refuse is a failed check naming its line and key, not a
// list of ports read from keys nothing takes.
TEST(DoctorCommand, RefusesAClusterFileThatUpWouldRefuseAtItsLineAndKey) {
  long line = 0;
  const std::string path =
      local_demo_with("unknown_key.yaml", "    replicas: 2", "    replicaz: 2", line);
  ASSERT_GT(line, 0);
  const auto result = run_command(tagflow_binary() + " doctor --json --config " + path);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  const nlohmann::json report = nlohmann::json::parse(result.output);
  bool found = false;
  for (const auto& check : report["checks"]) {
    if (check["name"] != "cluster file") continue;
    found = true;
    EXPECT_EQ(check["status"], "fail");
    EXPECT_NE(check["detail"].get<std::string>().find(path + ":" + std::to_string(line) +
                                                      ": nodes.sampler.replicaz: unknown key"),
              std::string::npos)
        << check["detail"];
  }
  EXPECT_TRUE(found) << result.output;
}

// What no file of ports can be is refused as `tagflow up` refuses it: a directory, an empty file,
// a NUL byte. Before, the doctor passed the first two (no ports found) and put yaml-cpp's words on
// the third.
TEST(DoctorPorts, RefusesADirectoryAnEmptyFileANulByteAndNoFileAsUpDoes) {
  const auto refusal = [](const std::string& path) {
    const std::vector<Check> checks = check_ports(path);
    if (checks.size() != 1 || checks[0].name != "cluster file" ||
        checks[0].status != CheckStatus::fail) {
      return std::string("(no refusal)");
    }
    return checks[0].detail;
  };
  const std::string directory = ::testing::TempDir() + "a_directory.yaml";
  std::filesystem::create_directories(directory);
  EXPECT_EQ(refusal(directory), directory + ":0: (file): a directory, not a cluster file");
  const std::string empty = write_temp_file("empty.yaml", "# nothing here\n");
  EXPECT_NE(refusal(empty).find(empty + ":0: (file): empty:"), std::string::npos) << refusal(empty);
  const std::string nul = write_temp_file("nul.yaml", std::string("a: 1\nb: \"x\0y\"\n", 14));
  EXPECT_EQ(refusal(nul), nul + ":2: (file): a NUL byte (the file is not text)");
  const std::string missing = ::testing::TempDir() + "no_such_cluster.yaml";
  EXPECT_EQ(refusal(missing),
            missing + ":0: (file): cannot open the cluster file: No such file or directory");
}

// `tagflow monitoring prometheus-config` loads a file as `tagflow up` does, node params included:
// it wrote a scrape config for a file whose replay could never start.
TEST(MonitoringCommand, PrometheusConfigRefusesABadNodeParamAtItsLine) {
  long line = 0;
  const std::string path =
      local_demo_with("bad_param.yaml", "capacity: 50000", "capacity: -5", line);
  ASSERT_GT(line, 0);
  const auto result =
      run_command(tagflow_binary() + " monitoring prometheus-config " + path + " 2>&1");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find(path + ":" + std::to_string(line) +
                               ": nodes.replay.params.capacity: node 'replay'"),
            std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("scrape_configs"), std::string::npos) << result.output;
}

// A Slurm host's targets are its nodes only with their addresses (TAGFLOW_NODE_ADDRESSES); without
// them the config named the host, which Prometheus cannot reach, and said nothing.
TEST(MonitoringCommand, PrometheusConfigOfASlurmFileWithoutNodeAddressesSaysSo) {
  const std::string file = std::string(TAGFLOW_SOURCE_DIR) + "/configs/slurm.yaml";
  const auto bare =
      run_command("env -u TAGFLOW_NODE_ADDRESSES -u TAGFLOW_SLURM_ADDRESSES " + tagflow_binary() +
                  " monitoring prometheus-config " + file + " 2>&1 >/dev/null");
  EXPECT_EQ(bare.exit_code, 0) << bare.output;
  EXPECT_NE(bare.output.find("note: host learn's targets name the host itself, not its nodes: "
                             "give their addresses in TAGFLOW_NODE_ADDRESSES"),
            std::string::npos)
      << bare.output;
  const auto given =
      run_command("TAGFLOW_NODE_ADDRESSES='learn=10.0.0.1;act=10.0.0.2' " + tagflow_binary() +
                  " monitoring prometheus-config " + file + " 2>&1");
  EXPECT_EQ(given.exit_code, 0) << given.output;
  EXPECT_EQ(given.output.find("note:"), std::string::npos) << given.output;
  EXPECT_NE(given.output.find("10.0.0.2:"), std::string::npos) << given.output;
  // A value not of the form, or naming a host the file lacks, is refused (it was read as unset).
  for (const auto& [value, why] : std::vector<std::pair<std::string, std::string>>{
           {"garbage", "has 'garbage', which is no HOST=ADDR"},
           {"learn=10.0.0.1;cat=10.0.0.2", "names host 'cat', which the file does not have"},
           {"learn=", "gives host 'learn' no address"}}) {
    const auto refused = run_command("TAGFLOW_NODE_ADDRESSES='" + value + "' " + tagflow_binary() +
                                     " monitoring prometheus-config " + file + " 2>&1");
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_NE(refused.output.find("hosts: TAGFLOW_NODE_ADDRESSES='" + value + "' " + why),
              std::string::npos)
        << refused.output;
  }
}

TEST(DoctorCommand, ExitsNonZeroWhenLibTorchCannotRun) {
  const auto result =
      run_command("TAGFLOW_TORCH=/nonexistent/tagflow-torch " + tagflow_binary() + " doctor");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("FAIL"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("LibTorch"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace tagflow::cli
