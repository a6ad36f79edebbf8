// Integration test: Debian's real `prometheus` scrapes a cluster's metrics endpoints.
//
// 1. Writes a cluster file whose metrics ports are free loopback ports (sampler has 2 replicas).
// 2. Generates prometheus.yml with `tagflow monitoring prometheus-config --scrape-interval 1s`.
// 3. Starts one tagflow_test_metrics_exporter per process (the real ProcessMetrics and
//    MetricsEndpoint, with synthetic values) and a Prometheus with its own storage directory.
// 4. Asserts through /api/v1/query that every target is up with its labels, that every catalogue
//    family exists with the node/kind/mode of the processes that export it, that every dashboard
//    panel query is accepted and returns data, and that `promtool check metrics` passes on every
//    endpoint. Every child is stopped and reaped at the end (and dies with this process).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "monitoring/metric_catalogue.hpp"
#include "tests/monitoring/child_process.hpp"
#include "tests/monitoring/dashboard_queries.hpp"
#include "tests/monitoring/http_get.hpp"
#include "tests/support/run_command.hpp"

namespace tagflow::monitoring {
namespace {

using namespace std::chrono_literals;
using tagflow::testing::ChildProcess;
using tagflow::testing::http_get;

/// A run of `count` consecutive ports that were free on 127.0.0.1 a moment ago.
std::uint16_t free_port_run(int count) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::vector<int> fds;
    std::uint16_t base = 0;
    bool ok = true;
    for (int i = 0; i < count && ok; ++i) {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      address.sin_port = htons(static_cast<std::uint16_t>(i == 0 ? 0 : base + i));
      ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
      if (ok && i == 0) {
        socklen_t length = sizeof(address);
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
        base = ntohs(address.sin_port);
        ok = base + count <= 65535;
      }
      fds.push_back(fd);
    }
    for (int fd : fds) ::close(fd);
    if (ok) return base;
  }
  throw std::runtime_error("no run of free ports");
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
  ProcessKind kind;
  std::uint16_t port;
};

TEST(PrometheusScrape, ScrapesEveryEndpointAndAnswersEveryDashboardQuery) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("tagflow_prometheus_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "data");

  // 1. Cluster file: metrics on base..base+5, data ports on base+6..base+11.
  const std::uint16_t base = free_port_run(12);
  const std::uint16_t prometheus_port = free_port_run(1);
  auto port = [base](int offset) { return std::to_string(base + offset); };
  const std::string cluster_file = (dir / "cluster.yaml").string();
  std::ofstream(cluster_file) << "cluster: scrape-test\nmode: reactor\n"
                              << "coordinator: {port: " << port(6) << ", metrics_port: " << port(0)
                              << "}\n"
                              << "nodes:\n"
                              << "  sampler: {kind: sampler, replicas: 2, data_port: " << port(7)
                              << ", metrics_port: " << port(1) << "}\n"
                              << "  replay: {kind: replay, data_port: " << port(9)
                              << ", metrics_port: " << port(3) << "}\n"
                              << "  learner: {kind: learner, data_port: " << port(10)
                              << ", metrics_port: " << port(4) << "}\n"
                              << "  inference: {kind: inference, data_port: " << port(11)
                              << ", metrics_port: " << port(5) << "}\n"
                              << "connections:\n"
                              << "  - {from: sampler.observations, to: inference.observations}\n"
                              << "  - {from: inference.actions, to: sampler.actions, after: 0}\n"
                              << "  - {from: sampler.transitions, to: replay.transitions}\n"
                              << "  - {from: replay.batches, to: learner.batches}\n"
                              << "  - {from: learner.priorities, to: replay.priorities, after: 0}\n"
                              << "  - {from: learner.weights, to: inference.weights, after: 0}\n"
                              << "stop: {seconds: 10}\n";
  const std::vector<Process> processes = {
      {"coordinator", ProcessKind::coordinator, static_cast<std::uint16_t>(base)},
      {"sampler-0", ProcessKind::sampler, static_cast<std::uint16_t>(base + 1)},
      {"sampler-1", ProcessKind::sampler, static_cast<std::uint16_t>(base + 2)},
      {"replay", ProcessKind::replay, static_cast<std::uint16_t>(base + 3)},
      {"learner", ProcessKind::learner, static_cast<std::uint16_t>(base + 4)},
      {"inference", ProcessKind::inference, static_cast<std::uint16_t>(base + 5)}};

  // 2. prometheus.yml from the real command.
  const std::string prometheus_config = (dir / "prometheus.yml").string();
  const auto generated = tagflow::testing::run_command(
      tagflow::testing::tagflow_binary() + " monitoring prometheus-config " + cluster_file +
      " --scrape-interval 1s > " + prometheus_config + " 2>&1");
  ASSERT_EQ(generated.exit_code, 0) << generated.output;

  // 3. Exporters, then Prometheus.
  std::vector<std::unique_ptr<ChildProcess>> exporters;
  for (const Process& p : processes) {
    exporters.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{TAGFLOW_TEST_EXPORTER, cluster_file, p.name},
        (dir / (p.name + ".log")).string()));
  }
  for (std::size_t i = 0; i < processes.size(); ++i) {
    ASSERT_EQ(exporters[i]->read_line(10s), "ready " + std::to_string(processes[i].port))
        << processes[i].name << " did not start; see " << (dir / (processes[i].name + ".log"));
  }
  ChildProcess prometheus(
      {"/usr/bin/prometheus", "--config.file=" + prometheus_config,
       "--storage.tsdb.path=" + (dir / "data").string(),
       "--web.listen-address=127.0.0.1:" + std::to_string(prometheus_port), "--log.level=warn"},
      (dir / "prometheus.log").string());
  ASSERT_TRUE(wait_until(30s, [&] { return http_get(prometheus_port, "/-/ready").status == 200; }))
      << "Prometheus not ready; see " << (dir / "prometheus.log");
  const PrometheusApi api(prometheus_port);

  // 4a. Every target up, labelled from the cluster file.
  ASSERT_TRUE(wait_until(30s, [&] { return api.result("up == 1").size() == processes.size(); }))
      << api.query("up").dump();
  std::map<std::string, std::string> kind_of;
  for (const auto& series : api.result("up")) {
    const auto& labels = series.at("metric");
    kind_of[labels.at("node")] = labels.at("kind");
    EXPECT_EQ(labels.at("cluster"), "scrape-test");
    EXPECT_EQ(labels.at("mode"), "reactor");
  }
  for (const Process& p : processes) EXPECT_EQ(kind_of[p.name], to_string(p.kind)) << p.name;
  EXPECT_EQ(api.result("up{group=\"sampler\"}").size(), 2U);
  // honor_labels: the processes' own node/kind/mode labels are kept, never renamed exported_*.
  EXPECT_TRUE(api.result("{__name__=~\".+\", exported_node=~\".+\"}").empty());
  EXPECT_FALSE(api.result("{__name__=~\"tagflow_.+\", node=\"sampler-1\"}").empty());

  // 4b. Every catalogue family, from exactly the processes whose kind exports it.
  for (const MetricSpec& s : catalogue()) {
    if (s.source == MetricSource::scrape) continue;
    const std::string series = s.type == MetricType::histogram ? s.name + "_count" : s.name;
    std::set<std::string> expected;
    for (const Process& p : processes) {
      if (s.exported_by(p.kind)) expected.insert(p.name);
    }
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

  // 4c. Every dashboard query is valid PromQL and returns data once counters have two samples.
  // (Waits until every target has been scraped at least twice, so rate() has two samples.)
  ASSERT_TRUE(wait_until(
      30s, [&] { return api.result("count_over_time(up[1m]) >= 2").size() == processes.size(); }));
  const auto queries = tagflow::testing::dashboard_queries(tagflow::testing::load_dashboard());
  for (const auto& q : queries) {
    const std::string promql = tagflow::testing::substitute_variables(q.expr, "scrape-test", "1m");
    const nlohmann::json answer = api.query(promql);
    ASSERT_FALSE(answer.is_discarded()) << promql;
    EXPECT_EQ(answer.value("status", ""), "success") << q.panel << ": " << promql << "\n"
                                                     << answer.dump();
    if (answer.value("status", "") == "success") {
      EXPECT_FALSE(answer.at("data").at("result").empty()) << q.panel << ": " << promql;
    }
  }
  // A query naming another cluster finds nothing: the cluster label really filters.
  EXPECT_TRUE(api.result("tagflow_env_steps_total{cluster=~\"other\"}").empty());

  // 4d. promtool accepts what every endpoint serves.
  for (const Process& p : processes) {
    const auto page = http_get(p.port, "/metrics");
    ASSERT_EQ(page.status, 200) << p.name;
    const std::string path = (dir / (p.name + ".metrics")).string();
    std::ofstream(path) << page.body;
    const auto check = tagflow::testing::run_command("promtool check metrics < " + path + " 2>&1");
    EXPECT_EQ(check.exit_code, 0) << p.name << ":\n" << check.output;
  }

  // Stop everything in parallel (each exporter's endpoint takes ~2 s to close), then reap.
  prometheus.request_stop();
  for (auto& exporter : exporters) exporter->request_stop();
  for (auto& exporter : exporters) EXPECT_EQ(exporter->terminate(), 0);
  prometheus.terminate();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tagflow::monitoring
