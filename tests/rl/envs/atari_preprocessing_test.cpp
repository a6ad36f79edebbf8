#include "rl/envs/atari_preprocessing.hpp"

#include <vector>

#include <gtest/gtest.h>

#include "rl/envs/pixel_pong.hpp"

namespace tagflow::envs {
namespace {

/// A 2×2 RGB env whose frame k is filled with value k (mod 256) and whose reward is k: frame
/// pooling, reward sums and stacking become visible in the numbers. Ends after `length` frames.
class CountingEnv final : public Env {
 public:
  explicit CountingEnv(int length) : length_(length) {
    spec_.id = "Counting-v0";
    spec_.observation_space = Space::box({2, 2, 3}, 0.0F, 255.0F, DType::kUInt8);
    spec_.action_space = Space::discrete(2);
  }
  const EnvSpec& spec() const noexcept override { return spec_; }
  void reset_impl(void* observation) override {
    frame_ = 0;
    ++resets;
    fill(observation);
  }
  StepResult step_impl(const Action& action, void* observation) override {
    ++frame_;
    if (action.index == 0) ++noops;
    fill(observation);
    StepResult r;
    r.reward = static_cast<float>(frame_);
    r.terminated = frame_ >= length_;
    return r;
  }
  int frame() const { return frame_; }
  int noops = 0;
  int resets = 0;

 private:
  void fill(void* observation) const {
    auto* out = static_cast<std::uint8_t*>(observation);
    for (int i = 0; i < 12; ++i) out[i] = static_cast<std::uint8_t>(frame_ % 256);
  }
  EnvSpec spec_;
  int length_;
  int frame_ = 0;
};

struct Wrapped {
  explicit Wrapped(const AtariOptions& options, int length = 1000) {
    auto inner = std::make_unique<CountingEnv>(length);
    counting = inner.get();
    env = std::make_unique<AtariPreprocessing>(std::move(inner), options, "Counting-atari");
    obs.resize(env->spec().observation_space.size());
  }
  CountingEnv* counting = nullptr;
  std::unique_ptr<AtariPreprocessing> env;
  std::vector<std::uint8_t> obs;
};

AtariOptions small_options() {
  AtariOptions o;
  o.screen_size = 1;  // 2×2 → 1×1: one number per stacked frame
  return o;
}

TEST(AtariPreprocessing, ResetPlaysBetweenOneAndNoopMaxNoops) {
  Wrapped w(small_options());
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    w.env->reset(seed, w.obs);
    EXPECT_GE(w.counting->frame(), 1);
    EXPECT_LE(w.counting->frame(), 30);
    // Every stack slot holds the reset frame (grey of a uniform frame is the value itself).
    for (std::uint8_t v : w.obs) EXPECT_EQ(v, w.counting->frame());
  }
}

TEST(AtariPreprocessing, StepSkipsFourFramesSumsRewardsAndStacksOldestFirst) {
  Wrapped w(small_options());
  w.env->reset(1, w.obs);
  const int f0 = w.counting->frame();
  const StepResult r = w.env->step(Action::discrete(1), w.obs);
  EXPECT_EQ(w.counting->frame(), f0 + 4);
  EXPECT_FLOAT_EQ(r.reward, static_cast<float>(4 * f0 + 1 + 2 + 3 + 4));
  // Max-pool of frames f0+3 and f0+4 is f0+4; the three older slots still hold the reset frame.
  EXPECT_EQ(w.obs, (std::vector<std::uint8_t>{
                       static_cast<std::uint8_t>(f0), static_cast<std::uint8_t>(f0),
                       static_cast<std::uint8_t>(f0), static_cast<std::uint8_t>(f0 + 4)}));
  (void)w.env->step(Action::discrete(1), w.obs);
  EXPECT_EQ(w.obs[2], f0 + 4);
  EXPECT_EQ(w.obs[3], f0 + 8);
}

TEST(AtariPreprocessing, StopsSkippingWhenTheInnerEpisodeEnds) {
  AtariOptions o = small_options();
  o.noop_max = 0;
  Wrapped w(o, 6);
  w.env->reset(0, w.obs);
  (void)w.env->step(Action::discrete(1), w.obs);                 // frames 1..4
  const StepResult r = w.env->step(Action::discrete(1), w.obs);  // frames 5, 6 then the end
  EXPECT_TRUE(r.terminated);
  EXPECT_FLOAT_EQ(r.reward, 11.0F);
  EXPECT_EQ(w.counting->frame(), 6);
  // As in Gymnasium, the pooled frame is the one kept from the previous step.
  EXPECT_EQ(w.obs[3], 4);
}

TEST(AtariPreprocessing, NoopsThatEndAnEpisodeResetTheInnerEnv) {
  AtariOptions o = small_options();
  Wrapped w(o, 2);
  int max_resets = 0;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    w.counting->resets = 0;
    w.env->reset(seed, w.obs);
    max_resets = std::max(max_resets, w.counting->resets);
    EXPECT_LT(w.counting->frame(), 2);
  }
  EXPECT_GT(max_resets, 1);
}

TEST(AtariPreprocessing, RejectsNonRgbInnerEnvs) {
  auto make = [] {
    return AtariPreprocessing(std::make_unique<PixelPongAtari>(), AtariOptions{}, "x");
  };
  EXPECT_THROW(make(), std::invalid_argument);
}

TEST(PixelPongAtari, ObservationsAreFourStackedGrey84x84Frames) {
  PixelPongAtari env;
  EXPECT_EQ(env.spec().id, "PixelPong-v0");
  EXPECT_EQ(env.spec().observation_space.to_string(), "Box(0, 255, (4, 84, 84), uint8)");
  std::vector<std::uint8_t> obs(4 * 84 * 84);
  env.reset(0, obs);
  // The field's brown is luma 87; the middle of the screen is field.
  EXPECT_EQ(obs[3 * 84 * 84 + 42 * 84 + 42], 87);
  std::vector<std::uint8_t> before = obs;
  (void)env.step(Action::discrete(1), obs);
  // Slots 0..2 after the step are slots 1..3 from before.
  EXPECT_TRUE(std::equal(obs.begin(), obs.begin() + 3 * 84 * 84, before.begin() + 84 * 84));
  EXPECT_NE(std::vector<std::uint8_t>(obs.begin() + 3 * 84 * 84, obs.end()),
            std::vector<std::uint8_t>(before.begin() + 3 * 84 * 84, before.end()));
}

TEST(PixelPongAtari, SameSeedSameObservations) {
  PixelPongAtari a;
  PixelPongAtari b;
  std::vector<std::uint8_t> oa(4 * 84 * 84);
  std::vector<std::uint8_t> ob(4 * 84 * 84);
  a.reset(11, oa);
  b.reset(11, ob);
  ASSERT_EQ(oa, ob);
  for (int t = 0; t < 50; ++t) {
    (void)a.step(Action::discrete(t % 3), oa);
    (void)b.step(Action::discrete(t % 3), ob);
    ASSERT_EQ(oa, ob);
  }
}

}  // namespace
}  // namespace tagflow::envs
