#include "tracing/trace_summary.hpp"

#include <gtest/gtest.h>

#include "tests/tracing/trace_files_support.hpp"

namespace tagflow::tracing {
namespace {

using testing::event;
using testing::fresh_log_dir;
using testing::write_process;

/// The sampler computes, then sends; the replay waits for a grant, takes the sampler's message
/// inside that wait, waits for its data a little longer, then computes.
std::vector<ProcessTraceFile> two_federates() {
  const auto dir = fresh_log_dir("summary");
  write_process(dir, "sampler-0", "", 0, {{"sampler-0 worker 0", "sampler-0"}},
                {event("reaction", 0, 1'000'000, 0, 5'000'000, "sampler-0.step"),
                 event("send", 1'000'000, 200'000, 0, 5'000'000, "sampler-0", "replay", 65536, 10),
                 event("wait_grant", 1'200'000, 800'000, 0, 6'000'000, "")});
  write_process(
      dir, "replay", "", 0, {{"replay worker 0", "replay"}},
      {event("wait_grant", 0, 1'500'000, 0, 5'000'000, ""),
       event("receive", 1'300'000, 100'000, 0, 5'000'000, "replay", "sampler-0", 65536, 10),
       event("wait_data", 1'500'000, 500'000, 0, 5'000'000, ""),
       event("reaction", 2'000'000, 2'000'000, 0, 5'000'000, "replay.insert"),
       event("wait_socket", 4'000'000, 1'000'000, 0, -1, "")});
  return read_trace_dir(dir.string());
}

TEST(TraceSummary, EachInstantOfAFederatesWallTimeCountsOnceForWhatItWasDoing) {
  const TraceSummary summary = summarize_trace(two_federates());
  ASSERT_EQ(summary.federates.size(), 2U);
  const FederateTime& replay = summary.federates[0];  // files in name order
  EXPECT_EQ(replay.federate, "replay");
  EXPECT_EQ(replay.wall_ns, 5'000'000);
  EXPECT_EQ(replay.ns[kComputing], 2'000'000);
  EXPECT_EQ(replay.ns[kMessaging], 100'000);  // taken inside the grant's wait
  EXPECT_EQ(replay.ns[kWaitingForGrant], 1'400'000);
  EXPECT_EQ(replay.ns[kWaitingForData], 500'000);
  EXPECT_EQ(replay.ns[kOther], 1'000'000);
  EXPECT_EQ(replay.reactions, 1U);
  const FederateTime& sampler = summary.federates[1];
  EXPECT_EQ(sampler.ns[kComputing], 1'000'000);
  EXPECT_EQ(sampler.ns[kMessaging], 200'000);
  EXPECT_EQ(sampler.ns[kWaitingForGrant], 800'000);
  std::int64_t total = 0;
  for (const std::int64_t ns : sampler.ns) total += ns;
  EXPECT_EQ(total, sampler.wall_ns);
}

TEST(TraceSummary, TheSlowestTagsCriticalPathGoesThroughTheLastMessageToItsSender) {
  const TraceSummary summary = summarize_trace(two_federates(), 1);
  EXPECT_EQ(summary.tags, 1U);  // work (reactions, messages) only at tag 5 ms
  ASSERT_EQ(summary.slowest.size(), 1U);
  const SlowTag& slow = summary.slowest[0];
  EXPECT_EQ(slow.tag, Tag(5'000'000, 0));
  EXPECT_EQ(slow.wall_ns, 4'000'000);  // the sampler's reaction at 0 to the replay's end at 4 ms
  ASSERT_EQ(slow.chain.size(), 2U);
  EXPECT_NE(slow.chain[0].find("replay waited 0.500 ms for data"), std::string::npos)
      << slow.chain[0];
  EXPECT_NE(slow.chain[0].find("sampler-0 → replay transitions[0]"), std::string::npos)
      << slow.chain[0];
  EXPECT_NE(slow.chain[1].find("sampler-0 had tag (5000000, 0) without waiting"), std::string::npos)
      << slow.chain[1];
  const std::string table = summary.table();
  EXPECT_NE(table.find("replay"), std::string::npos);
  EXPECT_NE(table.find("40.0%"), std::string::npos) << table;  // the replay's computing
  const std::string svg = summary.svg("a <run>");
  EXPECT_EQ(svg.rfind("<svg", 0), 0U);
  EXPECT_NE(svg.find("a &lt;run>"), std::string::npos);
  std::size_t bars = 0;
  for (std::size_t at = svg.find("class=\"federate\""); at != std::string::npos;
       at = svg.find("class=\"federate\"", at + 1)) {
    ++bars;
  }
  EXPECT_EQ(bars, 2U);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace tagflow::tracing
