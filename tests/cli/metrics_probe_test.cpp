// Tests of cli/launch/metrics_probe.hpp: the text-format parser on its own, and the HTTP/1.0
// client against a real monitoring::MetricsEndpoint on loopback (one endpoint: each one that served
// a scrape takes about 2 s to shut down).
#include "cli/launch/metrics_probe.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "monitoring/metrics_endpoint.hpp"
#include "monitoring/process_metrics.hpp"
#include "tests/support/kind_families.hpp"

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;

TEST(ParseExposition, SumsTheSeriesOfEachRequestedFamily) {
  const std::string text =
      "# HELP tagflow_env_steps_total Environment steps taken.\n"
      "# TYPE tagflow_env_steps_total counter\n"
      "tagflow_env_steps_total{kind=\"sampler\",node=\"sampler-0\"} 1200\n"
      "tagflow_env_steps_total{kind=\"sampler\",node=\"sampler-1\"} 800 1700000000000\n"
      "tagflow_weights_version 42\n"
      "tagflow_episode_return_mean{node=\"sampler-0\"} 17.5\n";
  const auto values = parse_exposition(
      text, {"tagflow_env_steps_total", "tagflow_weights_version", "tagflow_episode_return_mean"});
  ASSERT_EQ(values.size(), 3U);
  EXPECT_DOUBLE_EQ(values.at("tagflow_env_steps_total"), 2000.0);
  EXPECT_DOUBLE_EQ(values.at("tagflow_weights_version"), 42.0);
  EXPECT_DOUBLE_EQ(values.at("tagflow_episode_return_mean"), 17.5);
}

TEST(ParseExposition, MatchesWholeNamesOnlyAndSkipsWhatItCannotRead) {
  const std::string text =
      "tagflow_env_steps_total_created 99\n"  // another name with the same prefix
      "tagflow_env_steps 98\n"                // a prefix of the name
      "tagflow_env_steps_total{node=\"a\"} notanumber\n"
      "tagflow_env_steps_total{node=\"unterminated 5\n"
      "tagflow_env_steps_total\n"  // no value
      "   # an indented comment\n"
      "\n"
      "tagflow_env_steps_total{node=\"x\"} 7";  // last line without a newline
  const auto values = parse_exposition(text, {"tagflow_env_steps_total"});
  ASSERT_EQ(values.count("tagflow_env_steps_total"), 1U);
  EXPECT_DOUBLE_EQ(values.at("tagflow_env_steps_total"), 7.0);
}

TEST(ParseExposition, LabelValuesMayHoldBracesQuotesAndSpaces) {
  const std::string text =
      "tagflow_learner_updates_total{peer=\"a } b\",note=\"say \\\"hi\\\" }\"} 3\n"
      "tagflow_learner_updates_total{peer=\"c\"} 4\n";
  const auto values = parse_exposition(text, {"tagflow_learner_updates_total"});
  EXPECT_DOUBLE_EQ(values.at("tagflow_learner_updates_total"), 7.0);
}

TEST(ParseExposition, AFamilyThatIsAbsentIsLeftOut) {
  EXPECT_TRUE(parse_exposition("other_metric 1\n", {"tagflow_env_steps_total"}).empty());
  EXPECT_TRUE(parse_exposition("", {"tagflow_env_steps_total"}).empty());
}

TEST(ParseLabelValues, SumsOneFamilyPerValueOfOneLabel) {
  const std::string text =
      "# TYPE tagflow_actor_members gauge\n"
      "tagflow_actor_members{kind=\"replay\",mode=\"actor\",node=\"replay\",peer=\"sampler-0\"} 1\n"
      "tagflow_actor_members{peer=\"sampler-2\",node=\"a,b}\\\"c\"} 0\n"
      "tagflow_actor_members{peer=\"sampler-0\"} 1\n"
      "tagflow_actor_members_other{peer=\"sampler-9\"} 1\n"
      "tagflow_actor_members{node=\"replay\"} 1\n"     // no peer label: skipped
      "tagflow_actor_members{peer=\"sampler-3\"} x\n"  // not a number: skipped
      "tagflow_actor_members{peer=\"sampler-4} 1\n";   // unterminated: skipped
  const auto members = parse_label_values(text, "tagflow_actor_members", "peer");
  ASSERT_EQ(members.size(), 2U);
  EXPECT_DOUBLE_EQ(members.at("sampler-0"), 2.0);
  EXPECT_DOUBLE_EQ(members.at("sampler-2"), 0.0);
  EXPECT_TRUE(parse_label_values("", "tagflow_actor_members", "peer").empty());
}

/// A loopback port nothing listens on (bound, then closed again).
std::uint16_t closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

TEST(MetricsProbe, AnEndpointThatDoesNotAnswerIsReportedNotThrown) {
  const ProbeResult result =
      probe_metrics("127.0.0.1", closed_port(), {"tagflow_env_steps_total"}, 200ms);
  EXPECT_FALSE(result.answered);
  EXPECT_TRUE(result.values.empty());
  EXPECT_FALSE(http_get("no-such-host.invalid", 80, "/metrics", 200ms).has_value());
}

TEST(MetricsProbe, AListenerThatNeverAnswersTimesOut) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  // The kernel completes the connection; nobody ever reads the request or replies.
  EXPECT_FALSE(http_get("127.0.0.1", ntohs(address.sin_port), "/metrics", 150ms).has_value());
  ::close(fd);
}

TEST(MetricsProbe, ReadsTheFamiliesOfARealMetricsEndpoint) {
  monitoring::ProcessMetrics metrics({"sampler-1", "sampler", "reactor"},
                                     tagflow::test::families("sampler"));
  metrics.counter("tagflow_env_steps_total").Increment(4096);
  metrics.counter("tagflow_episodes_total").Increment(12);
  metrics.gauge("tagflow_episode_return_mean").Set(87.25);
  metrics.gauge("tagflow_weights_version").Set(31);
  const monitoring::MetricsEndpoint endpoint(metrics, "127.0.0.1", 0);

  const ProbeResult result = probe_metrics(
      "127.0.0.1", endpoint.port(),
      {"tagflow_env_steps_total", "tagflow_episodes_total", "tagflow_episode_return_mean",
       "tagflow_weights_version", "tagflow_learner_updates_total"},
      2s);
  ASSERT_TRUE(result.answered);
  EXPECT_DOUBLE_EQ(result.values.at("tagflow_env_steps_total"), 4096.0);
  EXPECT_DOUBLE_EQ(result.values.at("tagflow_episodes_total"), 12.0);
  EXPECT_DOUBLE_EQ(result.values.at("tagflow_episode_return_mean"), 87.25);
  EXPECT_DOUBLE_EQ(result.values.at("tagflow_weights_version"), 31.0);
  EXPECT_EQ(result.values.count("tagflow_learner_updates_total"), 0U);  // not a sampler family

  EXPECT_TRUE(result.members.empty());  // no sampler is linked to a sampler

  // Another path than /metrics is not a 200.
  EXPECT_FALSE(http_get("127.0.0.1", endpoint.port(), "/nothing-here", 2s).has_value());
}

}  // namespace
}  // namespace tagflow::cli
