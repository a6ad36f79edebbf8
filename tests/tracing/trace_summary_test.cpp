#include "tracing/trace_summary.hpp"

#include <gtest/gtest.h>

#include "tests/tracing/trace_files_support.hpp"

namespace tagflow::tracing {
namespace {

using testing::event;
using testing::fresh_log_dir;
using testing::idle;
using testing::kNeverTime;
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
       event("wait_socket", 4'000'000, 1'000'000, 0, kNeverTime, "")});
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
  EXPECT_EQ(replay.ns[kOther], 1'000'000);  // the socket's poll
  EXPECT_DOUBLE_EQ(replay.percent(kComputing), 40.0);
  EXPECT_EQ(replay.reactions, 1U);
  const FederateTime& sampler = summary.federates[1];
  EXPECT_EQ(sampler.ns[kComputing], 1'000'000);
  EXPECT_EQ(sampler.ns[kMessaging], 200'000);
  EXPECT_EQ(sampler.ns[kWaitingForGrant], 800'000);
  for (const FederateTime& f : summary.federates) {
    std::int64_t total = 0;
    double percent = 0;
    for (std::size_t c = 0; c < kCategoryCount; ++c) {
      total += f.ns[c];
      percent += f.percent(static_cast<TimeCategory>(c));
    }
    EXPECT_EQ(total, f.wall_ns) << f.federate;
    EXPECT_LE(percent, 100.0 + 1e-9) << f.federate;
  }
}

TEST(TraceSummary, TheCriticalPathGoesThroughTheLastMessageToItsSender) {
  const TraceSummary summary = summarize_trace(two_federates(), 1);
  EXPECT_EQ(summary.tags, 1U);  // work (reactions, messages) only at tag 5 ms
  ASSERT_EQ(summary.slowest.size(), 1U);
  const SlowTag& slow = summary.slowest[0];
  EXPECT_EQ(slow.tag, Tag(5'000'000, 0));
  EXPECT_EQ(slow.wall_ns, 4'000'000);  // the sampler's reaction at 0 to the replay's end at 4 ms
  // The replay's last wait (for data) took nothing; the message it took in the grant's wait
  // before it, with no work between, ended the waiting.
  ASSERT_EQ(slow.chain.size(), 2U);
  EXPECT_EQ(slow.chain[0],
            "replay: ran its reactions from +2.000 ms to +4.000 ms (the longest, replay.insert, "
            "2.000 ms), after waiting 2.000 ms for data and a grant (+0.000 ms to +2.000 ms); the "
            "last message it took, sampler-0 → replay transitions[0], was sent at +1.000 ms and "
            "taken at +1.300 ms");
  EXPECT_EQ(slow.chain[1],
            "sampler-0: ran its reactions from +0.000 ms to +1.000 ms (the longest, "
            "sampler-0.step, 1.000 ms), without waiting since the tag's first event");
}

// A tag that waited for a federate still running an earlier tag's long reaction: its short wait
// took no message, and what kept it from the tag is named, the reaction before the wait.
TEST(TraceSummary, AWaitThatTookNoMessageNamesTheWorkBeforeIt) {
  const auto dir = fresh_log_dir("summary");
  constexpr std::int64_t kSlowTag = 5'000'000;
  write_process(dir, "sampler-0", "", 0, {{"sampler-0 worker 0", "sampler-0"}},
                {event("reaction", 1'000'000, 100'000, 0, kSlowTag, "sampler-0.step")});
  write_process(dir, "learner", "", 0, {{"learner worker 0", "learner"}},
                {event("reaction", 500'000, 39'500'000, 0, kSlowTag - 1'000'000, "learner.update"),
                 event("wait_grant", 40'000'000, 1'000, 0, kSlowTag, ""),
                 event("reaction", 40'001'000, 100'000, 0, kSlowTag, "learner.deliver")});
  const TraceSummary summary = summarize_trace(read_trace_dir(dir.string()), 2);
  const SlowTag* slow = nullptr;
  for (const SlowTag& s : summary.slowest) {
    if (s.tag == Tag(kSlowTag, 0)) slow = &s;
  }
  ASSERT_NE(slow, nullptr);
  EXPECT_EQ(slow->wall_ns, 39'101'000);
  ASSERT_EQ(slow->chain.size(), 1U);
  EXPECT_EQ(slow->chain[0],
            "learner: ran its reactions from +39.001 ms to +39.101 ms (the longest, "
            "learner.deliver, 0.100 ms), after waiting 0.001 ms for a grant (+39.000 ms to "
            "+39.001 ms); it took no message while it waited; before the wait it ran its "
            "reactions at tag (4000000, 0) from -0.500 ms to +39.000 ms (the longest, "
            "learner.update, 39.500 ms)");
}

// Tag T = 5 ms of logical time, on the coordinator host's clock. The sampler computes and sends
// its transitions late (after its LTC); the coordinator grants the replay on that LTC, so the
// replay's grant comes first and its wait for the data ends with the sampler's message; the
// learner has the replay's minibatch before its grant, which the coordinator sends on the
// replay's LTC.
constexpr std::int64_t kT = 5'000'000;

std::vector<ProcessTraceFile> a_round() {
  const auto dir = fresh_log_dir("summary");
  write_process(dir, "coordinator", "", 0, {{"coordinator", ""}},
                {event("control_send", 50'000, 0, 0, kT, "TAG", "sampler-0", 0, 24),
                 event("control_receive", 1'120'000, 0, 0, kT, "LTC", "sampler-0", 0, 32),
                 event("control_send", 1'130'000, 0, 0, kT, "TAG", "replay", 0, 24),
                 event("control_receive", 2'500'000, 0, 0, kT, "LTC", "replay", 0, 32),
                 event("control_send", 2'510'000, 0, 0, kT, "TAG", "learner", 0, 24)});
  // On host b, 2 ms behind: its file says 2 ms less.
  const std::int64_t b = -2'000'000;
  write_process(dir, "sampler-0", "b", 2'000'000,
                {{"sampler-0 worker 0", "sampler-0"}, {"sampler-0 network", "sampler-0"}},
                {event("wait_grant", b + 0, 100'000, 0, kT, ""),
                 event("control_receive", b + 90'000, 0, 1, kT, "TAG", "coordinator", 0, 24),
                 event("reaction", b + 100'000, 1'000'000, 0, kT, "sampler-0.step"),
                 event("control_send", b + 1'110'000, 0, 1, kT, "LTC", "coordinator", 0, 32),
                 event("send", b + 1'150'000, 100'000, 1, kT, "sampler-0", "replay", 65536, 418),
                 event("reaction", b + 7'000'000, 100'000, 0, kT + 1'000'000, "sampler-0.step")});
  write_process(
      dir, "replay", "", 0, {{"replay worker 0", "replay"}, {"replay network", "replay"}},
      {idle("wait_data", 200'000, 800'000, 0), event("wait_grant", 1'000'000, 145'000, 0, kT, ""),
       event("control_receive", 1'140'000, 0, 1, kT, "TAG", "coordinator", 0, 24),
       event("wait_data", 1'145'000, 155'000, 0, kT, ""),
       event("receive", 1'280'000, 15'000, 1, kT, "replay", "sampler-0", 65536, 418),
       event("reaction", 1'300'000, 1'000'000, 0, kT, "replay.insert"),
       event("send", 2'300'000, 50'000, 1, kT, "replay", "learner", 196608, 4000),
       event("control_send", 2'490'000, 0, 1, kT, "LTC", "coordinator", 0, 32)});
  write_process(
      dir, "learner", "", 0, {{"learner worker 0", "learner"}, {"learner network", "learner"}},
      {idle("wait_data", 500'000, 1'900'000, 0), event("wait_grant", 2'400'000, 200'000, 0, kT, ""),
       event("receive", 2'380'000, 20'000, 1, kT, "learner", "replay", 196608, 4000),
       event("control_receive", 2'590'000, 0, 1, kT, "TAG", "coordinator", 0, 24),
       event("reaction", 2'600'000, 4'000'000, 0, kT, "learner.update"),
       event("wait_socket", 2'700'000, 3'300'000, 1, kNeverTime, "")});
  return read_trace_dir(dir.string());
}

TEST(TraceSummary, ARoundsCriticalPathCrossesGrantsAndDataAcrossProcesses) {
  const TraceSummary summary = summarize_trace(a_round(), 5);
  ASSERT_EQ(summary.federates.size(), 4U);
  EXPECT_EQ(summary.federates[0].federate, "coordinator");
  EXPECT_EQ(summary.federates[0].ns[kOther], summary.federates[0].wall_ns);  // instants only
  const FederateTime& learner = summary.federates[1];
  EXPECT_EQ(learner.federate, "learner");
  EXPECT_EQ(learner.wall_ns, 6'100'000);
  EXPECT_EQ(learner.ns[kComputing], 4'000'000);  // the socket's poll hides under the update
  EXPECT_EQ(learner.ns[kMessaging], 20'000);
  EXPECT_EQ(learner.ns[kWaitingForData], 1'880'000);
  EXPECT_EQ(learner.ns[kWaitingForGrant], 200'000);
  EXPECT_EQ(learner.ns[kOther], 0);
  EXPECT_EQ(learner.tags, 1U);

  EXPECT_EQ(summary.first_tag, Tag(kT, 0));
  EXPECT_EQ(summary.tags, 2U);
  ASSERT_EQ(summary.slowest.size(), 2U);
  const SlowTag& slow = summary.slowest[0];
  EXPECT_EQ(slow.tag, Tag(kT, 0));
  EXPECT_EQ(slow.wall_ns, 6'500'000);  // the sampler's step at 0.1 ms to the update's end
  const std::vector<std::string> expected = {
      "learner: ran its reactions from +2.500 ms to +6.500 ms (the longest, learner.update, "
      "4.000 ms), after waiting 2.100 ms for data and a grant (+0.400 ms to +2.500 ms); the last "
      "message it took, coordinator's TAG, was sent at +2.410 ms and taken at +2.490 ms",
      "coordinator: sent TAG at +2.410 ms, after taking replay's LTC at +2.400 ms, sent at "
      "+2.390 ms",
      "replay: ran its reactions from +1.200 ms to +2.200 ms (the longest, replay.insert, "
      "1.000 ms), after waiting 1.100 ms for data and a grant (+0.100 ms to +1.200 ms); the last "
      "message it took, sampler-0 → replay transitions[0], was sent at +1.050 ms and taken at "
      "+1.180 ms",
      "sampler-0: ran its reactions from +0.000 ms to +1.000 ms (the longest, sampler-0.step, "
      "1.000 ms), after waiting 0.100 ms for a grant (-0.100 ms to +0.000 ms); the last message "
      "it took, coordinator's TAG, was sent at -0.050 ms and taken at -0.010 ms",
      "coordinator: sent TAG at -0.050 ms, having taken no control message with a tag before"};
  EXPECT_EQ(slow.chain, expected);

  EXPECT_EQ(summary.slowest[1].tag, Tag(kT + 1'000'000, 0));
  EXPECT_EQ(summary.slowest[1].wall_ns, 100'000);
  ASSERT_EQ(summary.slowest[1].chain.size(), 1U);
  EXPECT_EQ(summary.slowest[1].chain[0].rfind("sampler-0: ran its reactions", 0), 0U);

  const std::string table = summary.table();
  EXPECT_NE(table.find("learner"), std::string::npos);
  EXPECT_NE(table.find("65.6%"), std::string::npos) << table;  // the learner's 4.0 of 6.1 ms
  EXPECT_NE(table.find("tag (5000000, 0), 0.000 ms of logical time in: took 6.500 ms"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("  coordinator: sent TAG at +2.410 ms"), std::string::npos) << table;
}

// An actor-mode run: its handlers run at no tag. The table says there are no tags to rank
// instead of "0 tags; the median tag took 0.000 ms".
TEST(TraceSummary, ARunWithoutTagsSaysSoInsteadOfAMedianOfNone) {
  const auto dir = fresh_log_dir("actor-summary");
  write_process(dir, "replay", "", 0, {{"replay actor", "replay"}},
                {event("handler", 0, 1'000'000, 0, kNeverTime, "replay TransitionsMessage"),
                 event("handler", 2'000'000, 500'000, 0, kNeverTime, "replay atom")});
  const TraceSummary summary = summarize_trace(read_trace_dir(dir.string()));
  EXPECT_EQ(summary.tags, 0U);
  EXPECT_TRUE(summary.slowest.empty());
  const std::string table = summary.table();
  EXPECT_NE(table.find("no tags: no event of this run has a logical tag"), std::string::npos)
      << table;
  EXPECT_EQ(table.find("the median tag took"), std::string::npos) << table;
}

TEST(TraceSummary, TheChartHasABarPerFederateAndALegend) {
  const TraceSummary summary = summarize_trace(a_round());
  const std::string svg = summary.svg("a <run> & its time");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0U);
  EXPECT_NE(svg.find("a &lt;run&gt; &amp; its time"), std::string::npos);
  std::size_t bars = 0;
  for (std::size_t at = svg.find("<g class=\"federate\">"); at != std::string::npos;
       at = svg.find("<g class=\"federate\">", at + 1)) {
    ++bars;
  }
  ASSERT_EQ(summary.federates.size(), 4U);  // the round's four processes
  EXPECT_EQ(bars, 4U);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  for (std::size_t c = 0; c < kCategoryCount; ++c) {
    EXPECT_NE(svg.find(std::string(">") + category_name(static_cast<TimeCategory>(c)) + "</text>"),
              std::string::npos)
        << category_name(static_cast<TimeCategory>(c));
  }
  EXPECT_NE(svg.find(">100%</text>"), std::string::npos);
  // Every element that opens closes: as many "<g" as "</g>", "<svg" as "</svg>".
  const auto count = [&svg](const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("<g "), count("</g>"));
  EXPECT_EQ(count("<title>"), count("</title>"));
  EXPECT_EQ(count("<text "), count("</text>"));
}

}  // namespace
}  // namespace tagflow::tracing
