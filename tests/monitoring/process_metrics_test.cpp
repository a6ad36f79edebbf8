// Tests of monitoring/process_metrics.hpp through the text a scrape returns (no HTTP): names,
// types, labels, values, misuse errors, and `promtool check metrics` on the text of every kind.
#include "monitoring/process_metrics.hpp"

#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "tests/monitoring/synthetic_metrics.hpp"
#include "tests/support/kind_families.hpp"
#include "tests/support/run_command.hpp"

namespace tagflow::monitoring {
namespace {

const std::string kKinds[] = {"coordinator", "sampler", "replay", "learner", "inference"};

std::vector<std::string> sample_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  return lines;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ProcessMetrics, ExportsExactlyTheCatalogueFamiliesOfItsKind) {
  for (const std::string& kind : kKinds) {
    ProcessMetrics metrics({"p", kind, "reactor"});
    // Families with per-series labels appear once they have a series.
    tagflow::testing::fill_synthetic_metrics(metrics, 1);
    const std::string text = metrics.text();
    for (const MetricSpec& s : catalogue()) {
      const std::string type_line = "# TYPE " + s.name + " " + to_string(s.type) + "\n";
      const bool expected = s.source != MetricSource::scrape && s.exported_by(kind);
      EXPECT_EQ(contains(text, type_line), expected) << kind << ": " << s.name;
      if (expected) {
        EXPECT_TRUE(contains(text, "# HELP " + s.name + " " + s.help)) << s.name;
      }
    }
  }
}

TEST(ProcessMetrics, EverySeriesCarriesNodeKindAndModeLabels) {
  ProcessMetrics metrics({"sampler-1", "sampler", "actor"}, tagflow::test::families("sampler"));
  metrics.counter(Metric::transport_messages_sent, {{"peer", "replay"}}).Increment();
  const std::vector<std::string> lines = sample_lines(metrics.text());
  ASSERT_GT(lines.size(), 10U);
  for (const std::string& line : lines) {
    EXPECT_TRUE(contains(line, "node=\"sampler-1\"")) << line;
    EXPECT_TRUE(contains(line, "kind=\"sampler\"")) << line;
    EXPECT_TRUE(contains(line, "mode=\"actor\"")) << line;
  }
}

TEST(ProcessMetrics, UnlabelledFamiliesAreExportedAsZeroBeforeTheFirstUpdate) {
  ProcessMetrics metrics({"learner", "learner", "reactor"}, tagflow::test::families("learner"));
  const std::string text = metrics.text();
  EXPECT_TRUE(contains(
      text,
      "tagflow_learner_updates_total{kind=\"learner\",mode=\"reactor\",node=\"learner\"} 0\n"));
  EXPECT_TRUE(contains(text,
                       "tagflow_learner_update_duration_seconds_count{kind=\"learner\","
                       "mode=\"reactor\",node=\"learner\"} 0\n"));
  EXPECT_TRUE(contains(text,
                       "tagflow_build_info{kind=\"learner\",mode=\"reactor\","
                       "node=\"learner\",version=\""));
}

TEST(ProcessMetrics, UpdatesShowInTheTextWithTheirPerSeriesLabels) {
  ProcessMetrics metrics({"inference", "inference", "reactor"},
                         tagflow::test::families("inference"));
  metrics.counter("tagflow_inference_requests_total").Increment(64);
  metrics.counter(Metric::transport_received_bytes, {{"peer", "sampler-0"}}).Increment(1024);
  prometheus::Histogram& latency = metrics.histogram("tagflow_inference_request_duration_seconds");
  latency.Observe(0.0007);
  latency.Observe(0.003);
  metrics.histogram("tagflow_inference_batch_size").Observe(64);
  const std::string text = metrics.text();
  const std::string labels = "kind=\"inference\",mode=\"reactor\",node=\"inference\"";
  EXPECT_TRUE(contains(text, "tagflow_inference_requests_total{" + labels + "} 64\n"));
  EXPECT_TRUE(contains(
      text, "tagflow_transport_received_bytes_total{" + labels + ",peer=\"sampler-0\"} 1024\n"));
  EXPECT_TRUE(contains(
      text, "tagflow_inference_request_duration_seconds_bucket{" + labels + ",le=\"0.0005\"} 0\n"));
  EXPECT_TRUE(contains(
      text, "tagflow_inference_request_duration_seconds_bucket{" + labels + ",le=\"0.001\"} 1\n"));
  EXPECT_TRUE(contains(
      text, "tagflow_inference_request_duration_seconds_bucket{" + labels + ",le=\"+Inf\"} 2\n"));
  EXPECT_TRUE(
      contains(text, "tagflow_inference_request_duration_seconds_count{" + labels + "} 2\n"));
  EXPECT_TRUE(contains(text, "tagflow_inference_batch_size_bucket{" + labels + ",le=\"64\"} 1\n"));
}

TEST(ProcessMetrics, TheSameLabelsGiveTheSameSeries) {
  ProcessMetrics metrics({"replay", "replay", "reactor"}, tagflow::test::families("replay"));
  prometheus::Counter& a =
      metrics.counter("tagflow_replay_transitions_inserted_total", {{"table", "t"}});
  prometheus::Counter& b =
      metrics.counter("tagflow_replay_transitions_inserted_total", {{"table", "t"}});
  prometheus::Counter& c =
      metrics.counter("tagflow_replay_transitions_inserted_total", {{"table", "u"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &c);
}

TEST(ProcessMetrics, RejectsMisuseAsProgrammerErrors) {
  ProcessMetrics metrics({"sampler-0", "sampler", "reactor"}, tagflow::test::families("sampler"));
  // Wrong type.
  EXPECT_THROW((void)metrics.gauge("tagflow_env_steps_total"), std::logic_error);
  // A family samplers do not export.
  EXPECT_THROW((void)metrics.counter("tagflow_learner_updates_total"), std::logic_error);
  // Families the registry does not own.
  EXPECT_THROW((void)metrics.counter(Metric::process_cpu_seconds), std::logic_error);
  EXPECT_THROW((void)metrics.gauge(Metric::up), std::logic_error);
  // Missing, extra or misspelt per-series labels.
  EXPECT_THROW((void)metrics.counter(Metric::transport_messages_sent), std::logic_error);
  EXPECT_THROW((void)metrics.counter(Metric::transport_messages_sent, {{"pear", "x"}}),
               std::logic_error);
  EXPECT_THROW((void)metrics.counter("tagflow_env_steps_total", {{"peer", "x"}}), std::logic_error);
  EXPECT_THROW((void)metrics.counter(Metric::transport_invalid_messages, {{"peer", "x"}}),
               std::logic_error);
  EXPECT_THROW(ProcessMetrics({"", "sampler", "reactor"}), std::invalid_argument);
}

TEST(ProcessMetrics, ConcurrentIncrementsFromManyThreadsAreAllCounted) {
  ProcessMetrics metrics({"sampler-0", "sampler", "reactor"}, tagflow::test::families("sampler"));
  constexpr int kThreads = 4;
  constexpr int kIncrements = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&metrics, t] {
      prometheus::Counter& steps = metrics.counter("tagflow_env_steps_total");
      prometheus::Counter& sent =
          metrics.counter(Metric::transport_messages_sent, {{"peer", "p" + std::to_string(t % 2)}});
      for (int i = 0; i < kIncrements; ++i) {
        steps.Increment();
        sent.Increment();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(metrics.counter("tagflow_env_steps_total").Value(), kThreads * kIncrements);
  EXPECT_EQ(metrics.counter(Metric::transport_messages_sent, {{"peer", "p0"}}).Value(),
            kThreads / 2 * kIncrements);
}

TEST(ProcessMetrics, PromtoolAcceptsTheTextOfEveryProcessKind) {
  for (const std::string& kind : kKinds) {
    ProcessMetrics metrics({kind + "-0", kind, "reactor"});
    tagflow::testing::fill_synthetic_metrics(metrics, 3);
    // Label values that need escaping in the text format.
    metrics
        .counter(Metric::transport_invalid_messages,
                 {{"peer", "a \"quoted\"\\peer"}, {"reason", "line\nbreak"}})
        .Increment();
    const std::string path = ::testing::TempDir() + "metrics_" + kind + ".txt";
    std::ofstream(path) << metrics.text();
    const tagflow::testing::CommandResult result =
        tagflow::testing::run_command("promtool check metrics < " + path + " 2>&1");
    EXPECT_EQ(result.exit_code, 0) << kind << ":\n" << result.output;
  }
}

}  // namespace
}  // namespace tagflow::monitoring
