// The evaluator's schedule: which weights versions it evaluates, that the same weights give the
// same mean, and the target.
#include "nodes/evaluator/evaluation_schedule.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace tagflow::nodes {
namespace {

EvaluatorSettings cartpole(std::uint64_t every, std::optional<double> target = std::nullopt) {
  EvaluatorSettings s;
  s.evaluation.env_id = "CartPole-v1";
  s.evaluation.hidden = {8};
  s.evaluation.episodes = 3;
  s.evaluation.seed = 11;
  s.every = every;
  s.target_return = target;
  return s;
}

/// CartPole's 4 → 8 → 2 network with every parameter set to `value`.
WeightsMessage weights(std::uint64_t version, float value) {
  WeightsMessage w;
  w.version = version;
  w.values.assign(4 * 8 + 8 + 8 * 2 + 2, value);
  return w;
}

TEST(EvaluationSchedule, EvaluatesEveryEveryVersionsFromTheFirstDueOne) {
  EvaluationSchedule schedule(cartpole(100));
  std::vector<std::uint64_t> evaluated;
  for (std::uint64_t v : {0, 40, 99, 100, 150, 199, 230, 260, 330, 331}) {
    if (schedule.on_weights(weights(v, 0.01F))) evaluated.push_back(v);
  }
  EXPECT_EQ(evaluated, (std::vector<std::uint64_t>{100, 230, 330}));
  EXPECT_EQ(schedule.evaluations().size(), 3U);
  EXPECT_EQ(schedule.weights_version(), 331U);
  EXPECT_FALSE(schedule.target_reached());
}

TEST(EvaluationSchedule, VersionsThatGoBackAreCountedAnew) {
  // A learner restarted from scratch counts from 1 again: it is evaluated at `every` of its own
  // count, not only once it passes the dead learner's last evaluated version.
  EvaluationSchedule schedule(cartpole(100));
  std::vector<std::uint64_t> evaluated;
  for (std::uint64_t v : {100, 200, 250, 1, 50, 100, 150, 200}) {
    if (schedule.on_weights(weights(v, 0.01F))) evaluated.push_back(v);
  }
  EXPECT_EQ(evaluated, (std::vector<std::uint64_t>{100, 200, 100, 200}));
  EXPECT_EQ(schedule.weights_version(), 200U);
}

TEST(EvaluationSchedule, TheSameWeightsGiveTheSameMeanOnTheFixedSeeds) {
  EvaluationSchedule a(cartpole(1));
  EvaluationSchedule b(cartpole(1));
  const std::optional<double> first = a.on_weights(weights(1, 0.05F));
  const std::optional<double> again = b.on_weights(weights(1, 0.05F));
  ASSERT_TRUE(first && again);
  EXPECT_EQ(*first, *again);
  EXPECT_GT(*first, 0.0);  // CartPole pays 1 per step
}

TEST(EvaluationSchedule, StopsEvaluatingOnceAMeanReachesTheTarget) {
  EvaluationSchedule schedule(cartpole(10, -std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(schedule.on_weights(weights(10, 0.0F)).has_value());
  EXPECT_TRUE(schedule.target_reached());
  EXPECT_FALSE(schedule.on_weights(weights(20, 0.0F)).has_value());
  EXPECT_EQ(schedule.evaluations().size(), 1U);
}

TEST(EvaluationSchedule, AMeanBelowTheTargetKeepsEvaluating) {
  // CartPole pays at most 500 an episode: a target of 501 is never reached.
  EvaluationSchedule schedule(cartpole(10, 501.0));
  const std::optional<double> first = schedule.on_weights(weights(10, 0.0F));
  ASSERT_TRUE(first.has_value());
  EXPECT_LT(*first, 501.0);
  EXPECT_FALSE(schedule.target_reached());
  EXPECT_TRUE(schedule.on_weights(weights(20, 0.0F)).has_value());
  EXPECT_FALSE(schedule.target_reached());
  EXPECT_EQ(schedule.evaluations().size(), 2U);
}

TEST(EvaluationSchedule, WeightsOfAnotherShapeAreRefused) {
  EvaluationSchedule schedule(cartpole(1));
  WeightsMessage wrong = weights(1, 0.0F);
  wrong.values.pop_back();
  EXPECT_THROW((void)schedule.on_weights(wrong), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::nodes
