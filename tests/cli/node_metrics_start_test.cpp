// A reactor-mode node process's metrics endpoint, scraped as soon as it answers: the series
// monitoring/README.md says are there from the start (a federate's messages and bytes per peer,
// its grants per `by`, waiting_for_start at 1 until START) are in the very first page, before any
// coordinator exists. `tagflow node` runs one replica of configs/local.yaml with no coordinator,
// so it waits for START for as long as the test looks.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "monitoring/http_get.hpp"
#include "tests/support/cluster_files.hpp"
#include "tests/support/run_command.hpp"

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

TEST(NodeMetricsAtStart, TheFirstPageHasEverySeriesKnownAtTheStartAndWaitingForStart) {
  const int base = testing::free_local_cluster_ports();
  testing::LocalClusterOptions options;
  options.port = testing::local_cluster_ports_from(base);
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("node_metrics_start_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "local.yaml";
  std::ofstream(file) << testing::local_cluster_yaml(options);
  const auto metrics_port = static_cast<std::uint16_t>(options.port(9480));  // the replay's

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string binary = testing::tagflow_binary();
    const std::string config = file.string();
    const std::string log = (dir / "replay.log").string();
    std::freopen(log.c_str(), "w", stderr);
    std::freopen(log.c_str(), "a", stdout);
    ::execl(binary.c_str(), binary.c_str(), "node", "--config", config.c_str(), "--name", "replay",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // The first page the endpoint serves, polled as fast as a scraper could.
  std::optional<std::string> page;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!page && std::chrono::steady_clock::now() < deadline) {
    page = monitoring::http_get("127.0.0.1", metrics_port, "/metrics", 200ms);
    if (!page) std::this_thread::sleep_for(1ms);
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(page.has_value()) << "no metrics page within 20 s";
  const std::string labels = "kind=\"replay\",mode=\"reactor\",node=\"replay\"";
  EXPECT_NE(page->find("tagflow_federation_waiting_for_start{" + labels + "} 1\n"),
            std::string::npos)
      << *page;
  for (const char* peer : {"sampler-0", "sampler-1", "learner"}) {
    SCOPED_TRACE(peer);
    EXPECT_NE(page->find("tagflow_transport_messages_received_total{" + labels + ",peer=\"" + peer +
                         "\"} 0\n"),
              std::string::npos)
        << *page;
  }
  EXPECT_NE(
      page->find("tagflow_transport_messages_sent_total{" + labels + ",peer=\"learner\"} 0\n"),
      std::string::npos)
      << *page;
  for (const char* by : {"coordinator", "upstreams"}) {
    SCOPED_TRACE(by);
    EXPECT_NE(page->find("tagflow_federation_grants_total{" + labels + ",by=\"" + std::string(by) +
                         "\"} 0\n"),
              std::string::npos)
        << *page;
  }
  testing::remove_unless_failed(dir);
}

}  // namespace
}  // namespace tagflow::cli
