#include "tracing/run_diff.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "common/value_log.hpp"
#include "nodes/messages.hpp"
#include "tests/tracing/trace_files_support.hpp"
#include "tracing/trace_files.hpp"

namespace tagflow::tracing {
namespace {

using testing::fresh_log_dir;

nodes::Bytes transitions(std::int64_t second_action) {
  nodes::TransitionsMessage m;
  m.observation_size = 1;
  m.observations = {0.5F, 0.25F};
  m.actions = {1, second_action};
  m.rewards = {1.0F, 1.0F};
  m.terminated = {0, 0};
  m.next_observations = {0.75F, 0.125F};
  return nodes::encode(m);
}

/// A run where sampler-0 sends three transitions to the replay (the third with `last_action`)
/// and the replay one weights-like message to a learner at the second tag.
void write_run(const std::filesystem::path& dir, std::int64_t last_action, bool keep = true) {
  {
    ValueLog log((dir / "trace" / "sampler-0").string(), keep ? 1 << 20 : 0);
    for (int step = 0; step < 3; ++step) {
      const nodes::Bytes bytes = transitions(step == 2 ? last_action : 0);
      log.record(Tag(step * 1'000'000, 0), "replay", 65536, bytes.data(), bytes.size());
    }
  }
  ValueLog log((dir / "trace" / "replay").string(), 1 << 20);
  const std::uint8_t absent = 0;
  log.record(Tag(1'000'000, 1), "learner", 3 << 16, &absent, 0);
}

TEST(RunDiff, NamesTheFirstTagAndConnectionWhereTheRunsSentOtherBytes) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, 0);
  write_run(b, 1);
  const DiffResult result = diff_runs(a.string(), b.string());
  ASSERT_TRUE(result.difference);
  const RunDifference& d = *result.difference;
  EXPECT_EQ(d.tag, Tag(2'000'000, 0));
  EXPECT_EQ(d.sender, "sampler-0");
  EXPECT_EQ(d.receiver, "replay");
  EXPECT_EQ(d.port, 65536U);
  EXPECT_EQ(result.matched, 3U);  // two transitions and the replay's ABSENT
  EXPECT_EQ(d.difference, "actions[1]: 0 against 1");
  const std::string text = result.text();
  EXPECT_NE(text.find("2.000 ms after the run's first tag"), std::string::npos) << text;
  EXPECT_NE(text.find("sampler-0 → replay transitions[0]"), std::string::npos) << text;
  EXPECT_NE(text.find("Transitions (2 rows)"), std::string::npos) << text;
}

TEST(RunDiff, AMessageOnlyOneRunSentIsTheDifference) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, 0);
  write_run(b, 0);
  {
    ValueLog extra((b / "trace" / "inference").string(), 1 << 20);
    const nodes::Bytes bytes = transitions(0);
    extra.record(Tag(500'000, 0), "sampler-0", 6 << 16, bytes.data(), bytes.size());
  }
  const DiffResult result = diff_runs(a.string(), b.string());
  ASSERT_TRUE(result.difference);
  EXPECT_EQ(result.difference->sender, "inference");
  EXPECT_FALSE(result.difference->a);
  EXPECT_TRUE(result.difference->b);
  EXPECT_EQ(result.difference->difference, "only the second run sent it");
  EXPECT_NE(result.text().find("actions[0]"), std::string::npos) << result.text();
}

TEST(RunDiff, RunsThatSentTheSameBytesMatch) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, 1);
  write_run(b, 1);
  const DiffResult result = diff_runs(a.string(), b.string());
  EXPECT_FALSE(result.difference);
  EXPECT_EQ(result.matched, 4U);
  EXPECT_EQ(result.text(), "the runs match: 4 data messages, each with the same bytes\n");
}

TEST(RunDiff, ValuesNotKeptAreNamedAsSuch) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, 0, false);
  write_run(b, 1, false);
  const DiffResult result = diff_runs(a.string(), b.string());
  ASSERT_TRUE(result.difference);
  EXPECT_NE(result.difference->a_value.find("trace.values_mb"), std::string::npos);
  EXPECT_EQ(result.difference->difference,
            "the hashes differ; the bytes were not kept to say where");
}

TEST(RunDiff, ARunWithoutValueLogsSaysHowToRecordThem) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, 0);
  try {
    (void)diff_runs(a.string(), b.string());
    FAIL() << "compared a run without value logs";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("trace: {digests: true}"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tagflow::tracing
