// PixelPong: a small Pong rendered into Atari-sized 210×160×3 frames.
#pragma once

#include <array>
#include <cstdint>

#include "rl/envs/env.hpp"

namespace tagflow::envs {

/// The whole game state, exposed for tests and tools. Positions are in 1/16 pixel (fixed point)
/// so that the game is exactly reproducible; paddle and ball coordinates are their top-left
/// corners in frame pixels × 16.
struct PongState {
  std::int32_t ball_x = 0;
  std::int32_t ball_y = 0;
  std::int32_t ball_vx = 0;  ///< 1/16 px per frame; negative = towards the computer
  std::int32_t ball_vy = 0;
  std::int32_t player_y = 0;  ///< right paddle (the agent's)
  std::int32_t cpu_y = 0;     ///< left paddle
  std::int32_t player_score = 0;
  std::int32_t cpu_score = 0;
  std::int32_t serve_delay = 0;  ///< frames until the ball is served; the ball is hidden meanwhile
  bool serve_to_player = false;
};

/// A stand-in for Atari Pong where no emulator is available (tagflow ships no ALE): the agent's
/// green paddle on the right against a computer paddle on the left that follows the ball at a
/// limited speed. It is not Atari Pong and its frames are not ALE's, but it has the same shape
/// and costs: every step renders a full 210×160×3 uint8 RGB frame (row-major, HWC), walls and
/// scores included, and episodes run to 21 points.
///
/// Actions Discrete(3): 0 NOOP, 1 UP, 2 DOWN. Reward +1 when the computer misses, −1 when the
/// agent misses. Terminated when either side reaches 21; truncated after 108,000 frames (Atari's
/// 30-minute cap). One env step = one frame; AtariPreprocessing adds frame skip, grey 84×84,
/// frame stacking and no-op starts. Serves go up or down at a random angle from the env's
/// generator. See Env for errors and threads.
class PixelPong final : public Env {
 public:
  static constexpr int kHeight = 210;
  static constexpr int kWidth = 160;
  static constexpr int kChannels = 3;
  static constexpr int kFieldTop = 34;      ///< first row inside the walls
  static constexpr int kFieldBottom = 194;  ///< first row of the bottom wall
  static constexpr int kPaddleHeight = 16;
  static constexpr int kPaddleWidth = 4;
  static constexpr int kCpuX = 16;
  static constexpr int kPlayerX = 140;
  static constexpr int kBallWidth = 2;
  static constexpr int kBallHeight = 4;
  static constexpr int kWinningScore = 21;
  static constexpr int kServeDelay = 30;
  static constexpr int kMaxEpisodeSteps = 108000;
  static constexpr int kSub = 16;  ///< fixed-point subdivisions per pixel

  static constexpr std::array<std::uint8_t, 3> kBackground = {144, 72, 17};
  static constexpr std::array<std::uint8_t, 3> kWall = {236, 236, 236};
  static constexpr std::array<std::uint8_t, 3> kBall = {236, 236, 236};
  static constexpr std::array<std::uint8_t, 3> kPlayer = {92, 186, 92};
  static constexpr std::array<std::uint8_t, 3> kCpu = {213, 130, 74};

  [[nodiscard]] const EnvSpec& spec() const noexcept override;

  [[nodiscard]] const PongState& game() const noexcept { return game_; }
  /// Replaces the game state (tests, tools); the next step continues from it.
  void set_game(const PongState& game) noexcept { game_ = game; }
  /// Draws the current state into a kHeight × kWidth × 3 frame.
  void render(std::uint8_t* frame) const noexcept;

  // Implementation hooks, public for non-virtual batch stepping (env_batch.hpp).
  void reset_impl(void* observation) override;
  StepResult step_impl(const Action& action, void* observation) override;

 private:
  void serve();
  void move_paddles(std::int64_t action) noexcept;
  /// Moves the ball one frame; returns +1 / −1 when a point is scored, else 0.
  int move_ball() noexcept;
  void bounce_off_paddle(std::int32_t paddle_y, bool is_player) noexcept;

  PongState game_;
};

}  // namespace tagflow::envs
