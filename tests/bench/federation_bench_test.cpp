// `tagflow bench federation --quick` as users run it: every federation of the benchmark finishes
// (a federate that loses its RESIGN ends the run, or hangs it), and each row stands beside its
// ceiling and the machine's floor, all measured in the same run. Shape only, never speed.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/bench_run.hpp"

namespace tagflow::bench {
namespace {

TEST(FederationBench, EveryFederationFinishesBesideItsRawCeilingAndTheSocketFloor) {
  const testing::BenchRun run = testing::run_quick_bench("federation");
  ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
  const nlohmann::json& doc = run.doc;
  EXPECT_EQ(doc.at("benchmark"), "federation");
  for (const auto& [name, value] : run.values) EXPECT_GT(value, 0.0) << name;
  for (const char* row :
       {"raw_zmq_round_trip", "raw_zmq_round_trip_shared_context", "raw_unix_socket_round_trip",
        "chain_2_federates", "chain_8_federates", "fan_out_in_8_federates", "two_federate_tag",
        "two_federate_tag_after_0", "link_1MiB_raw_zmq", "link_1MiB_federated"}) {
    EXPECT_EQ(run.values.count(row), 1U) << row;
  }
  for (const char* ratio :
       {"raw_zmq_round_trip/raw_unix_socket_round_trip",
        "two_federate_tag_after_0/raw_unix_socket_round_trip",
        "two_federate_tag_after_0/raw_round_trip", "link_1MiB: federated/raw"}) {
    EXPECT_TRUE(doc.at("ratios").contains(ratio)) << ratio;
  }
  // The tables alone: the coordinators' join and resign lines stay out of them.
  EXPECT_EQ(run.command.output.find("[info]"), std::string::npos) << run.command.output;
  std::filesystem::remove(run.json_path);
}

}  // namespace
}  // namespace tagflow::bench
