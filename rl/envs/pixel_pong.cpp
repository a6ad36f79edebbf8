#include "rl/envs/pixel_pong.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "rl/envs/random.hpp"

namespace tagflow::envs {
namespace {

using Color = std::array<std::uint8_t, 3>;

constexpr int kFrameBytes = PixelPong::kHeight * PixelPong::kWidth * PixelPong::kChannels;
constexpr std::int32_t kSub = PixelPong::kSub;
constexpr std::int32_t kPaddleSpeed = 3 * kSub;  // the agent's paddle, per frame
constexpr std::int32_t kCpuSpeed = 2 * kSub;     // slower than the fastest ball: beatable
constexpr std::int32_t kServeSpeed = 2 * kSub;
constexpr std::int32_t kMaxSpeedX = 4 * kSub;

// 3×5 digit glyphs, one row per 3 bits (bit 2 = left column).
constexpr std::uint8_t kDigits[10][5] = {
    {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
    {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7}};
constexpr int kDigitScale = 4;
constexpr int kDigitTop = 2;

void fill_rect(std::uint8_t* frame, int x, int y, int w, int h, const Color& c) noexcept {
  const int x0 = std::max(x, 0);
  const int y0 = std::max(y, 0);
  const int x1 = std::min(x + w, PixelPong::kWidth);
  const int y1 = std::min(y + h, PixelPong::kHeight);
  for (int row = y0; row < y1; ++row) {
    std::uint8_t* p = frame + (row * PixelPong::kWidth + x0) * 3;
    for (int col = x0; col < x1; ++col, p += 3) {
      p[0] = c[0];
      p[1] = c[1];
      p[2] = c[2];
    }
  }
}

void draw_digit(std::uint8_t* frame, int digit, int x, const Color& c) noexcept {
  for (int r = 0; r < 5; ++r) {
    for (int col = 0; col < 3; ++col) {
      if ((kDigits[digit][r] >> (2 - col)) & 1) {
        fill_rect(frame, x + col * kDigitScale, kDigitTop + r * kDigitScale, kDigitScale,
                  kDigitScale, c);
      }
    }
  }
}

void draw_score(std::uint8_t* frame, int score, int x, const Color& c) noexcept {
  if (score >= 10) draw_digit(frame, (score / 10) % 10, x, c);
  draw_digit(frame, score % 10, x + 16, c);
}

/// Walls and field, drawn once.
const std::vector<std::uint8_t>& background() {
  static const std::vector<std::uint8_t> frame = [] {
    std::vector<std::uint8_t> f(kFrameBytes);
    fill_rect(f.data(), 0, 0, PixelPong::kWidth, PixelPong::kHeight, PixelPong::kBackground);
    fill_rect(f.data(), 0, 24, PixelPong::kWidth, PixelPong::kFieldTop - 24, PixelPong::kWall);
    fill_rect(f.data(), 0, PixelPong::kFieldBottom, PixelPong::kWidth,
              PixelPong::kHeight - PixelPong::kFieldBottom, PixelPong::kWall);
    return f;
  }();
  return frame;
}

EnvSpec pixel_pong_spec() {
  EnvSpec spec;
  spec.id = "PixelPongNoFrameskip-v0";
  spec.observation_space = Space::box({PixelPong::kHeight, PixelPong::kWidth, PixelPong::kChannels},
                                      0.0F, 255.0F, DType::kUInt8);
  spec.action_space = Space::discrete(3);
  spec.max_episode_steps = PixelPong::kMaxEpisodeSteps;
  spec.reward_threshold = 20.0;
  return spec;
}

constexpr std::int32_t kPaddleMinY = PixelPong::kFieldTop * kSub;
constexpr std::int32_t kPaddleMaxY = (PixelPong::kFieldBottom - PixelPong::kPaddleHeight) * kSub;
constexpr std::int32_t kBallMinY = PixelPong::kFieldTop * kSub;
constexpr std::int32_t kBallMaxY = (PixelPong::kFieldBottom - PixelPong::kBallHeight) * kSub;

}  // namespace

const EnvSpec& PixelPong::spec() const noexcept {
  static const EnvSpec spec = pixel_pong_spec();
  return spec;
}

void PixelPong::reset_impl(void* observation) {
  game_ = PongState{};
  const std::int32_t middle = (kFieldTop + kFieldBottom - kPaddleHeight) / 2 * kSub;
  game_.player_y = middle;
  game_.cpu_y = middle;
  game_.serve_delay = kServeDelay;
  game_.serve_to_player = uniform_index(rng(), 2) == 1;
  render(static_cast<std::uint8_t*>(observation));
}

void PixelPong::serve() {
  const std::int32_t span = kBallMaxY - kBallMinY;
  game_.ball_x = (kWidth / 2 - kBallWidth / 2) * kSub;
  game_.ball_y = kBallMinY + span / 4 + static_cast<std::int32_t>(uniform_index(rng(), span / 2));
  game_.ball_vx = game_.serve_to_player ? kServeSpeed : -kServeSpeed;
  // Vertical speed 0.5 to 2 px per frame, up or down.
  const auto magnitude = static_cast<std::int32_t>(kSub / 2 + uniform_index(rng(), 3 * kSub / 2));
  game_.ball_vy = uniform_index(rng(), 2) == 1 ? magnitude : -magnitude;
}

void PixelPong::move_paddles(std::int64_t action) noexcept {
  if (action == 1) game_.player_y -= kPaddleSpeed;
  if (action == 2) game_.player_y += kPaddleSpeed;
  game_.player_y = std::clamp(game_.player_y, kPaddleMinY, kPaddleMaxY);
  // The computer follows the ball's centre, or drifts back to the middle while none is in play.
  const std::int32_t target = game_.serve_delay > 0
                                  ? (kFieldTop + kFieldBottom - kPaddleHeight) / 2 * kSub
                                  : game_.ball_y + (kBallHeight - kPaddleHeight) * kSub / 2;
  const std::int32_t delta = std::clamp(target - game_.cpu_y, -kCpuSpeed, kCpuSpeed);
  game_.cpu_y = std::clamp(game_.cpu_y + delta, kPaddleMinY, kPaddleMaxY);
}

void PixelPong::bounce_off_paddle(std::int32_t paddle_y, bool is_player) noexcept {
  const std::int32_t ball_center = game_.ball_y + kBallHeight * kSub / 2;
  const std::int32_t paddle_center = paddle_y + kPaddleHeight * kSub / 2;
  // Offset in [-10, 10] px (paddle half-height plus ball half-height) steers the ball.
  const std::int32_t offset = (ball_center - paddle_center) / kSub;
  game_.ball_vy = offset * kSub / 5;
  const std::int32_t speed = std::min(std::abs(game_.ball_vx) + kSub / 4, kMaxSpeedX);
  game_.ball_vx = is_player ? -speed : speed;
  game_.ball_x = is_player ? (kPlayerX - kBallWidth) * kSub : (kCpuX + kPaddleWidth) * kSub;
}

int PixelPong::move_ball() noexcept {
  if (game_.serve_delay > 0) {
    if (--game_.serve_delay == 0) serve();
    return 0;
  }
  game_.ball_x += game_.ball_vx;
  game_.ball_y += game_.ball_vy;
  if (game_.ball_y < kBallMinY) {
    game_.ball_y = 2 * kBallMinY - game_.ball_y;
    game_.ball_vy = -game_.ball_vy;
  } else if (game_.ball_y > kBallMaxY) {
    game_.ball_y = 2 * kBallMaxY - game_.ball_y;
    game_.ball_vy = -game_.ball_vy;
  }
  auto overlaps = [&](std::int32_t paddle_y) {
    return game_.ball_y + kBallHeight * kSub > paddle_y &&
           game_.ball_y < paddle_y + kPaddleHeight * kSub;
  };
  const std::int32_t ball_left = game_.ball_x;
  const std::int32_t ball_right = game_.ball_x + kBallWidth * kSub;
  if (game_.ball_vx > 0 && ball_right > kPlayerX * kSub &&
      ball_left < (kPlayerX + kPaddleWidth) * kSub && overlaps(game_.player_y)) {
    bounce_off_paddle(game_.player_y, true);
  } else if (game_.ball_vx < 0 && ball_left < (kCpuX + kPaddleWidth) * kSub &&
             ball_right > kCpuX * kSub && overlaps(game_.cpu_y)) {
    bounce_off_paddle(game_.cpu_y, false);
  }
  if (ball_right <= 0) {
    ++game_.player_score;
    game_.serve_delay = kServeDelay;
    game_.serve_to_player = false;  // the side that lost the point receives the serve
    return 1;
  }
  if (ball_left >= kWidth * kSub) {
    ++game_.cpu_score;
    game_.serve_delay = kServeDelay;
    game_.serve_to_player = true;
    return -1;
  }
  return 0;
}

StepResult PixelPong::step_impl(const Action& action, void* observation) {
  move_paddles(action.index);
  const int point = move_ball();
  render(static_cast<std::uint8_t*>(observation));
  StepResult result;
  result.reward = static_cast<float>(point);
  result.terminated = game_.player_score >= kWinningScore || game_.cpu_score >= kWinningScore;
  return result;
}

void PixelPong::render(std::uint8_t* frame) const noexcept {
  std::memcpy(frame, background().data(), kFrameBytes);
  draw_score(frame, game_.cpu_score, 20, kCpu);
  draw_score(frame, game_.player_score, 100, kPlayer);
  fill_rect(frame, kCpuX, game_.cpu_y / kSub, kPaddleWidth, kPaddleHeight, kCpu);
  fill_rect(frame, kPlayerX, game_.player_y / kSub, kPaddleWidth, kPaddleHeight, kPlayer);
  if (game_.serve_delay == 0) {
    fill_rect(frame, game_.ball_x / kSub, game_.ball_y / kSub, kBallWidth, kBallHeight, kBall);
  }
}

}  // namespace tagflow::envs
