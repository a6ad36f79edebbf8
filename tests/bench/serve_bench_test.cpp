// `tagflow bench serve --quick` as users run it: the inference service at 1, 4 and 16 clients and
// the raw ZeroMQ round trip of the same bytes report their figures, and the ratios compare figures
// of the same run. Shape only, never speed: performance is judged by running the benchmark.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/support/run_command.hpp"

namespace tagflow::bench {
namespace {

TEST(ServeBench, EveryClientCountReportsThroughputAndLatencyBesideTheRawRoundTrip) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the benchmark runs in tagflow-torch";
  const std::string path = ::testing::TempDir() + "serve_bench.json";
  std::filesystem::remove(path);
  const auto result = testing::run_command(testing::tagflow_binary() +
                                           " bench serve --quick --json " + path + " 2>&1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["benchmark"], "serve");
  std::set<std::string> names;
  for (const auto& r : doc["results"]) names.insert(r["name"].get<std::string>());
  for (const char* name : {"raw_round_trip_p50", "raw_round_trip_p99", "busy_replies"}) {
    EXPECT_EQ(names.count(name), 1U) << name;
  }
  for (const char* clients : {"1", "4", "16"}) {
    for (const char* figure : {"_agent_actions", "_p50", "_p99"}) {
      EXPECT_EQ(names.count(std::string("service_") + clients + "_clients" + figure), 1U)
          << clients << figure;
    }
  }
  EXPECT_TRUE(doc["ratios"].contains("p50_1_client: raw/service"));
  EXPECT_TRUE(doc["ratios"].contains("actions_16_clients: service/raw"));
}

}  // namespace
}  // namespace tagflow::bench
