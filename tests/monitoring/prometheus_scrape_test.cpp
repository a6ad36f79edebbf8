// Integration test: Debian's real `prometheus` scrapes a real cluster.
//
// 1. Writes a cluster file (DQN on CartPole-v1: 2 samplers, replay, learner, inference) whose
//    data and metrics ports are free loopback ports.
// 2. Generates prometheus.yml with `tagflow monitoring prometheus-config --scrape-interval 1s` and
//    starts Prometheus with its own storage directory.
// 3. Runs the cluster with `tagflow up` (coordinator and one process per replica), and sprays
//    malformed frames at the replay's data socket so the error panels have something to show.
// 4. Asserts through /api/v1/query that every target is up with its labels, that every catalogue
//    family exists on exactly the processes that export it, that every dashboard panel query is
//    accepted and returns data, and that `promtool check metrics` passes on every endpoint.
// A second test runs the same cluster in actor mode and checks each node's endpoint directly.
// Every child is stopped and reaped at the end (and dies with this process).
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <zmq.hpp>
#include "clients/cpp/gateway_client.hpp"
#include "common/loopback_ports.hpp"
#include "monitoring/metric_catalogue.hpp"

#include "nodes/kind/registry.hpp"
#include "tests/monitoring/child_process.hpp"
#include "tests/monitoring/dashboard_queries.hpp"
#include "tests/monitoring/http_get.hpp"
#include "tests/support/run_command.hpp"

namespace tagflow::monitoring {
namespace {

using namespace std::chrono_literals;
using tagflow::testing::ChildProcess;
using tagflow::testing::http_get;

/// A run of `count` consecutive ports that were free on 127.0.0.1 a moment ago, below the
/// kernel's ephemeral range (common/loopback_ports.hpp).
std::uint16_t free_port_run(int count) {
  const int base = free_loopback_port_range(count);
  if (base < 0) throw std::runtime_error("no run of free ports");
  return static_cast<std::uint16_t>(base);
}

/// Polls `condition` every 100 ms until it holds or `timeout` passes.
bool wait_until(std::chrono::milliseconds timeout, const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    ::usleep(100000);
  }
  return true;
}

class PrometheusApi {
 public:
  explicit PrometheusApi(std::uint16_t port) : port_(port) {}

  /// The JSON answer of an instant query (status "success" or "error").
  nlohmann::json query(const std::string& promql) const {
    const auto response =
        http_get(port_, "/api/v1/query?query=" + tagflow::testing::url_encode(promql));
    if (response.body.empty()) return {{"status", "no answer"}, {"http", response.status}};
    return nlohmann::json::parse(response.body, nullptr, false);
  }

  /// The result vector of a successful query, or an empty array.
  nlohmann::json result(const std::string& promql) const {
    const nlohmann::json answer = query(promql);
    if (answer.is_discarded() || answer.value("status", "") != "success") {
      return nlohmann::json::array();
    }
    return answer.at("data").at("result");
  }

 private:
  std::uint16_t port_;
};

struct Process {
  std::string name;
  std::string kind;
  std::uint16_t port;
};

/// A short real cluster on free loopback ports; `ports_base` .. +5 are the metrics ports
/// (coordinator, sampler-0, sampler-1, replay, learner, inference), +6 .. +11 the data ports.
struct TestCluster {
  std::filesystem::path dir;
  std::string file;
  std::uint16_t base = 0;
  std::vector<Process> processes;

  TestCluster(const std::string& name, const std::string& mode) {
    dir = std::filesystem::path(::testing::TempDir()) /
          ("tagflow_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "data");
    base = free_port_run(12);
    auto port = [this](int offset) { return std::to_string(base + offset); };
    file = (dir / "cluster.yaml").string();
    std::ofstream(file) << "cluster: " << name << "\nmode: " << mode << "\nseed: 3\n"
                        << "coordinator: {port: " << port(6) << ", metrics_port: " << port(0)
                        << "}\n"
                        << "nodes:\n"
                        << "  sampler: {kind: sampler, replicas: 2, data_port: " << port(7)
                        << ", metrics_port: " << port(1)
                        << ", params: {env: CartPole-v1, num_envs: 4, policy: inference}}\n"
                        << "  replay: {kind: replay, data_port: " << port(9)
                        << ", metrics_port: " << port(3)
                        << ", params: {capacity: 20000, selector: prioritized, min_size: 200, "
                           "samples_per_insert: 8, batch_size: 32}}\n"
                        << "  learner: {kind: learner, data_port: " << port(10)
                        << ", metrics_port: " << port(4)
                        << ", params: {hidden: \"32,32\", eval_every: 50, eval_episodes: 2}}\n"
                        << "  inference: {kind: inference, data_port: " << port(11)
                        << ", metrics_port: " << port(5) << "}\n"
                        << "connections:\n"
                        << "  - {from: sampler.observations, to: inference.observations}\n"
                        << "  - {from: inference.actions, to: sampler.actions, after: 0}\n"
                        << "  - {from: sampler.transitions, to: replay.transitions}\n"
                        << "  - {from: replay.batches, to: learner.batches}\n"
                        << "  - {from: learner.priorities, to: replay.priorities, after: 0}\n"
                        << "  - {from: learner.weights, to: inference.weights, after: 0}\n"
                        // A target never reached: the learner evaluates every 50 updates.
                        << "stop: {seconds: 300, target_return: 1000000}\n"
                        // Open, so the malformed frames sprayed below reach the wire validator
                        // and its counter (a closed cluster refuses them in the CURVE handshake).
                        << "security: none\n";
    processes = {{"coordinator", "coordinator", base},
                 {"sampler-0", "sampler", static_cast<std::uint16_t>(base + 1)},
                 {"sampler-1", "sampler", static_cast<std::uint16_t>(base + 2)},
                 {"replay", "replay", static_cast<std::uint16_t>(base + 3)},
                 {"learner", "learner", static_cast<std::uint16_t>(base + 4)},
                 {"inference", "inference", static_cast<std::uint16_t>(base + 5)}};
  }
  ~TestCluster() { std::filesystem::remove_all(dir); }
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  std::uint16_t replay_data_port() const { return static_cast<std::uint16_t>(base + 9); }

  /// `tagflow up FILE` as a child (its stderr in DIR/up.log).
  std::unique_ptr<ChildProcess> start(const std::string& mode) const {
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{tagflow::testing::tagflow_binary(), "up", file, "--mode", mode,
                                 "--log-dir", (dir / "logs").string(), "--quiet"},
        (dir / "up.log").string());
  }

  /// The launcher's output and the node logs, for failure messages.
  std::string logs() const {
    std::string text;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (entry.path().extension() != ".log") continue;
      std::ifstream in(entry.path());
      std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (content.size() > 3000) content = content.substr(content.size() - 3000);
      text += "== " + entry.path().string() + "\n" + content + "\n";
    }
    return text;
  }
};

/// Sends malformed frames to a node's data socket from a raw DEALER (peer id "sprayer").
void spray_malformed_frames(std::uint16_t port) {
  zmq::context_t context;
  zmq::socket_t socket(context, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::routing_id, "sprayer");
  socket.set(zmq::sockopt::linger, 1000);
  socket.connect("tcp://127.0.0.1:" + std::to_string(port));
  const std::string junk = "not a tagflow header";
  for (int i = 0; i < 20; ++i) {
    socket.send(zmq::buffer(junk), zmq::send_flags::sndmore);
    socket.send(zmq::buffer(junk), zmq::send_flags::none);
  }
}

/// Whether a dashboard query reads the inference service's families.
bool is_service_query(const std::string& expr) {
  return expr.find("tagflow_gateway_") != std::string::npos;
}

/// Whether a dashboard query reads the multi-agent panels' families: evaluations (a multi_agent
/// env node's, an evaluator's, or a learner's with stop.target_return), episode lengths and
/// collisions (multi_agent env nodes only).
bool is_multi_agent_query(const std::string& expr) {
  for (const char* family :
       {"tagflow_evaluation", "tagflow_episode_length_mean", "tagflow_collisions_total"}) {
    if (expr.find(family) != std::string::npos) return true;
  }
  return false;
}

/// Prometheus on a free loopback port, scraping what `tagflow monitoring prometheus-config FILE`
/// says, with its storage under `dir`.
struct ScrapingPrometheus {
  std::uint16_t port = free_port_run(1);
  std::string config;
  std::unique_ptr<ChildProcess> process;
  ScrapingPrometheus(const std::string& file, const std::filesystem::path& dir) {
    config = (dir / "prometheus.yml").string();
    const auto generated = tagflow::testing::run_command(
        tagflow::testing::tagflow_binary() + " monitoring prometheus-config " + file +
        " --scrape-interval 1s > " + config + " 2>&1");
    EXPECT_EQ(generated.exit_code, 0) << generated.output;
    process = std::make_unique<ChildProcess>(
        std::vector<std::string>{"/usr/bin/prometheus", "--config.file=" + config,
                                 "--storage.tsdb.path=" + (dir / "data").string(),
                                 "--web.listen-address=127.0.0.1:" + std::to_string(port),
                                 "--log.level=warn"},
        (dir / "prometheus.log").string());
  }
};

TEST(PrometheusScrape, ScrapesARealClusterAndAnswersEveryDashboardQuery) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "needs the learner and inference (LibTorch)";
  const TestCluster cluster("scrape-test", "reactor");
  const std::filesystem::path& dir = cluster.dir;

  // prometheus.yml from the real command, then Prometheus, then the cluster.
  const ScrapingPrometheus prometheus(cluster.file, dir);
  ASSERT_TRUE(wait_until(30s, [&] { return http_get(prometheus.port, "/-/ready").status == 200; }))
      << "Prometheus not ready; see " << (dir / "prometheus.log");
  const PrometheusApi api(prometheus.port);
  const auto up = cluster.start("reactor");
  const std::vector<Process>& processes = cluster.processes;

  // Every target up, labelled from the cluster file.
  ASSERT_TRUE(wait_until(90s, [&] { return api.result("up == 1").size() == processes.size(); }))
      << api.query("up").dump() << "\n"
      << cluster.logs();
  std::map<std::string, std::string> kind_of;
  for (const auto& series : api.result("up")) {
    const auto& labels = series.at("metric");
    kind_of[labels.at("node")] = labels.at("kind");
    EXPECT_EQ(labels.at("cluster"), "scrape-test");
    EXPECT_EQ(labels.at("mode"), "reactor");
  }
  for (const Process& p : processes) EXPECT_EQ(kind_of[p.name], p.kind) << p.name;
  EXPECT_EQ(api.result("up{group=\"sampler\"}").size(), 2U);
  // honor_labels: the processes' own node/kind/mode labels are kept, never renamed exported_*.
  EXPECT_TRUE(api.result("{__name__=~\".+\", exported_node=~\".+\"}").empty());

  // The cluster learns: wait for learner updates and answered inference requests, then spray.
  ASSERT_TRUE(wait_until(120s, [&] {
    return !api.result("tagflow_learner_updates_total > 0").empty() &&
           !api.result("tagflow_inference_requests_total > 0").empty() &&
           !api.result("tagflow_replay_priority_updates_total > 0").empty() &&
           !api.result("tagflow_replay_bytes > 0").empty() &&
           !api.result("tagflow_learner_policy_lag_versions > 0").empty();
  })) << cluster.logs();
  spray_malformed_frames(cluster.replay_data_port());
  ASSERT_TRUE(wait_until(30s, [&] {
    return !api.result("tagflow_transport_invalid_messages_total{node=\"replay\"} > 0").empty();
  })) << api.query("tagflow_transport_invalid_messages_total").dump();
  // The learner's own evaluations (the figure stop.target_return reads): CartPole pays 1 a step,
  // so an evaluated return is at least 1, never the gauge's 0 before the first.
  EXPECT_TRUE(
      wait_until(60s,
                 [&] {
                   return !api.result("tagflow_evaluations_total{node=\"learner\"} > 0").empty() &&
                          !api.result("tagflow_evaluation_return{node=\"learner\"} >= 1").empty();
                 }))
      << api.query("tagflow_evaluation_return").dump() << cluster.logs();

  // Every catalogue family, from exactly the processes whose kind exports it.
  for (const MetricSpec& s : nodes::full_metric_catalogue()) {
    if (s.source == MetricSource::scrape) continue;
    const std::string series = s.type == MetricType::histogram ? s.name + "_count" : s.name;
    std::set<std::string> expected;
    for (const Process& p : processes) {
      if (s.exported_by(p.kind)) expected.insert(p.name);
    }
    // Per-peer error counts appear only where something was dropped: here, the replay.
    if (s.name == "tagflow_transport_invalid_messages_total") expected = {"replay"};
    // Actor-mode membership has no meaning between federates: no reactor-mode process exports it.
    if (s.name == "tagflow_actor_members") expected.clear();
    // The inference service's families have series only where a gateway serves clients: none here.
    if (s.name.rfind("tagflow_gateway_", 0) == 0) expected.clear();
    std::set<std::string> found;
    for (const auto& r : api.result("count by (node, kind, mode) (" + series + ")")) {
      const auto& labels = r.at("metric");
      const std::string node = labels.at("node");
      found.insert(node);
      EXPECT_EQ(labels.at("kind"), kind_of[node]) << series;
      EXPECT_EQ(labels.at("mode"), "reactor") << series;
    }
    EXPECT_EQ(found, expected) << series;
  }

  // Every dashboard query is valid PromQL and returns data (after a few more scrapes, so rate()
  // has samples on both sides of the spray).
  ::sleep(4);
  const auto queries = tagflow::testing::dashboard_queries(tagflow::testing::load_dashboard());
  for (const auto& q : queries) {
    const std::string promql = tagflow::testing::substitute_variables(q.expr, "scrape-test", "1m");
    const nlohmann::json answer = api.query(promql);
    ASSERT_FALSE(answer.is_discarded()) << promql;
    EXPECT_EQ(answer.value("status", ""), "success") << q.panel << ": " << promql << "\n"
                                                     << answer.dump();
    // The inference service's panels have data where a gateway serves outside programs, which
    // this single-agent cluster cannot have (the service serves multi-agent files' policies), and
    // the multi-agent panels where a multi_agent env node runs:
    // ServingClusterAnswersTheInferenceServicePanels.
    if (answer.value("status", "") == "success" && !is_service_query(q.expr) &&
        !is_multi_agent_query(q.expr)) {
      EXPECT_FALSE(answer.at("data").at("result").empty()) << q.panel << ": " << promql;
    }
  }
  // A query naming another cluster finds nothing: the cluster label really filters.
  EXPECT_TRUE(api.result("tagflow_env_steps_total{cluster=~\"other\"}").empty());

  // promtool accepts what every endpoint serves.
  for (const Process& p : processes) {
    const auto page = http_get(p.port, "/metrics");
    ASSERT_EQ(page.status, 200) << p.name;
    const std::string path = (dir / (p.name + ".metrics")).string();
    std::ofstream(path) << page.body;
    const auto check = tagflow::testing::run_command("promtool check metrics < " + path + " 2>&1");
    EXPECT_EQ(check.exit_code, 0) << p.name << ":\n" << check.output;
  }

  // Ctrl-C semantics: the launcher stops every process and exits 130.
  prometheus.process->request_stop();
  const int status = up->terminate(30s);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status << "\n" << cluster.logs();
  prometheus.process->terminate();
}

// The inference service's and the multi-agent panels, with a gateway serving an outside program:
// a TrafficJunction4 env node (evaluating its policies every 2,000 joint steps) and one inference
// server whose gateway a client asks for actions (and sends one short observation, refused):
// every panel reading the service's families, the evaluations, episode lengths or collisions
// returns data.
TEST(PrometheusScrape, ServingClusterAnswersTheInferenceServicePanels) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "needs the inference server (LibTorch)";
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("tagflow_serve_scrape_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "data");
  const std::uint16_t base = free_port_run(7);
  const auto port = [base](int offset) { return std::to_string(base + offset); };
  const std::string file = (dir / "cluster.yaml").string();
  std::ofstream(file) << "cluster: serve-scrape-test\nmode: reactor\nseed: 5\n"
                      << "coordinator: {port: " << port(0) << ", metrics_port: " << port(1) << "}\n"
                      << "policies:\n  car: {hidden: \"16\", per_agent: true}\n"
                      << "nodes:\n"
                      << "  junction: {kind: multi_agent, data_port: " << port(2)
                      << ", metrics_port: " << port(3)
                      << ", params: {env: TrafficJunction4-v1, eval_every: 2000, "
                         "eval_episodes: 2}}\n"
                      << "  inference: {kind: inference, data_port: " << port(4)
                      << ", metrics_port: " << port(6)
                      << ", params: {policies: all, gateway_port: " << port(5) << "}}\n"
                      << "connections:\n"
                      << "  - {from: junction.observations, to: inference.observations}\n"
                      << "  - {from: inference.actions, to: junction.actions, after: 0}\n"
                      << "stop: {seconds: 300}\nsecurity: none\n";
  const ScrapingPrometheus prometheus(file, dir);
  ASSERT_TRUE(wait_until(30s, [&] { return http_get(prometheus.port, "/-/ready").status == 200; }))
      << "Prometheus not ready; see " << (dir / "prometheus.log");
  const PrometheusApi api(prometheus.port);
  ChildProcess up({tagflow::testing::tagflow_binary(), "up", file, "--log-dir",
                   (dir / "logs").string(), "--quiet"},
                  (dir / "up.log").string());
  {
    clients::GatewayClient client("tcp://127.0.0.1:" + port(5));
    bool answered = false;
    for (int i = 0; i < 300 && !answered; ++i) {  // ready once its policies are loaded
      try {
        answered = client.act({{0, std::vector<float>(324, 0.0F)}}).ok;
      } catch (const clients::GatewayClientError&) {
      }
      if (!answered) std::this_thread::sleep_for(100ms);
    }
    ASSERT_TRUE(answered) << "the gateway never answered; see " << (dir / "logs");
    for (int i = 0; i < 20; ++i) EXPECT_TRUE(client.act({{1, std::vector<float>(324, 0.5F)}}).ok);
    EXPECT_EQ(client.act({{0, {1.0F, 2.0F}}}).error, "width");
  }
  // Scraped after the requests, and again so that rate() has two samples.
  ASSERT_TRUE(wait_until(30s, [&] {
    return !api.result("tagflow_gateway_errors_total > 0").empty() &&
           !api.result("tagflow_gateway_requests_total > 0").empty() &&
           !api.result("tagflow_evaluations_total{kind=\"multi_agent\"} > 1").empty();
  })) << api.query("tagflow_evaluations_total").dump();
  ::sleep(3);
  std::size_t service_queries = 0, multi_agent_queries = 0;
  for (const auto& q : tagflow::testing::dashboard_queries(tagflow::testing::load_dashboard())) {
    if (is_service_query(q.expr)) {
      ++service_queries;
    } else if (is_multi_agent_query(q.expr)) {
      ++multi_agent_queries;
    } else {
      continue;
    }
    const std::string promql =
        tagflow::testing::substitute_variables(q.expr, "serve-scrape-test", "1m");
    const nlohmann::json answer = api.query(promql);
    ASSERT_FALSE(answer.is_discarded()) << promql;
    EXPECT_EQ(answer.value("status", ""), "success") << q.panel << ": " << answer.dump();
    if (answer.value("status", "") == "success") {
      EXPECT_FALSE(answer.at("data").at("result").empty()) << q.panel << ": " << promql;
    }
  }
  EXPECT_GE(service_queries, 4U);
  EXPECT_GE(multi_agent_queries, 3U);
  // An evaluation's team return, not the gauge's 0 before the first: TrafficJunction's rewards
  // are negative (time and collision penalties).
  EXPECT_FALSE(api.result("tagflow_evaluation_return{node=\"junction\"} < 0").empty())
      << api.query("tagflow_evaluation_return").dump();
  (void)up.terminate(30s);
  std::filesystem::remove_all(dir);
}

TEST(PrometheusScrape, ActorModeNodesExportTheSameFamiliesLabelledActor) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "needs the learner and inference (LibTorch)";
  const TestCluster cluster("actor-scrape-test", "actor");
  const auto up = cluster.start("actor");
  // Every node endpoint serves its kind's families with mode="actor" once the learner learns.
  const std::string learner_updates =
      "tagflow_learner_updates_total{kind=\"learner\",mode=\"actor\"";
  ASSERT_TRUE(wait_until(120s, [&] {
    const auto page = http_get(cluster.processes[4].port, "/metrics");
    const std::size_t at = page.body.find(learner_updates);
    if (at == std::string::npos) return false;
    const std::size_t value = page.body.find("} ", at);
    return value != std::string::npos && std::atof(page.body.c_str() + value + 2) > 0.0;
  })) << cluster.logs();
  for (const Process& p : cluster.processes) {
    if (p.kind == "coordinator") continue;  // actor mode runs without a coordinator
    const auto page = http_get(p.port, "/metrics");
    ASSERT_EQ(page.status, 200) << p.name << "\n" << cluster.logs();
    for (const MetricSpec& s : nodes::full_metric_catalogue()) {
      if (s.source == MetricSource::scrape || !s.exported_by(p.kind)) continue;
      if (!s.labels.empty()) continue;  // per-table and per-peer families: below
      EXPECT_NE(page.body.find("\n" + s.name), std::string::npos) << p.name << ": " << s.name;
    }
    // Per peer, both ways: messages and payload bytes to and from at least two other replicas
    // (every node talks to at least two; the second may take a moment, e.g. the learner hears
    // from inference only after its first weights), each series above 0, none from a stranger.
    const std::vector<std::string> families{
        "tagflow_transport_messages_sent_total", "tagflow_transport_messages_received_total",
        "tagflow_transport_sent_bytes_total", "tagflow_transport_received_bytes_total"};
    const auto peer_lines = [](const std::string& body, const std::string& family) {
      std::vector<std::string> found;
      std::istringstream lines(body);
      for (std::string line; std::getline(lines, line);) {
        if (line.rfind(family + "{", 0) == 0 && line.find("peer=\"") != std::string::npos) {
          found.push_back(line);
        }
      }
      return found;
    };
    std::string body;
    EXPECT_TRUE(wait_until(30s,
                           [&] {
                             body = http_get(p.port, "/metrics").body;
                             for (const std::string& family : families) {
                               const auto lines = peer_lines(body, family);
                               if (lines.size() < 2) return false;
                               // A peer's series appears when it links, before its first
                               // message (the learner's inference peer: after the first weights).
                               for (const std::string& line : lines) {
                                 if (std::atof(line.c_str() + line.rfind(' ') + 1) <= 0.0) {
                                   return false;
                                 }
                               }
                             }
                             return true;
                           }))
        << p.name << ": fewer than 2 peers in a transport family, or a peer without traffic\n"
        << body.substr(0, 3000);
    for (const std::string& family : families) {
      for (const std::string& line : peer_lines(body, family)) {
        EXPECT_GT(std::atof(line.c_str() + line.rfind(' ') + 1), 0.0) << p.name << ": " << line;
        EXPECT_EQ(line.find("peer=\"unknown\""), std::string::npos) << p.name << ": " << line;
      }
    }
    EXPECT_NE(page.body.find("mode=\"actor\",node=\"" + p.name + "\""), std::string::npos)
        << p.name << "\n"
        << page.body.substr(0, 2000);
  }
  const int status = up->terminate(30s);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status << "\n" << cluster.logs();
}

}  // namespace
}  // namespace tagflow::monitoring
