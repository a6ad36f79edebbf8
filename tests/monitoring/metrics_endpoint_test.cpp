// Tests of monitoring/metrics_endpoint.hpp over real HTTP on loopback. Each endpoint that served
// a scrape takes about 2 s to shut down (civetweb), so this file keeps to one such scrape.
#include "monitoring/metrics_endpoint.hpp"

#include <gtest/gtest.h>

#include "monitoring/process_metrics.hpp"
#include "tests/monitoring/http_get.hpp"

namespace tagflow::monitoring {
namespace {

TEST(MetricsEndpoint, ServesTheProcessMetricsTextOnSlashMetrics) {
  ProcessMetrics metrics({"replay", ProcessKind::replay, cluster::Mode::reactor});
  metrics.gauge(Metric::replay_transitions, {{"table", "main"}}).Set(1234);
  const MetricsEndpoint endpoint(metrics, "127.0.0.1", 0);
  ASSERT_NE(endpoint.port(), 0);
  EXPECT_EQ(endpoint.url(), "http://127.0.0.1:" + std::to_string(endpoint.port()) + "/metrics");

  const tagflow::testing::HttpResponse response =
      tagflow::testing::http_get(endpoint.port(), "/metrics");
  ASSERT_EQ(response.status, 200);
  EXPECT_NE(response.body.find("tagflow_replay_transitions{kind=\"replay\",mode=\"reactor\","
                               "node=\"replay\",table=\"main\"} 1234\n"),
            std::string::npos)
      << response.body;
  // The process collector is served too.
  EXPECT_NE(response.body.find("process_resident_memory_bytes{kind=\"replay\""), std::string::npos);
}

TEST(MetricsEndpoint, RefusesAPortThatIsAlreadyTakenWithAnErrorNamingIt) {
  ProcessMetrics metrics({"sampler-0", ProcessKind::sampler, cluster::Mode::reactor});
  const MetricsEndpoint first(metrics, "127.0.0.1", 0);
  const std::string taken = "127.0.0.1:" + std::to_string(first.port());
  try {
    const MetricsEndpoint second(metrics, "127.0.0.1", first.port());
    ADD_FAILURE() << "a second endpoint bound " << taken;
  } catch (const MonitoringError& e) {
    EXPECT_NE(std::string(e.what()).find(taken), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tagflow::monitoring
