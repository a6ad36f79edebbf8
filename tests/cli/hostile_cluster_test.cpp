// The attacks of issue "hostile peers and bad input" replayed against a live cluster started by
// `tagflow up` (a shortened configs/local.yaml, one process per replica), in both modes. This test
// process is the attacker: a local process the launcher did not start, on the same loopback.
//
// Reactor mode, `security: none` (the open case: anyone can speak ZMTP to every port):
//   - a multipart message without end, then a second connection under the replay's routing id,
//     at the learner's data port (cut by the connection guard, counted);
//   - eight connections at once at the replay's data port, each one message without end under a
//     connection's cap, together far over the process's 64 MiB budget (cut, counted);
//   - a multipart message without end at the coordinator (cut, counted);
//   - garbage frames at every data port and at the coordinator;
//   - 5,000 JOINs whose id forges a coordinator log line;
//   - six idle connections and one trickling a byte at a time to the learner's metrics endpoint
//     while it is scraped.
// Then: the run reaches its stop (env_steps) with the digest of the same file run quietly in one
// process (the placements give one digest), every node's peak RSS grew by less
// than kGrowthBound while under attack (the attacks offered 1 GiB and more), the drops are in the
// learner's and the coordinator's metrics, the log holds no forged line and stays small, and no
// process is left.
//
// Actor mode, closed (per-run TLS certificates): an outside CAF client without the run's
// certificates (plain, and with a certificate of another CA) cannot reach any published node, so
// its StopRun never arrives; a forged BASP handshake claiming a 512 MiB payload, followed by
// 64 MiB, makes no node allocate (each node's peak RSS grows by less than kGrowthBound). Every
// refused handshake is counted in the process's metrics and the first one logged once. The run
// reaches its stop normally, no process is left. With `security: none` the same outside client does
// reach the replay and its StopRun ends the run: what the certificates prevent.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "actors/actor_credentials.hpp"
#include "actors/actor_system_setup.hpp"
#include "actors/control_messages.hpp"
#include "actors/message_types.hpp"
#include "cli/launch/metrics_probe.hpp"
#include "federation/control_message.hpp"
#include "tests/support/cluster_files.hpp"
#include "tests/support/launched_processes.hpp"
#include "tests/support/raw_zmtp_peer.hpp"

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

/// What a node's peak RSS may grow by while it is under attack: the 64 MiB a process may hold of
/// bytes not yet validated in reactor mode (transport/WIRE.md §3.1), and 96 MiB for what arrives
/// while the guard's thread waits for a core (two cores, seven processes and eight attacking
/// connections), the frames ZeroMQ allocates whole before they arrive, what the allocator keeps
/// after a cut, and the node's own work meanwhile: the replay grew by 91-121 MiB in six runs. The
/// attacks offer far more: 1 GiB of one endless message, 512 MiB under a stolen routing id,
/// 192 MiB over eight connections, 512 MiB at the coordinator, a 512 MiB BASP claim.
constexpr std::uint64_t kGrowthBound = std::uint64_t{160} << 20;

/// VmHWM (peak resident set) of `pid` in bytes, or nullopt once it is gone.
std::optional<std::uint64_t> peak_rss(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return std::nullopt;
}

/// A TCP connection to 127.0.0.1:port (-1 when refused).
int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {  // NOLINT
    ::close(fd);
    return -1;
  }
  return fd;
}

/// Sends the 32-byte BASP header of a client handshake that claims a `claim`-byte payload, then
/// up to `follow` bytes; the bytes the peer took before it closed the connection.
std::uint64_t forge_basp_claim(int port, std::uint32_t claim, std::uint64_t follow) {
  const int fd = connect_loopback(port);
  if (fd < 0) return 0;
  unsigned char header[32] = {};
  header[0] = 0x01;  // client_handshake
  for (int i = 0; i < 4; ++i) header[4 + i] = static_cast<unsigned char>(claim >> (24 - 8 * i));
  header[15] = 3;  // operation_data: BASP version 3 (CAF 0.17)
  std::uint64_t sent = 0;
  if (::send(fd, header, sizeof header, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof header)) {
    sent = sizeof header;
    const std::string chunk(std::size_t{1} << 20, 'x');
    while (sent < follow) {
      const ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<std::uint64_t>(n);
    }
  }
  ::close(fd);
  return sent;
}

/// The launcher's children and the largest VmHWM seen of each, polled every 50 ms.
class PeakWatch {
 public:
  explicit PeakWatch(fs::path log_dir) : log_dir_(std::move(log_dir)) {
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        poll();
        std::this_thread::sleep_for(50ms);
      }
    });
  }
  ~PeakWatch() {
    stop_.store(true);
    thread_.join();
  }
  PeakWatch(const PeakWatch&) = delete;
  PeakWatch& operator=(const PeakWatch&) = delete;

  /// Reads every child now; the peaks so far by name.
  std::map<std::string, std::uint64_t> peaks() {
    poll();
    const std::lock_guard<std::mutex> lock(mutex_);
    return peaks_;
  }
  std::map<std::string, pid_t> pids() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return pids_;
  }

 private:
  void poll() {
    const std::map<std::string, pid_t> pids = testing::recorded_pids(log_dir_);
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [name, pid] : pids) {
      pids_[name] = pid;
      if (const auto peak = peak_rss(pid)) peaks_[name] = std::max(peaks_[name], *peak);
    }
  }

  fs::path log_dir_;
  std::mutex mutex_;
  std::map<std::string, pid_t> pids_;
  std::map<std::string, std::uint64_t> peaks_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class HostileCluster : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const pid_t pid : unreaped_) (void)testing::wait_exit(pid, 0s);  // killed if still running
    testing::remove_unless_failed(dir_);
  }
  void SetUp() override {
    if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference need tagflow-torch";
    dir_ = fs::path(::testing::TempDir()) /
           ("hostile_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    base_ = testing::free_local_cluster_ports();
    ASSERT_GT(base_, 0) << "no free port range";
  }

  /// configs/local.yaml on this test's ports, in `mode`, stopping after `env_steps`, with
  /// `security: none` when `open`.
  fs::path write_cluster(const std::string& name, const std::string& mode, int env_steps,
                         bool open) {
    testing::LocalClusterOptions options;
    options.stop = "env_steps: " + std::to_string(env_steps);
    options.mode = mode;
    options.port = testing::local_cluster_ports_from(base_);
    std::string text = testing::local_cluster_yaml(options);
    if (open) {
      const std::string closed = "security:\n  curve: false\n";
      EXPECT_NE(text.find(closed), std::string::npos);
      text.replace(text.find(closed), closed.size(), "security: none\n");
    }
    const fs::path file = dir_ / (name + ".yaml");
    std::ofstream(file) << text;
    return file;
  }

  /// Starts `tagflow up FILE` logging into DIR/NAME (`single`: in one process, which writes no
  /// logs); its pid.
  pid_t start(const fs::path& file, const std::string& name, bool single = false) {
    std::vector<std::string> argv{
        std::string(TAGFLOW_BIN_DIR) + "/tagflow", "up",     file.string(), "--summary",
        (dir_ / (name + ".json")).string(),        "--quiet"};
    const std::vector<std::string> placement =
        single ? std::vector<std::string>{"--placement", "single"}
               : std::vector<std::string>{"--log-dir", (dir_ / name).string()};
    argv.insert(argv.end(), placement.begin(), placement.end());
    return testing::spawn_with_output(argv, dir_ / (name + ".out"), dir_ / (name + ".err"));
  }

  /// True once the samplers step (every process joined and runs).
  bool running() const {
    const ProbeResult probe =
        probe_metrics("127.0.0.1", port(4), {"tagflow_env_steps_total"}, 2000ms);
    const auto steps = probe.values.find("tagflow_env_steps_total");
    return probe.answered && steps != probe.values.end() && steps->second > 0;
  }

  /// Every process the actor-mode attacks aim at is up and working (replay inserted, learner
  /// updated, inference answered), so its port is published: a sampler stepping proves only that
  /// the samplers and the inference server are, and on a loaded machine the learner may still be
  /// loading LibTorch, its port closed, when the first attack comes.
  bool attacked_processes_work() const {
    const auto counted = [&](int metrics_offset, const std::string& family) {
      const ProbeResult probe = probe_metrics("127.0.0.1", port(metrics_offset), {family}, 2000ms);
      const auto value = probe.values.find(family);
      return probe.answered && value != probe.values.end() && value->second > 0;
    };
    return counted(7, "tagflow_replay_transitions_inserted_total") &&
           counted(9, "tagflow_learner_updates_total") &&
           counted(11, "tagflow_inference_requests_total");
  }

  nlohmann::json summary(const std::string& name) const {
    return nlohmann::json::parse(testing::read_text_file(dir_ / (name + ".json")));
  }

  /// base + offset as a port (local_cluster_ports_from(): 0 coordinator, 6 replay, 8 learner, ...).
  std::uint16_t port(int offset) const { return static_cast<std::uint16_t>(base_ + offset); }

  /// Every child the launcher recorded has ended (the launcher recorded some).
  static void expect_none_left(PeakWatch& watch) {
    EXPECT_FALSE(watch.pids().empty()) << "no process of the run was recorded";
    for (const auto& [name, pid] : watch.pids()) {
      EXPECT_FALSE(testing::alive(pid)) << name << " outlived the run";
    }
  }

  /// Each node grew by less than kGrowthBound between `before` and `after`; the attacked ones
  /// (the replay, the learner and the inference server, each a process of its own) among them.
  static void expect_bounded(const std::map<std::string, std::uint64_t>& before,
                             const std::map<std::string, std::uint64_t>& after) {
    for (const std::string attacked : {"replay", "learner", "inference"}) {
      EXPECT_EQ(after.count(attacked), 1U) << attacked << "'s peak was never read";
    }
    for (const auto& [name, peak] : after) {
      const auto was = before.find(name);
      ASSERT_NE(was, before.end()) << name;
      std::cout << name << ": peak RSS " << (was->second >> 20) << " MiB before the attacks, "
                << (peak >> 20) << " MiB after\n";
      EXPECT_LT(peak - was->second, kGrowthBound) << name;
    }
  }

  fs::path dir_;
  int base_ = 0;
  std::vector<pid_t> unreaped_;  // children a test that ended early did not wait for
};

/// Sum of `family` samples whose label `label` is `value`, in the metrics of 127.0.0.1:port.
double scraped(std::uint16_t port, const std::string& family, const std::string& label,
               const std::string& value) {
  const std::optional<std::string> text = http_get("127.0.0.1", port, "/metrics", 5000ms);
  if (!text) return -1;
  const std::map<std::string, double> by = parse_label_values(*text, family, label);
  const auto it = by.find(value);
  return it == by.end() ? 0 : it->second;
}

// --- reactor mode -------------------------------------------------------------------------------

/// What the attacked processes counted (-1: not read).
struct ReactorAttackCounts {
  double refused_joins = -1;    // the coordinator's, once it reached 5,000 (or after 20 s)
  double learner_cuts = -1;     // the learner's guard, for any of its three reasons
  double over_budget = -1;      // the replay's guard: over_process_budget
  double coordinator_cut = -1;  // the coordinator's guard: either reason
};

// The reactor attacks, from this process, while the cluster runs. Returns once all are done.
ReactorAttackCounts attack_reactor_cluster(std::uint16_t coordinator_port,
                                           std::uint16_t coordinator_metrics, std::uint16_t learner,
                                           std::uint16_t learner_metrics, std::uint16_t replay,
                                           std::uint16_t replay_metrics,
                                           const std::vector<std::uint16_t>& data_ports) {
  ReactorAttackCounts counts;
  double& refused = counts.refused_joins;
  std::vector<std::thread> attacks;
  // 1. One message that never ends, at the learner: 4 MiB frames with MORE, up to 1 GiB. Then
  // 2. a second connection under the live upstream's routing id, complete messages, 512 MiB.
  // One after the other, so that the bound is one connection's cap.
  attacks.emplace_back([learner, learner_metrics, &counts] {
    {
      testing::RawZmtpPeer peer(learner, "intruder");
      const std::string chunk(std::size_t{4} << 20, 'x');
      for (int i = 0; i < 256 && peer.send_frame(chunk, true); ++i) {
      }
      std::cout << "endless message: " << (peer.bytes_sent() >> 20) << " MiB taken\n";
    }
    // Which rule cuts first depends on timing: a connection's cap at a check after the learner
    // read everything waiting, or the process's budget on the guard's own thread (the learner
    // may be in a training step). Either is counted.
    const auto cuts = [learner_metrics] {
      double sum = 0;
      for (const char* reason :
           {"incomplete_over_cap", "undelivered_connection", "over_process_budget"}) {
        const double n =
            scraped(learner_metrics, "tagflow_transport_invalid_messages_total", "reason", reason);
        if (n < 0) return -1.0;
        sum += n;
      }
      return sum;
    };
    counts.learner_cuts = cuts();
    testing::RawZmtpPeer peer(learner, "replay");
    const std::string chunk(std::size_t{1} << 20, 'y');
    for (int i = 0; i < 512 && peer.send_frame(chunk, false); ++i) {
    }
    std::cout << "stolen routing id: " << (peer.bytes_sent() >> 20) << " MiB taken\n";
    EXPECT_LT(peer.bytes_sent(), std::uint64_t{256} << 20) << "the stolen routing id was never cut";
    // Read at once, while the learner surely runs (it has just cut the connection): the other
    // attacks may outlast the cluster, and a scrape after them may find the learner gone, so a
    // failed scrape keeps the counts of the last one that answered.
    (void)testing::eventually(
        [&] {
          if (const double n = cuts(); n >= 0) counts.learner_cuts = n;
          return counts.learner_cuts >= 2;
        },
        10s);
  });
  // 3. Eight connections at the replay at once, each a 24 MiB message without end: every one
  // under a connection's cap (two 16 MiB messages), 192 MiB together, at most 1.6 GB/s (more
  // than loopback carries here, and what arrives while the guard's thread waits for a core is
  // what the peak can exceed the budget by).
  attacks.emplace_back([replay, replay_metrics, &counts] {
    std::vector<std::thread> flows;
    std::atomic<std::uint64_t> taken{0};
    for (int i = 0; i < 8; ++i) {
      flows.emplace_back([replay, i, &taken] {
        testing::RawZmtpPeer peer(replay, "crowd-" + std::to_string(i));
        (void)testing::EndlessMessage{std::size_t{1} << 20, 5ms, 24}.send(peer);
        taken += peer.bytes_sent();
        std::this_thread::sleep_for(3s);  // held until cut, or until the others are
      });
    }
    for (std::thread& flow : flows) flow.join();
    std::cout << "eight endless messages: " << (taken.load() >> 20) << " MiB taken\n";
    (void)testing::eventually(
        [&] {
          counts.over_budget = scraped(replay_metrics, "tagflow_transport_invalid_messages_total",
                                       "reason", "over_process_budget");
          return counts.over_budget >= 1;
        },
        10s);
  });
  // 4. One message that never ends at the coordinator, in 64 KiB frames (its frame limit: ZeroMQ
  // drops a connection that sends a larger one at once), up to 512 MiB.
  attacks.emplace_back([coordinator_port, coordinator_metrics, &counts] {
    testing::RawZmtpPeer peer(coordinator_port, "endless");  // the JOINs come as "intruder"
    (void)testing::EndlessMessage{std::size_t{64} << 10, 0ms, 8192}.send(peer);
    std::cout << "endless message at the coordinator: " << (peer.bytes_sent() >> 20)
              << " MiB taken\n";
    (void)testing::eventually(
        [&] {
          const double cut =
              scraped(coordinator_metrics, "tagflow_transport_invalid_messages_total", "reason",
                      "incomplete_over_cap");
          const double over =
              scraped(coordinator_metrics, "tagflow_transport_invalid_messages_total", "reason",
                      "over_process_budget");
          if (cut >= 0 && over >= 0) counts.coordinator_cut = cut + over;
          return counts.coordinator_cut >= 1;
        },
        10s);
  });
  // 5. Garbage frames at every data port and at the coordinator.
  attacks.emplace_back([coordinator_port, data_ports] {
    std::vector<std::uint16_t> ports = data_ports;
    ports.push_back(coordinator_port);
    for (const std::uint16_t p : ports) {
      testing::RawZmtpPeer peer(p, "garbage");
      for (int i = 0; i < 50; ++i) {
        (void)peer.send_frame(std::string(static_cast<std::size_t>(1 + i * 37), char(i)), false);
      }
    }
  });
  // 6. 5,000 JOINs whose id forges a coordinator log line.
  attacks.emplace_back([coordinator_port, coordinator_metrics, &refused] {
    zmq::context_t context;
    zmq::socket_t dealer(context, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::routing_id, "intruder");
    dealer.set(zmq::sockopt::linger, 10000);  // all 5,000 leave before the socket closes
    dealer.connect("tcp://127.0.0.1:" + std::to_string(coordinator_port));
    coordinator::ControlMessage join;
    join.type = coordinator::ControlType::kJoin;
    join.federate = "x\n[info] coordinator: FORGED every federate resigned; run finished";
    join.endpoints = {{join.federate, "tcp://127.0.0.1:1"}};
    const std::string bytes = coordinator::encode_control(join);
    for (int i = 0; i < 5000; ++i) dealer.send(zmq::buffer(bytes), zmq::send_flags::none);
    // Counted as they arrive (the coordinator may still be working through the last ones).
    (void)testing::eventually(
        [&] {
          refused = scraped(coordinator_metrics, "tagflow_transport_invalid_messages_total",
                            "reason", "refused_join");
          return refused >= 5000;
        },
        20s);
  });
  // 7. Six idle connections and a trickler at the learner's metrics endpoint; a scrape answers.
  attacks.emplace_back([learner_metrics] {
    std::vector<int> idle;
    for (int i = 0; i < 6; ++i) idle.push_back(connect_loopback(learner_metrics));
    const int trickler = connect_loopback(learner_metrics);
    std::atomic<bool> done{false};
    std::thread trickle([&] {
      const char* request = "GET /metrics HTTP/1.0\r\n";
      for (const char* c = request; *c != '\0' && !done.load(); ++c) {
        (void)::send(trickler, c, 1, MSG_NOSIGNAL);
        std::this_thread::sleep_for(200ms);
      }
    });
    const std::optional<std::string> text =
        http_get("127.0.0.1", learner_metrics, "/metrics", 5000ms);
    EXPECT_TRUE(text.has_value()) << "a scrape waited behind idle and trickling connections";
    done.store(true);
    trickle.join();
    for (const int fd : idle) ::close(fd);
    ::close(trickler);
  });
  for (std::thread& t : attacks) t.join();
  return counts;
}

TEST_F(HostileCluster, ReactorModeUnderEveryAttackGivesTheDigestOfAQuietRunWithinItsBounds) {
  // The quiet reference: the same file in one process, where nothing can reach it (the
  // placements give one digest: TagflowUp's and FederatedCluster's tests; a closed cluster's
  // refusal of outsiders is TagflowUp's and TwoHostNamespaces' too). Long enough for the open run
  // to outlast its attacks on a loaded machine: the learner counts the stolen routing id's
  // connection only once it held data 5 s without delivering any, and only a live learner's
  // metrics say so (50,000 steps ended first in a CI run). It runs beside the open run (it opens
  // no port): this test runs alone, and one process leaves the other CPU to the open run.
  const fs::path closed = write_cluster("closed", "reactor", 100000, false);
  const pid_t quiet_run = start(closed, "closed", true);
  unreaped_.push_back(quiet_run);

  const fs::path open = write_cluster("open", "reactor", 100000, true);
  PeakWatch watch(dir_ / "open");
  const pid_t up = start(open, "open");
  ASSERT_TRUE(testing::eventually([&] { return running(); }, 60s));
  const std::map<std::string, std::uint64_t> before = watch.peaks();
  const ReactorAttackCounts counts =
      attack_reactor_cluster(port(0), port(1), port(8), port(9), port(6), port(7),
                             {port(2), port(3), port(6), port(8), port(10)});
  const std::map<std::string, std::uint64_t> after = watch.peaks();
  const double refused = counts.refused_joins, learner_cuts = counts.learner_cuts;
  const double over_budget = counts.over_budget;
  EXPECT_GE(counts.coordinator_cut, 1) << "the coordinator's guard never cut the endless message";
  const int code = testing::wait_exit(up, 150s);
  ASSERT_EQ(code, 0) << testing::read_text_file(dir_ / "open.err");
  expect_none_left(watch);
  expect_bounded(before, after);
  std::cout << "learner: " << learner_cuts << " connections cut"
            << "; replay drops: over_process_budget " << over_budget
            << "; coordinator refused_join " << refused << "\n";
  // Both connections are cut (each sender stops far short of what it offered, checked above by
  // what it took); the second cut's count may reach the metrics after the scrape window.
  EXPECT_GE(learner_cuts, 1) << "the learner's guard counted no cut connection";
  // 192 MiB offered over eight connections against 64 MiB: at least the first few cut.
  EXPECT_GE(over_budget, 1) << "the replay's guard never kept within the process budget";
  EXPECT_GE(refused, 5000);

  ASSERT_EQ(testing::wait_exit(quiet_run, 150s), 0) << testing::read_text_file(dir_ / "closed.err");
  unreaped_.clear();
  const nlohmann::json quiet = summary("closed");
  const nlohmann::json attacked = summary("open");
  EXPECT_EQ(attacked.at("security"), "none");
  EXPECT_EQ(attacked.at("env_steps"), quiet.at("env_steps"));
  EXPECT_EQ(attacked.at("digest"), quiet.at("digest"));
  const std::string log = testing::read_text_file(dir_ / "open" / "coordinator.log");
  EXPECT_EQ(log.find("\n[info] coordinator: FORGED"), std::string::npos) << "a forged log line";
  EXPECT_NE(log.find("x\\x0a[info] coordinator: FORGED"), std::string::npos) << log;
  EXPECT_LT(log.size(), 64U << 10) << "5,000 refused JOINs should take a line or two";
}

// --- actor mode ---------------------------------------------------------------------------------

/// An actor system of this (outside) process: plain, or TLS with `credentials`.
struct Outsider {
  explicit Outsider(std::optional<actors::ActorCredentials> credentials)
      : config(actors::make_actor_system_config({true, 1}, credentials)), system(*config) {}
  std::unique_ptr<caf::actor_system_config> config;
  caf::actor_system system;
};

/// Tries to reach the actor published on `port` and send it StopRun; true when it got through.
bool outsider_stops(Outsider& outsider, std::uint16_t port) {
  auto remote = actors::remote_actor_at(outsider.system, "127.0.0.1", port);
  if (!remote) return false;
  caf::anon_send(*remote, actors::StopRun{""});
  return true;
}

TEST_F(HostileCluster, ActorModeLetsNoOutsiderConnectStopOrAllocate) {
  const fs::path file = write_cluster("actor", "actor", 6000, false);
  const fs::path foreign = dir_ / "foreign-keys";  // certificates of another CA
  actors::mint_actor_credentials(foreign, {"replay"});
  PeakWatch watch(dir_ / "actor");
  const pid_t up = start(file, "actor");
  ASSERT_TRUE(testing::eventually([&] { return attacked_processes_work(); }, 60s));
  const std::map<std::string, std::uint64_t> before = watch.peaks();
  const std::vector<std::uint16_t> published{port(6), port(8), port(10)};  // replay, learner, inf.
  {
    Outsider plain(std::nullopt);
    Outsider other_ca(actors::actor_credentials(foreign, "replay"));
    for (const std::uint16_t p : published) {
      EXPECT_FALSE(outsider_stops(plain, p)) << "a plain CAF client reached port " << p;
      EXPECT_FALSE(outsider_stops(other_ca, p)) << "another CA's certificate reached port " << p;
    }
  }
  for (const std::uint16_t p : published) {
    const std::uint64_t taken = forge_basp_claim(p, 512U << 20, std::uint64_t{64} << 20);
    std::cout << "port " << p << " took " << taken << " bytes of a forged 512 MiB claim\n";
  }
  // Each process counted every refused handshake: the plain client, the other CA's and the
  // forged header, at least. A process busy training (the learner, on a loaded machine) may
  // count them a little after the attempts returned, so the count is awaited.
  for (const std::uint16_t p : published) {
    const auto metrics_port = static_cast<std::uint16_t>(p + 1);
    double refused = 0;
    (void)testing::eventually(
        [&] {
          refused = scraped(metrics_port, "tagflow_transport_invalid_messages_total", "reason",
                            "refused_handshake");
          return refused >= 3;
        },
        30s);
    std::cout << "port " << p << " counted " << refused << " refused handshakes\n";
    EXPECT_GE(refused, 3) << "refused handshakes counted by the process on port " << p;
  }
  const std::map<std::string, std::uint64_t> after = watch.peaks();
  const int code = testing::wait_exit(up, 150s);
  ASSERT_EQ(code, 0) << testing::read_text_file(dir_ / "actor.err");
  expect_none_left(watch);
  expect_bounded(before, after);
  // ... and logged the first refusal from this address once, whatever followed.
  for (const std::string process : {"replay", "learner", "inference"}) {
    const std::string log = testing::read_text_file(dir_ / "actor" / (process + ".log"));
    std::size_t lines = 0;
    for (std::size_t at = log.find("refused a TLS connection from 127.0.0.1:");
         at != std::string::npos; at = log.find("refused a TLS connection from", at + 1)) {
      ++lines;
    }
    EXPECT_EQ(lines, 1U) << process << ".log:\n" << log;
  }
  const nlohmann::json result = summary("actor");
  EXPECT_EQ(result.at("stop_reason"), "env_steps");
  // Each sampler stops at 3,000 steps; the first to get there stops the other on its way.
  EXPECT_GE(result.at("env_steps").get<int>(), 3000);
  EXPECT_EQ(result.at("security"), "per-run keys");
}

// What the certificates prevent: with `security: none` the same outsider reaches the replay and
// its StopRun ends the run long before its stop.
TEST_F(HostileCluster, ActorModeWithSecurityNoneIsOpenToAnOutsidersStopRun) {
  const fs::path file = write_cluster("open-actor", "actor", 1000000, true);
  PeakWatch watch(dir_ / "open-actor");
  const pid_t up = start(file, "open-actor");
  ASSERT_TRUE(testing::eventually([&] { return running(); }, 60s));
  {
    Outsider plain(std::nullopt);
    EXPECT_TRUE(outsider_stops(plain, port(6)));
    std::this_thread::sleep_for(500ms);  // let the middleman deliver before the system ends
  }
  // The run ends by itself, cleanly, on the outsider's word, long before its million env steps: a
  // run that ignored the StopRun would still be going at the deadline (-1, killed, no summary).
  const int code = testing::wait_exit(up, 150s);
  expect_none_left(watch);
  const std::string err = testing::read_text_file(dir_ / "open-actor.err");
  EXPECT_NE(err.find("security: none"), std::string::npos) << err;
  EXPECT_EQ(code, 0) << err;
  ASSERT_TRUE(fs::exists(dir_ / "open-actor.json")) << "exit " << code << ":\n" << err;
  const nlohmann::json result = summary("open-actor");
  EXPECT_LT(result.at("env_steps").get<int>(), 1000000) << result.dump();
  EXPECT_NE(result.at("stop_reason"), "env_steps") << result.dump();
  EXPECT_EQ(result.at("security"), "none") << result.dump();
}

}  // namespace
}  // namespace tagflow::cli
