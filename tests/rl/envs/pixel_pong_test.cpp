#include "rl/envs/pixel_pong.hpp"

#include <array>
#include <vector>

#include <gtest/gtest.h>

namespace tagflow::envs {
namespace {

using Color = std::array<std::uint8_t, 3>;

Color pixel(const std::vector<std::uint8_t>& frame, int row, int col) {
  const std::size_t i = (static_cast<std::size_t>(row) * PixelPong::kWidth + col) * 3;
  return {frame[i], frame[i + 1], frame[i + 2]};
}

/// Rows of column `col` painted in `color`.
std::vector<int> rows_with(const std::vector<std::uint8_t>& frame, int col, const Color& color) {
  std::vector<int> rows;
  for (int r = 0; r < PixelPong::kHeight; ++r) {
    if (pixel(frame, r, col) == color) rows.push_back(r);
  }
  return rows;
}

constexpr int kSub = PixelPong::kSub;

TEST(PixelPong, FramesAreAtariSizedRgb) {
  PixelPong env;
  EXPECT_EQ(env.spec().observation_space.to_string(), "Box(0, 255, (210, 160, 3), uint8)");
  EXPECT_EQ(env.spec().observation_space.bytes(), 100800U);
  std::vector<std::uint8_t> frame(100800);
  env.reset(0, frame);
  EXPECT_EQ(pixel(frame, 100, 80), PixelPong::kBackground);
  EXPECT_EQ(pixel(frame, 28, 80), PixelPong::kWall);
  EXPECT_EQ(pixel(frame, 200, 5), PixelPong::kWall);
  // Both paddles start centred, 16 rows tall.
  const std::vector<int> player = rows_with(frame, PixelPong::kPlayerX + 1, PixelPong::kPlayer);
  ASSERT_EQ(player.size(), 16U);
  EXPECT_EQ(player.front(), env.game().player_y / kSub);
  EXPECT_EQ(rows_with(frame, PixelPong::kCpuX, PixelPong::kCpu).size(), 16U);
}

TEST(PixelPong, UpAndDownMoveThePaddleInTheFrame) {
  PixelPong env;
  std::vector<std::uint8_t> frame(100800);
  env.reset(0, frame);
  const int start = rows_with(frame, PixelPong::kPlayerX, PixelPong::kPlayer).front();
  (void)env.step(Action::discrete(1), frame);
  EXPECT_EQ(rows_with(frame, PixelPong::kPlayerX, PixelPong::kPlayer).front(), start - 3);
  (void)env.step(Action::discrete(2), frame);
  (void)env.step(Action::discrete(2), frame);
  EXPECT_EQ(rows_with(frame, PixelPong::kPlayerX, PixelPong::kPlayer).front(), start + 3);
  for (int i = 0; i < 100; ++i) (void)env.step(Action::discrete(1), frame);
  EXPECT_EQ(rows_with(frame, PixelPong::kPlayerX, PixelPong::kPlayer).front(),
            PixelPong::kFieldTop);
}

TEST(PixelPong, TheBallIsServedAfterTheDelayAndDrawn) {
  PixelPong env;
  std::vector<std::uint8_t> frame(100800);
  env.reset(3, frame);
  for (int i = 0; i < PixelPong::kServeDelay; ++i) (void)env.step(Action::discrete(0), frame);
  const PongState& g = env.game();
  ASSERT_EQ(g.serve_delay, 0);
  EXPECT_NE(g.ball_vx, 0);
  EXPECT_NE(g.ball_vy, 0);
  EXPECT_EQ(pixel(frame, g.ball_y / kSub, g.ball_x / kSub), PixelPong::kBall);
}

TEST(PixelPong, MissingTheBallCostsAPoint) {
  PixelPong env;
  std::vector<std::uint8_t> frame(100800);
  env.reset(0, frame);
  PongState g = env.game();
  g.serve_delay = 0;
  g.ball_x = 150 * kSub;
  g.ball_y = 40 * kSub;
  g.ball_vx = 4 * kSub;
  g.ball_vy = 0;
  g.player_y = 170 * kSub;  // far below the ball
  env.set_game(g);
  float total = 0.0F;
  for (int i = 0; i < 5; ++i) total += env.step(Action::discrete(0), frame).reward;
  EXPECT_FLOAT_EQ(total, -1.0F);
  EXPECT_EQ(env.game().cpu_score, 1);
  EXPECT_EQ(env.game().serve_delay, PixelPong::kServeDelay - 2);
}

TEST(PixelPong, ThePaddleReturnsTheBall) {
  PixelPong env;
  std::vector<std::uint8_t> frame(100800);
  env.reset(0, frame);
  PongState g = env.game();
  g.serve_delay = 0;
  g.ball_x = 136 * kSub;
  g.ball_y = 100 * kSub;
  g.ball_vx = 2 * kSub;
  g.ball_vy = 0;
  g.player_y = 94 * kSub;  // ball centre 102, paddle centre 102
  env.set_game(g);
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(env.step(Action::discrete(0), frame).reward, 0.0F);
  EXPECT_LT(env.game().ball_vx, 0);
  EXPECT_EQ(env.game().ball_vy, 0);
}

TEST(PixelPong, ScoringTheComputersMissGivesPlusOneAndTwentyOneEndsTheGame) {
  PixelPong env;
  std::vector<std::uint8_t> frame(100800);
  env.reset(0, frame);
  PongState g = env.game();
  g.serve_delay = 0;
  g.ball_x = 4 * kSub;
  g.ball_y = 180 * kSub;
  g.ball_vx = -4 * kSub;
  g.ball_vy = 0;
  g.cpu_y = 40 * kSub;
  g.player_score = 20;
  env.set_game(g);
  StepResult r;
  int steps = 0;
  do {
    r = env.step(Action::discrete(0), frame);
  } while (!r.terminated && ++steps < 5);
  EXPECT_TRUE(r.terminated);
  EXPECT_FLOAT_EQ(r.reward, 1.0F);
  EXPECT_EQ(env.game().player_score, 21);
}

TEST(PixelPong, SameSeedSameFrames) {
  PixelPong a;
  PixelPong b;
  std::vector<std::uint8_t> fa(100800);
  std::vector<std::uint8_t> fb(100800);
  a.reset(5, fa);
  b.reset(5, fb);
  for (int t = 0; t < 300; ++t) {
    const std::int64_t action = (t / 7) % 3;
    const StepResult ra = a.step(Action::discrete(action), fa);
    const StepResult rb = b.step(Action::discrete(action), fb);
    ASSERT_EQ(fa, fb) << t;
    ASSERT_EQ(ra.reward, rb.reward);
  }
}

TEST(PixelPong, ARandomPlayerLosesAWholeGame) {
  PixelPong env;
  std::vector<std::uint8_t> frame(100800);
  env.reset(1, frame);
  std::uint64_t x = 88172645463325252ULL;
  float total = 0.0F;
  StepResult r;
  int steps = 0;
  do {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    r = env.step(Action::discrete(static_cast<std::int64_t>(x % 3)), frame);
    total += r.reward;
    ++steps;
  } while (!r.terminated && !r.truncated);
  EXPECT_TRUE(r.terminated);
  EXPECT_EQ(env.game().cpu_score, 21);
  EXPECT_FLOAT_EQ(total, static_cast<float>(env.game().player_score - 21));
  EXPECT_GT(steps, 21 * PixelPong::kServeDelay);
}

}  // namespace
}  // namespace tagflow::envs
