// Tests of nodes/kind/process_result.hpp: the result JSON of a `tagflow node` process
// (tests/hosts/run_combine_test.cpp combines such results into a run summary).
#include "nodes/kind/process_result.hpp"

#include <gtest/gtest.h>

namespace tagflow::hosts {
namespace {

ReplicaResult replica(const std::string& name, const std::string& kind, std::int64_t count,
                      std::vector<ChannelResult> channels) {
  ReplicaResult r;
  r.name = name;
  r.kind = kind;
  r.unit = kind == "sampler" ? "env_steps" : kind == "learner" ? "updates" : "inserts";
  r.count = count;
  r.channels = std::move(channels);
  return r;
}

/// Three processes: the samplers alone, replay + learner together.
std::vector<ProcessResult> results(std::uint64_t replay_hash) {
  ProcessResult s0{"sampler-0", "reactor", 2.0, "env_steps", reactors::Tag(5000000, 1), {}, {}};
  s0.replicas.push_back(replica("sampler-0", "sampler", 500, {{"transitions", 0, 62, 0x1111}}));
  s0.replicas.back().episode_returns = {10.0, 12.5};
  ProcessResult s1{"sampler-1", "reactor", 2.5, "", reactors::Tag(5000000, 1), {}, {}};
  s1.replicas.push_back(replica("sampler-1", "sampler", 504, {{"transitions", 0, 63, 0x2222}}));
  ProcessResult trainer{"trainer", "reactor", 2.2, "", reactors::Tag(5000000, 1), {}, {}};
  trainer.replicas.push_back(replica("replay", "replay", 1004, {{"batches", 0, 9, replay_hash}}));
  ReplicaResult learner = replica("learner", "learner", 72, {{"priorities", 0, 9, 0x4444}});
  learner.updates = 72;
  learner.weights_version = 72;
  learner.final_weights_hash = 0xabcdef0123456789ULL;
  learner.mean_return = 21.5;
  learner.evaluations = {9.0, 21.5};
  trainer.replicas.push_back(learner);
  return {s0, s1, trainer};
}

TEST(ProcessResult, JsonRoundTripKeepsEveryField) {
  const ProcessResult original = results(0x3333)[2];
  const ProcessResult back = ProcessResult::from_json(original.to_json());
  EXPECT_EQ(back.to_json(), original.to_json());
  EXPECT_EQ(back.process, "trainer");
  ASSERT_TRUE(back.cutoff.has_value());
  EXPECT_EQ(*back.cutoff, reactors::Tag(5000000, 1));
  ASSERT_EQ(back.replicas.size(), 2U);
  EXPECT_EQ(back.replicas[1].final_weights_hash, 0xabcdef0123456789ULL);
  EXPECT_EQ(back.replicas[1].mean_return, 21.5);
  EXPECT_FALSE(back.replicas[0].final_weights_hash.has_value());
  EXPECT_EQ(back.replicas[0].channels[0].hash, 0x3333U);
  EXPECT_NE(original.to_json().find("\"final_weights_hash\": \"abcdef0123456789\""),
            std::string::npos);
}

// A long run's result still fits the 64 KiB control frame a launcher on another host sends it in
// (federation/PROTOCOL.md §1, §8): the JSON lists the last kResultEpisodeReturns returns of each
// replica and counts them all; a result of an older version, which listed every return, reads as
// before.
TEST(ProcessResult, ALongRunsResultListsItsLastEpisodesAndCountsThemAll) {
  ProcessResult many{"samplers", "reactor", 3600.0, "", reactors::Tag(5000000, 1), {}, {}};
  for (int i = 0; i < 8; ++i) {
    ReplicaResult r = replica("sampler-" + std::to_string(i), "sampler", 4'000'000, {});
    for (int e = 0; e < 50'000; ++e) r.episode_returns.push_back(-102.68999752402306 - e);
    many.replicas.push_back(std::move(r));
  }
  const std::string json = many.to_json();
  EXPECT_LT(json.size(), 48U * 1024U);
  const ProcessResult back = ProcessResult::from_json(json);
  ASSERT_EQ(back.replicas.size(), 8U);
  for (const ReplicaResult& r : back.replicas) {
    EXPECT_EQ(r.episodes, 50'000);
    ASSERT_EQ(r.episode_returns.size(), nodes::kResultEpisodeReturns);
    EXPECT_EQ(r.episode_returns.front(), many.replicas[0].episode_returns[50'000 - 100]);
    EXPECT_EQ(r.episode_returns.back(), many.replicas[0].episode_returns.back());
  }
  // Read back and written again, it says the same.
  EXPECT_EQ(ProcessResult::from_json(json).to_json(), json);
  std::string older = results(0x3333)[0].to_json();
  const std::size_t at = older.find("\"episodes\": 2,");
  ASSERT_NE(at, std::string::npos) << older;
  older.erase(at, std::string("\"episodes\": 2,").size());
  const ProcessResult old = ProcessResult::from_json(older);
  EXPECT_EQ(old.replicas[0].episodes, 2);
  EXPECT_EQ(old.replicas[0].episode_returns, (std::vector<double>{10.0, 12.5}));
}

TEST(ProcessResult, NumericsRoundTripAndMergeIntoTheSummary) {
  std::vector<ProcessResult> processes = results(0x3333);
  processes[0].numerics = numerics::Report{"portable", true, "CPU A", "plain", "", "", ""};
  processes[2].numerics =
      numerics::Report{"portable", true, "CPU A", "plain", "/lib/libblas.so.3", "Haswell", "avx2"};
  const ProcessResult back = ProcessResult::from_json(processes[2].to_json());
  ASSERT_TRUE(back.numerics.has_value());
  EXPECT_EQ(back.numerics->blas_core, "Haswell");
  EXPECT_EQ(back.numerics->aten_capability, "avx2");
  EXPECT_TRUE(back.numerics->portable);
  EXPECT_FALSE(ProcessResult::from_json(processes[1].to_json()).numerics.has_value());
  EXPECT_NE(processes[2].to_json().find("\"kernels\": \"portable (x86-64-v3: OpenBLAS Haswell"),
            std::string::npos)
      << processes[2].to_json();
}

TEST(ProcessResult, NoCutoffIsNull) {
  ProcessResult r;
  r.process = "p";
  EXPECT_NE(r.to_json().find("\"cutoff\": null"), std::string::npos);
  EXPECT_FALSE(ProcessResult::from_json(r.to_json()).cutoff.has_value());
}

TEST(ProcessResult, MalformedJsonIsRefusedNamingTheField) {
  EXPECT_THROW((void)ProcessResult::from_json("not json"), std::invalid_argument);
  try {
    (void)ProcessResult::from_json(R"({"process": "p", "mode": "reactor", "seconds": 1})");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("stop_reason"), std::string::npos) << e.what();
  }
  std::string bad_hash = results(0x3333)[2].to_json();
  bad_hash.replace(bad_hash.find("abcdef0123456789"), 16, "xyz");
  EXPECT_THROW((void)ProcessResult::from_json(bad_hash), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::hosts
