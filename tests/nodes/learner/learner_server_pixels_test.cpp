#include <gtest/gtest.h>

#include "nodes/learner/learner_server.hpp"
#include "nodes/network_input.hpp"

namespace tagflow::nodes {
namespace {

constexpr std::uint32_t kWidth = 6;

// A pixel minibatch and the same minibatch with the pixels already scaled to floats.
struct Pair {
  SampleBatchMessage pixels;
  SampleBatchMessage floats;
};

Pair batches(std::size_t rows) {
  Pair p;
  SampleBatchMessage& b = p.pixels;
  b.observation_size = kWidth;
  b.observation_type = ObservationType::kUInt8;
  for (std::size_t i = 0; i < rows; ++i) {
    b.keys.push_back(i);
    for (std::uint32_t j = 0; j < kWidth; ++j) {
      b.observations_u8.push_back(static_cast<std::uint8_t>(37 * i + 11 * j));
      b.next_observations_u8.push_back(static_cast<std::uint8_t>(255 - 5 * i - j));
    }
    b.actions.push_back(static_cast<std::int64_t>(i % 3));
    b.rewards.push_back(i % 2 == 0 ? 1.0F : -1.0F);
    b.terminated.push_back(static_cast<std::uint8_t>(i % 4 == 0));
    b.importance_weights.push_back(1.0F);
    b.weights_versions.push_back(0);
  }
  p.floats = b;
  p.floats.observation_type = ObservationType::kFloat32;
  p.floats.observations_u8.clear();
  p.floats.next_observations_u8.clear();
  for (const std::uint8_t x : b.observations_u8) {
    p.floats.observations.push_back(static_cast<float>(x) * kPixelScale);
  }
  for (const std::uint8_t x : b.next_observations_u8) {
    p.floats.next_observations.push_back(static_cast<float>(x) * kPixelScale);
  }
  return p;
}

LearnerConfig config() {
  const NodeParams p("learner", {{"learning_rate", "0.01"}, {"hidden", "8"}});
  return LearnerConfig::from_params(p, 3, static_cast<int>(kWidth), 3);
}

TEST(LearnerServerPixels, APixelBatchTrainsLikeTheSameBatchScaledToFloats) {
  LearnerServer from_pixels(config());
  LearnerServer from_floats(config());
  const Pair p = batches(16);
  for (int update = 0; update < 5; ++update) {
    const LearnerOutput a = from_pixels.on_batch(p.pixels);
    const LearnerOutput b = from_floats.on_batch(p.floats);
    EXPECT_EQ(a.priorities.priorities, b.priorities.priorities) << update;
    EXPECT_EQ(a.loss, b.loss) << update;
  }
  EXPECT_EQ(from_pixels.weights().values, from_floats.weights().values);
}

TEST(LearnerServerPixels, UnscaledPixelsWouldTrainDifferently) {
  // The conversion is a real scaling, not a cast: raw 0..255 floats give other priorities.
  LearnerServer from_pixels(config());
  LearnerServer from_raw(config());
  const Pair p = batches(16);
  SampleBatchMessage raw = p.floats;
  for (std::size_t i = 0; i < raw.observations.size(); ++i) {
    raw.observations[i] = static_cast<float>(p.pixels.observations_u8[i]);
    raw.next_observations[i] = static_cast<float>(p.pixels.next_observations_u8[i]);
  }
  EXPECT_NE(from_pixels.on_batch(p.pixels).priorities.priorities,
            from_raw.on_batch(raw).priorities.priorities);
}

}  // namespace
}  // namespace tagflow::nodes
