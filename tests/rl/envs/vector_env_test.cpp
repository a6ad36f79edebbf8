#include "rl/envs/vector_env.hpp"

#include <vector>

#include <gtest/gtest.h>

#include "rl/envs/cartpole.hpp"
#include "rl/envs/pendulum.hpp"
#include "rl/envs/pixel_pong.hpp"

namespace tagflow::envs {
namespace {

std::vector<float> row(Span<const float> all, std::size_t i, std::size_t width) {
  return {all.begin() + i * width, all.begin() + (i + 1) * width};
}

TEST(VectorEnv, EnvIIsResetWithSeedPlusI) {
  VectorEnv venv("CartPole-v1", {4, 100, 1, AutoresetMode::kNextStep});
  venv.reset();
  for (std::size_t i = 0; i < 4; ++i) {
    CartPole single;
    std::vector<float> obs(4);
    single.reset(100 + i, obs);
    EXPECT_EQ(row(venv.observations(), i, 4), obs) << i;
  }
  EXPECT_NE(row(venv.observations(), 0, 4), row(venv.observations(), 1, 4));
}

TEST(VectorEnv, NextStepAutoresetMatchesASingleEnvThatResetsByHand) {
  VectorEnv venv("CartPole-v1", {2, 5, 1, AutoresetMode::kNextStep});
  venv.reset();
  CartPole single;  // mirrors env 1
  std::vector<float> obs(4);
  single.reset(6, obs);
  const std::vector<std::int64_t> actions = {1, 1};
  bool saw_end = false;
  bool saw_reset_step = false;
  bool single_done = false;
  for (int t = 0; t < 60; ++t) {
    venv.step(actions);
    if (single_done) {
      single.reset(std::nullopt, obs);
      single_done = false;
      EXPECT_FLOAT_EQ(venv.rewards()[1], 0.0F);
      EXPECT_EQ(venv.terminated()[1], 0);
      EXPECT_EQ(venv.episode_steps()[1], 0);
      saw_reset_step = true;
    } else {
      const StepResult r = single.step(Action::discrete(1), obs);
      single_done = r.terminated || r.truncated;
      EXPECT_EQ(venv.terminated()[1], r.terminated ? 1 : 0);
      EXPECT_FLOAT_EQ(venv.rewards()[1], r.reward);
      saw_end = saw_end || r.terminated;
    }
    EXPECT_EQ(row(venv.observations(), 1, 4), obs) << t;
  }
  EXPECT_TRUE(saw_end);
  EXPECT_TRUE(saw_reset_step);
}

TEST(VectorEnv, SameStepAutoresetKeepsTheFinalObservation) {
  VectorEnv venv("CartPole-v1", {1, 3, 1, AutoresetMode::kSameStep});
  venv.reset();
  CartPole single;
  std::vector<float> obs(4);
  single.reset(3, obs);
  const std::vector<std::int64_t> actions = {0};
  for (int t = 0; t < 100; ++t) {
    venv.step(actions);
    const StepResult r = single.step(Action::discrete(0), obs);
    ASSERT_EQ(venv.terminated()[0], r.terminated ? 1 : 0);
    if (r.terminated) {
      EXPECT_EQ(row(venv.final_observations(), 0, 4), obs);
      single.reset(std::nullopt, obs);
      EXPECT_EQ(row(venv.observations(), 0, 4), obs);
      EXPECT_EQ(venv.episode_steps()[0], 0);
      return;
    }
    EXPECT_EQ(row(venv.observations(), 0, 4), obs);
  }
  FAIL() << "pushing left for 100 steps never ended the episode";
}

TEST(VectorEnv, TruncatesEachEnvAfterItsTimeLimit) {
  VectorEnv venv("CartPole-v1", {3, 0, 1, AutoresetMode::kNextStep});
  venv.reset();
  std::vector<std::int64_t> actions(3);
  int truncations = 0;
  for (int t = 0; t < 600; ++t) {
    // Balance each pole: push towards the side it is falling to.
    for (std::size_t i = 0; i < 3; ++i) {
      const std::vector<float> o = row(venv.observations(), i, 4);
      actions[i] = o[2] + 0.5F * o[3] > 0.0F ? 1 : 0;
    }
    venv.step(actions);
    for (std::size_t i = 0; i < 3; ++i) {
      ASSERT_EQ(venv.terminated()[i], 0) << "env " << i << " fell at step " << t;
      if (venv.truncated()[i] != 0) {
        EXPECT_EQ(venv.episode_steps()[i], 500);
        ++truncations;
      }
    }
  }
  EXPECT_EQ(truncations, 3);
}

TEST(VectorEnv, ThreadCountDoesNotChangeResults) {
  VectorEnv one("CartPole-v1", {64, 11, 1, AutoresetMode::kSameStep});
  VectorEnv two("CartPole-v1", {64, 11, 2, AutoresetMode::kSameStep});
  one.reset();
  two.reset();
  std::vector<std::int64_t> actions(64);
  for (int t = 0; t < 300; ++t) {
    for (std::size_t i = 0; i < actions.size(); ++i) actions[i] = (t * 7 + i * 3) % 5 < 2 ? 1 : 0;
    one.step(actions);
    two.step(actions);
    ASSERT_EQ(std::vector<float>(one.observations().begin(), one.observations().end()),
              std::vector<float>(two.observations().begin(), two.observations().end()));
    ASSERT_EQ(std::vector<std::uint8_t>(one.terminated().begin(), one.terminated().end()),
              std::vector<std::uint8_t>(two.terminated().begin(), two.terminated().end()));
  }
}

TEST(VectorEnv, FactoryPathMatchesTheRegisteredPath) {
  VectorEnv fast("CartPole-v1", {8, 2, 1, AutoresetMode::kNextStep});
  VectorEnv generic([] { return std::make_unique<CartPole>(); },
                    {8, 2, 1, AutoresetMode::kNextStep});
  fast.reset();
  generic.reset();
  std::vector<std::int64_t> actions(8, 1);
  for (int t = 0; t < 40; ++t) {
    fast.step(actions);
    generic.step(actions);
    ASSERT_EQ(std::vector<float>(fast.observations().begin(), fast.observations().end()),
              std::vector<float>(generic.observations().begin(), generic.observations().end()));
    ASSERT_EQ(std::vector<float>(fast.rewards().begin(), fast.rewards().end()),
              std::vector<float>(generic.rewards().begin(), generic.rewards().end()));
  }
}

TEST(VectorEnv, BoxActionsGoToTheirEnvs) {
  VectorEnv venv("Pendulum-v1", {2, 9, 1, AutoresetMode::kNextStep});
  venv.reset();
  Pendulum a;
  Pendulum b;
  std::vector<float> oa(3);
  std::vector<float> ob(3);
  a.reset(9, oa);
  b.reset(10, ob);
  const std::vector<float> torques = {2.0F, -1.5F};
  venv.step(torques);
  const StepResult ra = a.step(Action::box(Span<const float>(&torques[0], 1)), oa);
  const StepResult rb = b.step(Action::box(Span<const float>(&torques[1], 1)), ob);
  EXPECT_EQ(row(venv.observations(), 0, 3), oa);
  EXPECT_EQ(row(venv.observations(), 1, 3), ob);
  EXPECT_FLOAT_EQ(venv.rewards()[0], ra.reward);
  EXPECT_FLOAT_EQ(venv.rewards()[1], rb.reward);
  EXPECT_THROW(venv.step(std::vector<float>{1.0F}), std::invalid_argument);
  EXPECT_THROW(venv.step(std::vector<std::int64_t>{0, 0}), std::invalid_argument);
}

TEST(VectorEnv, PixelFramesComeAsBytes) {
  VectorEnv venv("PixelPongNoFrameskip-v0", {3, 0, 2, AutoresetMode::kNextStep});
  venv.reset();
  venv.step(std::vector<std::int64_t>{0, 1, 2});
  const Span<const std::uint8_t> frames = venv.observations_u8();
  ASSERT_EQ(frames.size(), 3U * 100800U);
  PixelPong single;
  std::vector<std::uint8_t> frame(100800);
  single.reset(1, frame);
  (void)single.step(Action::discrete(1), frame);
  EXPECT_TRUE(std::equal(frame.begin(), frame.end(), frames.begin() + 100800));
  EXPECT_THROW((void)venv.observations(), std::logic_error);
}

TEST(VectorEnv, BuffersKeepTheirAddressesAcrossSteps) {
  VectorEnv venv("CartPole-v1", {4, 0, 1, AutoresetMode::kNextStep});
  venv.reset();
  const float* before = venv.observations().data();
  venv.step(std::vector<std::int64_t>(4, 0));
  EXPECT_EQ(venv.observations().data(), before);
}

TEST(VectorEnv, RejectsBadActionsBeforeMovingAnyEnv) {
  VectorEnv venv("CartPole-v1", {2, 0, 1, AutoresetMode::kNextStep});
  venv.reset();
  const std::vector<float> before(venv.observations().begin(), venv.observations().end());
  EXPECT_THROW(venv.step(std::vector<std::int64_t>{0, 2}), std::invalid_argument);
  EXPECT_THROW(venv.step(std::vector<std::int64_t>{0}), std::invalid_argument);
  EXPECT_THROW(venv.step(std::vector<float>{0.0F, 1.0F}), std::invalid_argument);
  EXPECT_THROW((void)venv.observations_u8(), std::logic_error);
  EXPECT_EQ(std::vector<float>(venv.observations().begin(), venv.observations().end()), before);
}

TEST(VectorEnv, RejectsUnknownIdsAndEmptyBatches) {
  EXPECT_THROW(VectorEnv("NoSuchEnv-v0", {}), std::invalid_argument);
  EXPECT_THROW(VectorEnv("CartPole-v1", {0, 0, 1, AutoresetMode::kNextStep}),
               std::invalid_argument);
}

TEST(VectorEnv, StepBeforeResetIsAnError) {
  VectorEnv venv("CartPole-v1", {});
  EXPECT_THROW(venv.step(std::vector<std::int64_t>{0}), std::logic_error);
}

}  // namespace
}  // namespace tagflow::envs
