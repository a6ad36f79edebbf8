#include "tracing/run_diff.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/value_log.hpp"
#include "nodes/messages.hpp"
#include "tests/tracing/trace_files_support.hpp"
#include "tracing/trace_files.hpp"

namespace tagflow::tracing {
namespace {

using testing::event;
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

nodes::Bytes weights(float first) {
  nodes::WeightsMessage m;
  m.version = 3;
  m.values = {first, 2.0F};
  return nodes::encode(m);
}

struct RunShape {
  std::int64_t last_action = 0;  // the sampler's third transitions' second action
  bool keep = true;              // whether the sampler keeps its messages' bytes
  int steps = 3;                 // how many tags (0, 1, 2 ms, ...) the sampler sends at
  float learner_weight = 1.0F;   // the learner's weights at 2.5 ms
};

/// A run where sampler-0 sends transitions to the replay at 0, 1, 2 ms (...), the replay an
/// ABSENT to the learner at (1 ms, 1), and the learner weights to the sampler at 2.5 ms.
void write_run(const std::filesystem::path& dir, const RunShape& shape) {
  {
    ValueLog log((dir / "trace" / "sampler-0").string(), shape.keep ? 1 << 20 : 0);
    for (int step = 0; step < shape.steps; ++step) {
      const nodes::Bytes bytes = transitions(step == 2 ? shape.last_action : 0);
      log.record(Tag(step * 1'000'000, 0), "replay", 65536, bytes.data(), bytes.size());
    }
  }
  {
    ValueLog log((dir / "trace" / "replay").string(), 1 << 20);
    const std::uint8_t absent = 0;
    log.record(Tag(1'000'000, 1), "learner", 3 << 16, &absent, 0);
  }
  ValueLog log((dir / "trace" / "learner").string(), 1 << 20);
  const nodes::Bytes bytes = weights(shape.learner_weight);
  log.record(Tag(2'500'000, 0), "sampler-0", 4 << 16, bytes.data(), bytes.size());
}

TEST(RunDiff, NamesTheFirstTagAndConnectionWhereTheRunsSentOtherBytes) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  // Two differences: the sampler's at 2 ms comes before the learner's at 2.5 ms.
  write_run(a, {0, true, 3, 1.0F});
  write_run(b, {1, true, 3, 1.5F});
  // Run A's process trace: the sampler's reactions at 1 ms and at 2 ms.
  testing::write_process(a, "sampler-0", "", 0, {{"sampler-0 worker 0", "sampler-0"}},
                         {event("reaction", 100, 50, 0, 1'000'000, "sampler-0.step"),
                          event("reaction", 200, 50, 0, 2'000'000, "sampler-0.step"),
                          event("reaction", 250, 5, 0, 2'000'000, "wire_out_transitions.send"),
                          event("send", 252, 2, 0, 2'000'000, "sampler-0", "replay", 65536)});
  const DiffResult result = diff_runs(a.string(), b.string());
  ASSERT_TRUE(result.difference);
  const RunDifference& d = *result.difference;
  EXPECT_EQ(d.tag, Tag(2'000'000, 0));
  EXPECT_EQ(d.sender, "sampler-0");
  EXPECT_EQ(d.receiver, "replay");
  EXPECT_EQ(d.port, 65536U);
  EXPECT_EQ(result.matched, 3U);  // two transitions and the replay's ABSENT
  EXPECT_EQ(d.difference, "actions[1]: 0 against 1");
  EXPECT_EQ(d.reactions_tag, Tag(2'000'000, 0));
  EXPECT_EQ(d.reactions, (std::vector<std::string>{"sampler-0.step", "wire_out_transitions.send"}));
  const std::string text = result.text();
  EXPECT_NE(text.find("the runs part at tag (2000000, 0), 2.000 ms after the run's first tag"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("connection: sampler-0 → replay transitions[0] (wire port 65536)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("before it: 3 data messages the same in both runs"), std::string::npos);
  EXPECT_NE(text.find("sent by sampler-0's reactions at that tag: sampler-0.step "
                      "wire_out_transitions.send"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Transitions (2 rows)"), std::string::npos) << text;
  EXPECT_NE(text.find("first difference: actions[1]: 0 against 1"), std::string::npos) << text;
  EXPECT_TRUE(d.also_at_tag.empty());  // the learner's differs later, at 2.5 ms
  EXPECT_EQ(text.find("also differing"), std::string::npos) << text;
}

// Within one tag the first difference is the first by name: the replay's batch, drawn from the
// sampler's transitions of that tag, comes before them. The sampler's is listed beside it.
TEST(RunDiff, OtherConnectionsThatDifferAtTheSameTagAreListed) {
  const auto a = fresh_log_dir("diff_same_tag_a");
  const auto b = fresh_log_dir("diff_same_tag_b");
  for (const auto& [dir, action] : {std::pair{a, 0}, std::pair{b, 1}}) {
    const nodes::Bytes bytes = transitions(action);
    ValueLog sampler((dir / "trace" / "sampler-0").string(), 1 << 20);
    sampler.record(Tag(1'000'000, 0), "replay", 65536, bytes.data(), bytes.size());
    ValueLog replay((dir / "trace" / "replay").string(), 1 << 20);
    replay.record(Tag(1'000'000, 0), "learner", 3 << 16, bytes.data(), bytes.size());
  }
  const DiffResult result = diff_runs(a.string(), b.string());
  ASSERT_TRUE(result.difference);
  EXPECT_EQ(result.difference->sender, "replay");
  EXPECT_EQ(result.difference->also_at_tag,
            std::vector<std::string>{"sampler-0 → replay transitions[0]"});
  const std::string text = result.text();
  EXPECT_NE(text.find("also differing at that tag (the first by name is named above, not by "
                      "cause): sampler-0 → replay transitions[0]\n"),
            std::string::npos)
      << text;
}

// Over a link with a delay longer than a round (the learner's weights `after: 4ms`), the sending
// tag is not the latest before the arrival: the trace's send of that value names it. Without
// the send in the trace, the latest tag at or before the arrival is named, and said to be that.
TEST(RunDiff, ADelayedValueIsBlamedOnTheReactionsThatSentIt) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, {0, true, 3, 1.0F});
  write_run(b, {0, true, 3, 1.5F});  // only the weights arriving at 2.5 ms differ
  const std::vector<std::pair<std::string, std::string>> threads = {
      {"learner worker 0", "learner"}};
  // The learner's update at 0.5 ms sent the weights arriving at 2.5 ms; the updates at 1.5 and
  // 2.5 ms sent later ones.
  testing::write_process(a, "learner", "", 0, threads,
                         {event("reaction", 100, 50, 0, 500'000, "learner.update"),
                          event("send", 160, 5, 0, 2'500'000, "learner", "sampler-0", 4 << 16),
                          event("reaction", 300, 50, 0, 1'500'000, "learner.update"),
                          event("reaction", 305, 2, 0, 1'500'000, "learner.publish"),
                          event("send", 360, 5, 0, 3'500'000, "learner", "sampler-0", 4 << 16),
                          event("reaction", 500, 50, 0, 2'500'000, "learner.update")});
  DiffResult result = diff_runs(a.string(), b.string());
  ASSERT_TRUE(result.difference);
  EXPECT_EQ(result.difference->tag, Tag(2'500'000, 0));
  EXPECT_EQ(result.difference->reactions_tag, Tag(500'000, 0));
  EXPECT_TRUE(result.difference->reactions_from_send);
  EXPECT_EQ(result.difference->reactions, std::vector<std::string>{"learner.update"});
  std::string text = result.text();
  EXPECT_NE(text.find("sent by learner's reactions at tag (500000, 0), 0.500 ms after the run's "
                      "first tag: learner.update\n"),
            std::string::npos)
      << text;

  // The ring no longer holds the send: the latest tag at or before the arrival, said to be that.
  testing::write_process(a, "learner", "", 0, threads,
                         {event("reaction", 300, 50, 0, 1'500'000, "learner.update"),
                          event("reaction", 305, 2, 0, 1'500'000, "learner.publish"),
                          event("reaction", 500, 50, 0, 2'500'000, "learner.update")});
  result = diff_runs(a.string(), b.string());
  ASSERT_TRUE(result.difference);
  EXPECT_EQ(result.difference->reactions_tag, Tag(2'500'000, 0));
  EXPECT_FALSE(result.difference->reactions_from_send);
  text = result.text();
  EXPECT_NE(text.find("sent by learner's reactions at that tag (the latest at or before the "
                      "arrival tag: the trace no longer holds the send): learner.update"),
            std::string::npos)
      << text;
}

TEST(RunDiff, AMessageOnlyOneRunSentIsTheDifference) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, {});
  write_run(b, {});
  { ValueLog silent((a / "trace" / "inference").string(), 1 << 20); }  // ran, sent nothing
  {
    ValueLog extra((b / "trace" / "inference").string(), 1 << 20);
    const nodes::Bytes bytes = transitions(0);
    extra.record(Tag(500'000, 0), "sampler-0", 6 << 16, bytes.data(), bytes.size());
  }
  const DiffResult result = diff_runs(a.string(), b.string());
  ASSERT_TRUE(result.difference);
  EXPECT_EQ(result.difference->sender, "inference");
  EXPECT_EQ(result.difference->tag, Tag(500'000, 0));
  EXPECT_FALSE(result.difference->a);
  EXPECT_TRUE(result.difference->b);
  EXPECT_EQ(result.difference->a_value, "not sent in this run");
  EXPECT_EQ(result.difference->difference, "only the second run sent it");
  EXPECT_EQ(result.matched, 1U);  // the sampler's transitions at 0 ms
  const std::string text = result.text();
  EXPECT_NE(text.find("inference → sampler-0 actions[0]"), std::string::npos) << text;
  EXPECT_NE(text.find("actions (2): 1 0"), std::string::npos) << text;
}

TEST(RunDiff, AMessageMissingInTheMiddleIsADifferenceNotAShorterRun) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, {});
  write_run(b, {0, true, 2, 1.0F});  // no transitions at 2 ms; the learner still sends at 2.5 ms
  const DiffResult result = diff_runs(a.string(), b.string());
  ASSERT_TRUE(result.difference);
  EXPECT_EQ(result.difference->tag, Tag(2'000'000, 0));
  EXPECT_EQ(result.difference->difference, "only the first run sent it");
}

TEST(RunDiff, ARunThatWentOnMatchesUpToWhereTheOtherEnded) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, {});
  write_run(b, {0, true, 5, 1.0F});  // two more tags of transitions, at 3 and 4 ms
  const DiffResult result = diff_runs(a.string(), b.string());
  EXPECT_FALSE(result.difference) << result.text();
  EXPECT_EQ(result.matched, 5U);
  EXPECT_EQ(result.past_shorter, 2U);
  EXPECT_EQ(result.a_last, Tag(2'500'000, 0));
  EXPECT_EQ(result.text(),
            "the runs match: 5 data messages, each with the same bytes, up to tag (2500000, 0), "
            "2.500 ms after the run's first tag where run A ends; run B sent 2 more arriving "
            "after it\n");
}

/// The result file a federate writes at its end, naming the run's cutoff (nodes/README.md).
void write_cutoff(const std::filesystem::path& dir, const std::string& federate, Tag cutoff) {
  std::ofstream(dir / (federate + ".json")) << R"({"cutoff": {"time_ns": )" << cutoff.time_ns()
                                            << R"(, "microstep": )" << cutoff.microstep() << "}}";
}

// A run that stopped earlier ends at its cutoff, not at its last arrival: the learner's weights
// sent `after` a delay arrive past it, and the sampler's rounds after the cutoff are not missing
// from that run but past its end.
TEST(RunDiff, ARunThatStoppedEarlierEndsAtItsCutoffNotAtItsLastDelayedArrival) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, {0, true, 2, 1.0F});  // the sampler at 0 and 1 ms; the weights arrive at 2.5 ms
  write_run(b, {0, true, 5, 1.0F});  // the sampler at 0 .. 4 ms
  // Without the cutoffs run A ends at its last arrival (2.5 ms): B's 2 ms is missing from it.
  DiffResult result = diff_runs(a.string(), b.string());
  ASSERT_TRUE(result.difference);
  EXPECT_EQ(result.difference->tag, Tag(2'000'000, 0));
  write_cutoff(a, "sampler-0", Tag(1'000'000, 2));
  write_cutoff(b, "sampler-0", Tag(4'000'000, 2));
  result = diff_runs(a.string(), b.string());
  EXPECT_FALSE(result.difference) << result.text();
  EXPECT_EQ(result.a_end, Tag(1'000'000, 2));
  EXPECT_EQ(result.b_end, Tag(4'000'000, 2));
  EXPECT_EQ(result.matched, 3U);       // the sampler's two and the replay's ABSENT
  EXPECT_EQ(result.past_shorter, 4U);  // run B's sampler at 2, 3, 4 ms and its weights
  EXPECT_EQ(result.text(),
            "the runs match: 3 data messages, each with the same bytes, up to tag (1000000, 2), "
            "1.000 ms after the run's first tag where run A ends; run B sent 4 more arriving "
            "after it\n");
  // Before the earlier end a missing message is still a difference.
  const auto c = fresh_log_dir("diff_c");
  write_run(c, {0, true, 1, 1.0F});  // the sampler at 0 ms only, but its cutoff after 1 ms
  write_cutoff(c, "sampler-0", Tag(1'000'000, 2));
  result = diff_runs(c.string(), b.string());
  ASSERT_TRUE(result.difference);
  EXPECT_EQ(result.difference->tag, Tag(1'000'000, 0));
  EXPECT_EQ(result.difference->difference, "only the second run sent it");
}

// The result files are read strictly: a cutoff that is no tag of a run, result files of one run
// naming different cutoffs, a result file that is no JSON or no regular file are errors naming
// the file, not a match computed from them.
TEST(RunDiff, DamagedResultFilesAreNamedNotTrusted) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, {});
  write_run(b, {});
  const auto refused = [&](const std::string& text) {
    std::ofstream(a / "replay.json") << text;
    try {
      (void)diff_runs(a.string(), b.string());
    } catch (const TraceError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(refused(R"({"cutoff": {"time_ns": -1, "microstep": 0}})").find("no tag of a run"),
            std::string::npos);
  EXPECT_NE(refused(R"({"cutoff": {"time_ns": 0, "microstep": 4294967296}})")
                .find("replay.json names a cutoff that is no tag of a run"),
            std::string::npos);
  const std::string garbage = refused("not json");
  EXPECT_NE(garbage.find("replay.json is not JSON: "), std::string::npos) << garbage;
  EXPECT_EQ(garbage.find("json.exception"), std::string::npos) << garbage;
  write_cutoff(a, "learner", Tag(3'000'000, 2));
  EXPECT_NE(
      refused(R"({"cutoff": {"time_ns": 2000000, "microstep": 2}})").find("name different cutoffs"),
      std::string::npos);
  std::filesystem::remove(a / "replay.json");
  std::filesystem::create_directory(a / "replay.json");
  EXPECT_NE(refused("").find("is not a regular file"), std::string::npos);
}

// A value log whose size or offset points past its .values.bin is damaged: said so, without
// allocating the bytes it claims.
TEST(RunDiff, ALoggedSizeBeyondTheKeptBytesIsDamagedNotAllocated) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, {});
  write_run(b, {1});
  const auto log = a / "trace" / "sampler-0.values.tsv";
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  // The third transitions (the first difference): 2^62 bytes claimed.
  const auto line = text.find("2000000\t0\treplay");
  ASSERT_NE(line, std::string::npos) << text;
  std::vector<std::string> fields;
  const auto end = text.find('\n', line);
  std::istringstream split(text.substr(line, end - line));
  for (std::string f; std::getline(split, f, '\t');) fields.push_back(f);
  ASSERT_EQ(fields.size(), 7U);
  fields[4] = "4611686018427387904";
  std::string changed;
  for (const std::string& f : fields) changed += (changed.empty() ? "" : "\t") + f;
  text.replace(line, end - line, changed);
  std::ofstream(log) << text;
  const DiffResult result = diff_runs(a.string(), b.string());
  ASSERT_TRUE(result.difference);
  EXPECT_NE(result.difference->a_value.find("which cannot be read there"), std::string::npos)
      << result.text();
}

TEST(RunDiff, RunsThatSentTheSameBytesMatch) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, {1});
  write_run(b, {1});
  const DiffResult result = diff_runs(a.string(), b.string());
  EXPECT_FALSE(result.difference);
  EXPECT_EQ(result.matched, 5U);
  EXPECT_EQ(result.past_shorter, 0U);
  EXPECT_EQ(result.text(), "the runs match: 5 data messages, each with the same bytes\n");
}

TEST(RunDiff, ValuesNotKeptOrDamagedAreNamedAsSuch) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, {0, false});
  write_run(b, {1, false});
  DiffResult result = diff_runs(a.string(), b.string());
  ASSERT_TRUE(result.difference);
  EXPECT_NE(result.difference->a_value.find("not kept"), std::string::npos);
  EXPECT_NE(result.difference->a_value.find("trace.values_mb"), std::string::npos);
  EXPECT_NE(result.difference->difference.find("the bytes were not kept"), std::string::npos);

  // Kept, but the bytes in run B's .values.bin are not those it logged.
  write_run(a, {0});
  write_run(b, {1});
  {
    std::fstream bin(b / "trace" / "sampler-0.values.bin",
                     std::ios::in | std::ios::out | std::ios::binary);
    bin.seekp(-1, std::ios::end);
    bin.put('\x7f');
  }
  result = diff_runs(a.string(), b.string());
  ASSERT_TRUE(result.difference);
  EXPECT_NE(result.difference->b_value.find("do not have the logged hash"), std::string::npos)
      << result.difference->b_value;
  EXPECT_NE(result.difference->a_value.find("Transitions (2 rows)"), std::string::npos);
}

// A federate's log in one run and not in the other: a damaged run directory (or two cluster
// files), which is no difference between the runs.
TEST(RunDiff, AFederatesLogMissingFromOneRunIsAnError) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, {});
  write_run(b, {});
  std::filesystem::remove(b / "trace" / "replay.values.tsv");
  for (const bool b_first : {false, true}) {
    try {
      (void)(b_first ? diff_runs(b.string(), a.string()) : diff_runs(a.string(), b.string()));
      FAIL() << "compared a run without the replay's value log";
    } catch (const TraceError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("no value log of replay in " + b.string()), std::string::npos) << what;
    }
  }
}

TEST(RunDiff, ARunWithoutValueLogsSaysHowToRecordThem) {
  const auto a = fresh_log_dir("diff_a");
  const auto b = fresh_log_dir("diff_b");
  write_run(a, {});
  try {
    (void)diff_runs(a.string(), b.string());
    FAIL() << "compared a run without value logs";
  } catch (const TraceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("trace: {digests: true}"), std::string::npos) << what;
    EXPECT_NE(what.find(b.string()), std::string::npos) << what;
    EXPECT_NE(what.find("values.tsv"), std::string::npos) << what;
  }
  std::ofstream(b / "trace" / "replay.values.tsv") << "1000000\t0\tlearner\n";
  try {
    (void)diff_runs(a.string(), b.string());
    FAIL() << "compared a run with a broken value log";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("replay.values.tsv line 1 is not 7 fields (tag time, "
                                         "microstep, receiver, port, bytes, hash, offset) but 3"),
              std::string::npos)
        << e.what();
  }
}

// A line of seven fields with one that does not read as its type names that field.
TEST(RunDiff, AValueLogFieldThatDoesNotReadIsNamed) {
  const auto dir = fresh_log_dir("diff_fields");
  const std::string path = (dir / "log.values.tsv").string();
  for (const auto& [line, says] : std::vector<std::pair<std::string, std::string>>{
           {"1000	0	replay	65536	418	ZZZZ	0",
            "field 6 (hash) 'ZZZZ' is not 16 lower-case"},
           {"1000	0	replay	65536	abc	939dd9680c6ca30e	0",
            "field 5 (bytes) 'abc' is not"},
           {"1000	0	replay	65536	418	939dd9680c6ca30e	X",
            "field 7 (offset) 'X' is not"},
           {"1000	-1	replay	65536	418	939dd9680c6ca30e	-",
            "field 2 (microstep) '-1'"},
           {"1e3	0	replay	65536	418	939dd9680c6ca30e	-",
            "field 1 (tag time) '1e3'"}}) {
    std::ofstream(path) << "1000\t0\treplay\t65536\t418\t939dd9680c6ca30e\t-\n" << line << "\n";
    try {
      (void)read_value_log(path);
      FAIL() << "read " << line;
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find(path + " line 2: " + says), std::string::npos)
          << e.what();
    }
  }
  std::ofstream(path) << "1000\t0\treplay\t65536\t418\t939dd9680c6ca30e\t12\n";
  const std::vector<SentValue> read = read_value_log(path);
  ASSERT_EQ(read.size(), 1U);
  EXPECT_EQ(read[0].bytes, 418U);
  EXPECT_EQ(read[0].offset, std::optional<std::uint64_t>(12));
  // A file given for the run directory is named as such.
  try {
    (void)diff_runs(path, path);
    FAIL() << "compared a file";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find(path + " is not a directory: give the run directory"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tagflow::tracing
