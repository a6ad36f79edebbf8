// Tests of cli/launch/progress_reporter.hpp against a real monitoring::MetricsEndpoint: the line it
// prints (stderr redirected to a file) shows the sampler that answered and the one that did not.
#include "cli/launch/progress_reporter.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "monitoring/metrics_endpoint.hpp"
#include "monitoring/process_metrics.hpp"
#include "tests/support/kind_families.hpp"

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ProgressReporter, PrintsTheLineOfTheEndpointsThatAnswerAsNewLinesWhenNotATerminal) {
  monitoring::ProcessMetrics metrics({"sampler-0", "sampler", "reactor"},
                                     tagflow::test::families("sampler"));
  metrics.counter("tagflow_episodes_total").Increment(3);
  metrics.gauge("tagflow_episode_return_mean").Set(21.5);
  metrics.gauge("tagflow_weights_version").Set(12);
  const monitoring::MetricsEndpoint endpoint(metrics, "127.0.0.1", 0);

  std::vector<cluster::ScrapeTarget> targets{
      {"coordinator", "coordinator", "coordinator", "127.0.0.1", 1},
      {"sampler-0", "sampler", "sampler", "127.0.0.1", endpoint.port()},
      // Nothing listens on port 1: this sampler never answers.
      {"sampler-1", "sampler", "sampler", "127.0.0.1", 1}};

  const std::string log = ::testing::TempDir() + "progress_reporter_stderr.txt";
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  const int file = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(file, 0);
  ::dup2(file, STDERR_FILENO);
  std::string text;
  {
    ProgressReporter reporter(targets, /*terminal=*/false);
    reporter.start();
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (read_file(log).find('\n') == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
    reporter.stop();
  }
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(file);
  text = read_file(log);

  ASSERT_NE(text.find('\n'), std::string::npos) << "no progress line within 20 s";
  const std::string first = text.substr(0, text.find('\n'));
  EXPECT_EQ(first.find('\r'), std::string::npos) << first;  // not a terminal: plain lines
  EXPECT_NE(first.find("| return 21.5 | weights v12 | samplers 1/2"), std::string::npos) << first;
}

}  // namespace
}  // namespace tagflow::cli
