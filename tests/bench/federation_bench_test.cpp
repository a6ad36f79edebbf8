// `tagflow bench federation --quick` as users run it: every federation of the benchmark finishes
// (a federate that loses its RESIGN ends the run, or hangs it), and each row stands beside its
// ceiling and the machine's floor, all measured in the same run. Shape only, never speed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/support/run_command.hpp"

namespace tagflow::bench {
namespace {

TEST(FederationBench, EveryFederationFinishesBesideItsRawCeilingAndTheSocketFloor) {
  const std::string path =
      ::testing::TempDir() + "federation_bench_" + std::to_string(::getpid()) + ".json";
  std::filesystem::remove(path);
  const auto result = testing::run_command(testing::tagflow_binary() +
                                           " bench federation --quick --json " + path + " 2>&1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["benchmark"], "federation");
  std::set<std::string> names;
  for (const auto& r : doc["results"]) {
    names.insert(r["name"].get<std::string>());
    EXPECT_GT(r["value"].get<double>(), 0.0) << r["name"];
  }
  for (const char* row :
       {"raw_zmq_round_trip", "raw_zmq_round_trip_shared_context", "raw_unix_socket_round_trip",
        "chain_2_federates", "chain_8_federates", "fan_out_in_8_federates", "two_federate_tag",
        "two_federate_tag_after_0", "link_1MiB_raw_zmq", "link_1MiB_federated"}) {
    EXPECT_EQ(names.count(row), 1U) << row;
  }
  for (const char* ratio :
       {"raw_zmq_round_trip/raw_unix_socket_round_trip",
        "two_federate_tag_after_0/raw_unix_socket_round_trip",
        "two_federate_tag_after_0/raw_round_trip", "link_1MiB: federated/raw"}) {
    EXPECT_TRUE(doc["ratios"].contains(ratio)) << ratio;
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tagflow::bench
