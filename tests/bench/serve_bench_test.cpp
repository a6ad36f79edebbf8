// `tagflow bench serve --quick` as users run it: the inference service at 1, 4 and 16 clients and
// the raw ZeroMQ round trip of the same bytes report their figures, and the ratios compare figures
// of the same run. Shape only, never speed: performance is judged by running the benchmark.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/bench_run.hpp"

namespace tagflow::bench {
namespace {

TEST(ServeBench, EveryClientCountReportsThroughputAndLatencyBesideTheRawRoundTrip) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the benchmark runs in tagflow-torch";
  const testing::BenchRun run = testing::run_quick_bench("serve");
  ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
  const nlohmann::json& doc = run.doc;
  EXPECT_EQ(doc.at("benchmark"), "serve");
  const std::map<std::string, double>& names = run.values;
  for (const char* name : {"raw_round_trip_p50", "raw_round_trip_p99", "busy_replies"}) {
    EXPECT_EQ(names.count(name), 1U) << name;
  }
  for (const char* clients : {"1", "4", "16"}) {
    for (const char* figure : {"_agent_actions", "_p50", "_p99"}) {
      EXPECT_EQ(names.count(std::string("service_") + clients + "_clients" + figure), 1U)
          << clients << figure;
    }
  }
  EXPECT_TRUE(doc.at("ratios").contains("p50_1_client: raw/service"));
  EXPECT_TRUE(doc.at("ratios").contains("actions_16_clients: service/raw"));
}

}  // namespace
}  // namespace tagflow::bench
