#include <gtest/gtest.h>

#include "nodes/learner/evaluator.hpp"

namespace tagflow::nodes {
namespace {

// The return of one PixelPong-v0 episode (env seeded `seed`) that always plays action 0, over
// at most max_steps steps (0: to its end).
double noop_return(std::uint64_t seed, std::int64_t max_steps = 0) {
  envs::VectorEnvOptions options;
  options.seed = seed;
  envs::VectorEnv env("PixelPong-v0", options);
  env.reset();
  const std::int64_t noop = 0;
  double total = 0.0;
  for (std::int64_t step = 0; max_steps == 0 || step < max_steps; ++step) {
    env.step(envs::Span<const std::int64_t>(&noop, 1));
    total += static_cast<double>(env.rewards()[0]);
    if (env.terminated()[0] != 0 || env.truncated()[0] != 0) return total;
  }
  return total;
}

TEST(EvaluatorPixels, PlaysPixelEpisodesToTheirEnd) {
  // Zero weights score every action alike, so the greedy policy always picks action 0.
  Evaluator evaluator("PixelPong-v0", {2}, 1, 31);
  const std::vector<float> zeros(4 * 84 * 84 * 2 + 2 + 2 * 3 + 3, 0.0F);  // 28224-2-3 MLP
  const double mean = evaluator.mean_return(zeros);
  EXPECT_EQ(mean, noop_return(31));
  EXPECT_GE(mean, -21.0);
  EXPECT_LE(mean, 21.0);
  EXPECT_EQ(evaluator.mean_return(zeros), mean);  // fixed seeds: the same episodes again
}

TEST(EvaluatorPixels, MaxStepsCutsLongEpisodesShort) {
  const std::vector<float> zeros(4 * 84 * 84 * 2 + 2 + 2 * 3 + 3, 0.0F);
  Evaluator capped("PixelPong-v0", {2}, 1, 31, 300);
  EXPECT_EQ(capped.mean_return(zeros), noop_return(31, 300));
  EXPECT_NE(noop_return(31, 300), noop_return(31));  // the cap did cut the episode
  EXPECT_THROW(Evaluator("PixelPong-v0", {2}, 1, 31, -1), std::invalid_argument);
}

TEST(EvaluatorPixels, WeightsOfAnotherShapeAreRejected) {
  Evaluator evaluator("PixelPong-v0", {2}, 1, 31);
  EXPECT_THROW((void)evaluator.mean_return(std::vector<float>(10, 0.0F)), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::nodes
