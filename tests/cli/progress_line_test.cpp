// Tests of cli/launch/progress_line.hpp: rates from successive rounds of scrapes, the return and
// weights columns, and processes that miss a round.
#include "cli/launch/progress_line.hpp"

#include <gtest/gtest.h>

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;

ProcessSample sampler(const std::string& name, double steps, double episodes, double mean_return,
                      double version) {
  ProbeResult probe;
  probe.answered = true;
  probe.values = {{"tagflow_env_steps_total", steps},
                  {"tagflow_episodes_total", episodes},
                  {"tagflow_episode_return_mean", mean_return},
                  {"tagflow_weights_version", version}};
  return ProcessSample{name, "sampler", probe};
}

ProcessSample learner(double updates, double version) {
  ProbeResult probe;
  probe.answered = true;
  probe.values = {{"tagflow_learner_updates_total", updates}, {"tagflow_weights_version", version}};
  return ProcessSample{"learner", "learner", probe};
}

ProcessSample silent(const std::string& name, const std::string& kind) {
  return ProcessSample{name, kind, ProbeResult{}};
}

TEST(ProgressLine, ShowsRatesBetweenRoundsAndTheReturnOfSamplersWithEpisodes) {
  const auto start = ProgressLine::Clock::now();
  ProgressLine line(start);
  const std::string first = line.update(
      start + 1s,
      {sampler("sampler-0", 1000, 0, 0, 3), sampler("sampler-1", 500, 2, 20, 3), learner(10, 5)});
  EXPECT_EQ(first,
            "1s | env 0.0 steps/s | learner 0.0 updates/s | return 20.0 | weights v5 | "
            "samplers 2/2");
  const std::string second =
      line.update(start + 3s, {sampler("sampler-0", 21000, 4, 30, 7),
                               sampler("sampler-1", 10500, 6, 50, 7), learner(110, 9)});
  // (20000 + 10000) steps and 100 updates over 2 s; return = mean(30, 50).
  EXPECT_EQ(second,
            "3s | env 15.0k steps/s | learner 50.0 updates/s | return 40.0 | weights v9 | "
            "samplers 2/2");
}

TEST(ProgressLine, AProcessThatMissesARoundIsComparedWithItsLastAnswer) {
  const auto start = ProgressLine::Clock::now();
  ProgressLine line(start);
  line.update(start + 1s, {sampler("sampler-0", 100, 0, 0, 0), sampler("sampler-1", 100, 0, 0, 0)});
  const std::string missed =
      line.update(start + 2s, {sampler("sampler-0", 300, 0, 0, 0), silent("sampler-1", "sampler")});
  EXPECT_NE(missed.find("env 200 steps/s"), std::string::npos) << missed;
  // It answered a second ago: a scrape that timed out on a busy machine is no lost sampler.
  EXPECT_NE(missed.find("samplers 2/2"), std::string::npos) << missed;
  EXPECT_NE(missed.find("return -"), std::string::npos) << missed;  // no episode finished yet
  // sampler-1 answers again: its 400 steps since its answer at 1s count over those 3 s.
  const std::string back = line.update(
      start + 4s, {sampler("sampler-0", 500, 0, 0, 0), sampler("sampler-1", 1300, 0, 0, 0)});
  EXPECT_NE(back.find("env 500 steps/s"), std::string::npos) << back;  // 200/2 + 1200/3
  EXPECT_NE(back.find("samplers 2/2"), std::string::npos) << back;
}

// A sampler silent for longer than kAnswerGrace (5 s) no longer counts as answering; one that
// never answered never did.
TEST(ProgressLine, ASamplerSilentForLongerThanTheGraceIsNotCountedAsAnswering) {
  const auto start = ProgressLine::Clock::now();
  ProgressLine line(start);
  EXPECT_NE(
      line.update(start + 1s, {sampler("sampler-0", 100, 0, 0, 0), silent("sampler-1", "sampler")})
          .find("samplers 1/2"),
      std::string::npos);
  EXPECT_NE(
      line.update(start + 6s, {silent("sampler-0", "sampler"), silent("sampler-1", "sampler")})
          .find("samplers 1/2"),
      std::string::npos);
  const std::string later =
      line.update(start + 7s, {silent("sampler-0", "sampler"), silent("sampler-1", "sampler")});
  EXPECT_NE(later.find("samplers 0/2"), std::string::npos) << later;
}

TEST(ProgressLine, WithoutALearnerTheWeightsVersionIsTheNewestAnyProcessHolds) {
  const auto start = ProgressLine::Clock::now();
  ProgressLine line(start);
  const std::string text =
      line.update(start + 1s, {sampler("sampler-0", 0, 0, 0, 4), sampler("sampler-1", 0, 0, 0, 6),
                               silent("learner", "learner")});
  EXPECT_NE(text.find("weights v6"), std::string::npos) << text;
  const std::string nothing = line.update(start + 7s, {silent("sampler-0", "sampler")});
  EXPECT_NE(nothing.find("weights -"), std::string::npos) << nothing;
  EXPECT_NE(nothing.find("samplers 0/1"), std::string::npos) << nothing;  // silent for 6 s
}

TEST(ProgressLine, ACounterThatWentBackIsNotANegativeRate) {
  const auto start = ProgressLine::Clock::now();
  ProgressLine line(start);
  line.update(start + 1s, {sampler("sampler-0", 5000, 0, 0, 0)});
  // A restarted process (actor mode) counts from zero again.
  const std::string text = line.update(start + 2s, {sampler("sampler-0", 100, 0, 0, 0)});
  EXPECT_NE(text.find("env 0.0 steps/s"), std::string::npos) << text;
}

TEST(FormatRate, UsesThreeSignificantFiguresWithSuffixes) {
  EXPECT_EQ(format_rate(0), "0.0");
  EXPECT_EQ(format_rate(51.26), "51.3");
  EXPECT_EQ(format_rate(8213.4), "8213");
  EXPECT_EQ(format_rate(15000), "15.0k");
  EXPECT_EQ(format_rate(1.5e6), "1.50M");
}

TEST(ProgressLine, JoinedReplicasCountWhileTheyAreInAndAreNamedAsJoined) {
  const auto start = ProgressLine::Clock::now();
  ProgressLine line(start);
  ProcessSample joined = sampler("sampler-2", 100, 0, 0, 0);
  joined.joined = true;
  const std::string in = line.update(start + 1s, {sampler("sampler-0", 100, 0, 0, 0), joined});
  EXPECT_NE(in.find("samplers 2/2 (1 joined)"), std::string::npos) << in;
  const std::string left = line.update(start + 2s, {sampler("sampler-0", 200, 0, 0, 0)});
  EXPECT_NE(left.find("samplers 1/1"), std::string::npos) << left;
  EXPECT_EQ(left.find("joined"), std::string::npos) << left;
}

TEST(ProgressLine, AMultiAgentNodeCountsAsAnEnvNodeWithItsTeamReturn) {
  const auto start = ProgressLine::Clock::now();
  ProgressLine line(start);
  ProcessSample junction = sampler("junction", 100, 0, 0, 0);
  junction.kind = "multi_agent";
  line.update(start + 1s, {junction, learner(0, 0)});
  junction.probe.values = {{"tagflow_env_steps_total", 500},
                           {"tagflow_episodes_total", 3},
                           {"tagflow_episode_return_mean", -12.5},
                           {"tagflow_weights_version", 4}};
  const std::string later = line.update(start + 2s, {junction, learner(20, 4)});
  EXPECT_EQ(later,
            "2s | env 400 steps/s | learner 20.0 updates/s | return -12.5 | weights v4 | "
            "env nodes 1/1");
}

// Reactor mode: replicas that still wait for the coordinator's START say so on the line (a host
// started before the coordinator's, or a federate that has not joined yet); once every one has
// it, the line says nothing about it. Actor mode exports the gauge at 0: nothing either.
TEST(ProgressLine, SaysHowManyReplicasStillWaitForTheCoordinatorsStart) {
  const auto start = ProgressLine::Clock::now();
  ProgressLine line(start);
  auto waits = [](ProcessSample sample, double waiting) {
    sample.probe.values["tagflow_federation_waiting_for_start"] = waiting;
    return sample;
  };
  const std::string before =
      line.update(start + 1s, {waits(sampler("sampler-0", 0, 0, 0, 0), 1),
                               waits(sampler("sampler-1", 0, 0, 0, 0), 0), waits(learner(0, 0), 1),
                               silent("replay", "replay")});
  EXPECT_NE(before.find(" | waiting for the coordinator's START: 2/3"), std::string::npos)
      << before;
  const std::string after =
      line.update(start + 2s, {waits(sampler("sampler-0", 8, 0, 0, 0), 0),
                               waits(sampler("sampler-1", 8, 0, 0, 0), 0), waits(learner(0, 0), 0),
                               silent("replay", "replay")});
  EXPECT_EQ(after.find("waiting"), std::string::npos) << after;
  EXPECT_TRUE(after.size() >= 12 && after.compare(after.size() - 12, 12, "samplers 2/2") == 0)
      << after;
}

}  // namespace
}  // namespace tagflow::cli
