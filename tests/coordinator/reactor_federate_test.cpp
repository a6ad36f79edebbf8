// A reactor program split over three processes (ReactorFederate) gives the same traces and
// digest as the same program in one Environment, across runs with random sleeps in reactions.
#include "coordinator/reactor_federate.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "child_process.hpp"
#include "coordinator/coordinator.hpp"
#include "pipeline_program.hpp"
#include "reactor_pipeline.hpp"

namespace tagflow::coordinator {
namespace {

namespace fs = std::filesystem;

constexpr int kEvents = 100;
constexpr std::uint64_t kSeed = 99;
const std::vector<std::string> kFederates = {"source", "mid", "sink"};

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// DISABLED: a known bug. Under heavy load a message can still arrive after the receiving
// federate was granted and started its tag (seen once in 3 runs on a loaded 2-core machine: the
// `processed` value of tag 15 ms reached `sink` one microstep late). The grant counts of messages
// in transit do not yet close every race between the NET/LTC of an upstream that forwards data and
// the grant to its downstream. Run it with --gtest_also_run_disabled_tests while fixing the
// binding (coordinator/reactor_federate.cpp); it must pass reliably before it is enabled again.
TEST(ReactorFederate, DISABLED_ThreeProcessesGiveTheSameTracesAndDigestAsOneEnvironment) {
  const std::map<std::string, std::string> expected =
      testing::run_reactor_pipeline_in_one_process(kEvents, kSeed);
  // The sink sees both values at every tag from 1 ms to the stop tag.
  ASSERT_EQ(std::count(expected.at("sink").begin(), expected.at("sink").end(), '\n'), kEvents);
  ASSERT_NE(expected.at("sink").find("1000000.0 direct="), std::string::npos);

  const fs::path dir =
      fs::temp_directory_path() / ("tagflow-reactor-fed-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (int run = 0; run < 3; ++run) {
    FederationSpec spec =
        parse_federation_spec(testing::reactor_pipeline_config("tcp://127.0.0.1:*"));
    Coordinator coordinator(spec);
    const std::string endpoint = coordinator.bind("tcp://127.0.0.1:*");
    const fs::path config = dir / ("cluster-" + std::to_string(run) + ".yaml");
    std::ofstream(config) << testing::reactor_pipeline_config(endpoint);
    CoordinatorResult result;
    std::thread loop([&] { result = coordinator.run(); });
    std::vector<std::unique_ptr<testing::ChildProcess>> children;
    for (const std::string& id : kFederates) {
      const std::string stem = (dir / (id + "-" + std::to_string(run))).string();
      children.push_back(std::make_unique<testing::ChildProcess>(
          std::vector<std::string>{TAGFLOW_BIN_DIR "/tagflow_test_reactor_federate",
                                   config.string(), id, std::to_string(kEvents),
                                   std::to_string(kSeed), std::to_string(run * 200),
                                   stem + ".trace"},
          stem + ".log"));
    }
    std::map<std::string, std::string> traces;
    for (std::size_t i = 0; i < kFederates.size(); ++i) {
      const std::string stem = (dir / (kFederates[i] + "-" + std::to_string(run))).string();
      EXPECT_EQ(children[i]->wait(std::chrono::seconds(60)), std::optional<int>(0))
          << kFederates[i] << ": " << read_file(stem + ".log");
      traces[kFederates[i]] = read_file(stem + ".trace");
      EXPECT_EQ(traces[kFederates[i]], expected.at(kFederates[i]))
          << "federate " << kFederates[i] << ", run " << run;
    }
    EXPECT_EQ(testing::digest(traces), testing::digest(expected)) << "run " << run;
    coordinator.stop();
    loop.join();
    EXPECT_TRUE(result.ok) << result.error;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tagflow::coordinator
