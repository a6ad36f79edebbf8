#include <gtest/gtest.h>

#include <algorithm>

#include "nodes/network_input.hpp"
#include "nodes/sampler/sampler_server.hpp"

namespace tagflow::nodes {
namespace {

constexpr std::size_t kFrame = 4 * 84 * 84;  // PixelPong-v0: a stack of four 84x84 grey frames

SamplerConfig pixel_config(bool local_policy) {
  SamplerConfig c;
  c.env = "PixelPong-v0";
  c.num_envs = 2;
  c.local_policy = local_policy;
  c.hidden = {1};
  c.epsilon_start = 0.0;
  c.epsilon_end = 0.0;
  c.seed = 9;
  return c;
}

TEST(SamplerServerPixels, PixelObservationsTravelAsBytes) {
  SamplerServer s(pixel_config(false));
  EXPECT_EQ(s.observation_type(), ObservationType::kUInt8);
  const ObservationBatchMessage o = s.observations();
  EXPECT_EQ(o.observation_type, ObservationType::kUInt8);
  EXPECT_EQ(o.observation_size, kFrame);
  EXPECT_EQ(o.observations_u8.size(), 2 * kFrame);
  EXPECT_TRUE(o.observations.empty());
  EXPECT_EQ(o.rows(), 2U);
  // A rendered game, not a blank buffer.
  EXPECT_GT(*std::max_element(o.observations_u8.begin(), o.observations_u8.end()), 0);
}

TEST(SamplerServerPixels, TransitionsCarryTheFramesBeforeAndAfterTheStep) {
  SamplerServer s(pixel_config(false));
  const ObservationBatchMessage before = s.observations();
  const TransitionsMessage t = s.step({1, 2}, 5);
  EXPECT_EQ(t.observation_type, ObservationType::kUInt8);
  EXPECT_EQ(t.observations_u8, before.observations_u8);
  EXPECT_EQ(t.next_observations_u8, s.observations().observations_u8);
  EXPECT_TRUE(t.observations.empty());
  EXPECT_TRUE(t.next_observations.empty());
  EXPECT_EQ(t.actions, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(t.weights_version, 5U);
  const Bytes bytes = encode(t);  // consistent, and about one byte per pixel
  EXPECT_LT(bytes.size(), 2 * 2 * kFrame + 200);
}

TEST(SamplerServerPixels, LocalPolicySeesThePixelsScaledToTheUnitInterval) {
  SamplerServer s(pixel_config(true));
  const ObservationBatchMessage o = s.observations();
  // The brightest pixel p of env 0's newest frame, value v > 0.
  const auto newest = o.observations_u8.begin() + 3 * 84 * 84;
  const auto brightest = std::max_element(newest, newest + 84 * 84);
  const auto pixel = static_cast<std::size_t>(brightest - o.observations_u8.begin());
  const float v = static_cast<float>(*brightest);
  ASSERT_GT(v, 0.0F);
  // One hidden unit h = input[p] (ReLU passes it); scores (0, h, 1.5 v / 255). Seeing v / 255
  // the policy picks action 2; seeing the raw v it would pick action 1.
  std::vector<float> w(kFrame + 1 + 3 + 3, 0.0F);  // MlpSpec layout of kFrame-1-3
  w[pixel] = 1.0F;                     // hidden weight row [1 x kFrame], then its bias (0)
  const std::size_t out = kFrame + 1;  // output weights [3 x 1], then output biases [3]
  w[out + 1] = 1.0F;
  w[out + 3 + 2] = 1.5F * v * kPixelScale;
  s.on_weights(WeightsMessage{1, w});
  const TransitionsMessage t = s.step_local();
  EXPECT_EQ(t.actions[0], 2);
  // Env 1 by the same rule on its own pixel.
  const float h1 = static_cast<float>(o.observations_u8[kFrame + pixel]) * kPixelScale;
  EXPECT_EQ(t.actions[1], h1 >= 1.5F * v * kPixelScale ? 1 : 2);
  EXPECT_EQ(t.weights_version, 1U);
}

}  // namespace
}  // namespace tagflow::nodes
