// Gymnasium's AtariPreprocessing + FrameStackObservation over any RGB-frame env.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rl/envs/env.hpp"
#include "rl/envs/frame_ops.hpp"

namespace tagflow::envs {

/// The standard Atari wrapper options (Gymnasium's and EnvPool's defaults).
struct AtariOptions {
  int noop_max = 30;      ///< reset takes U{1..noop_max} NOOP (action 0) steps; 0 = none
  int frame_skip = 4;     ///< inner frames per step; rewards summed, last two frames max-pooled
  int screen_size = 84;   ///< output frames are screen_size × screen_size
  bool grayscale = true;  ///< one channel (BT.601 luma) instead of RGB
  int frame_stack = 4;    ///< observations stack this many processed frames, oldest first
};

/// Wraps an env whose observations are H×W×3 uint8 RGB frames (PixelPong, say):
///  - reset: resets the inner env with a seed drawn from this env's generator, then plays
///    U{1..noop_max} NOOPs (resetting again if an episode ends meanwhile);
///  - step: repeats the action frame_skip times (stopping early when the inner episode ends),
///    sums the rewards, max-pools the last two frames, converts to grey and area-resizes;
///  - the observation stacks the last frame_stack processed frames: shape (stack, size, size)
///    grey or (stack, size, size, 3) RGB, uint8; after reset every slot holds the reset frame.
/// As in Gymnasium, when the inner episode ends before the last two frames of a step, the
/// pooled frame is the one kept from the previous step. Terminated/truncated come from the
/// inner env. Errors: std::invalid_argument from the constructor for a non-RGB inner env or bad
/// options; otherwise as Env. Not thread-safe; owns the inner env.
class AtariPreprocessing final : public Env {
 public:
  AtariPreprocessing(std::unique_ptr<Env> inner, const AtariOptions& options, std::string id);

  [[nodiscard]] const EnvSpec& spec() const noexcept override { return spec_; }
  [[nodiscard]] const Env& inner() const noexcept { return *inner_; }
  [[nodiscard]] const AtariOptions& options() const noexcept { return options_; }

  // Implementation hooks, public for non-virtual batch stepping (env_batch.hpp).
  void reset_impl(void* observation) override;
  StepResult step_impl(const Action& action, void* observation) override;

 private:
  /// Copies the inner env's last raw frame into pooling buffer `slot` (grey or RGB).
  void grab(int slot);
  /// Max-pools, resizes, pushes the frame onto the stack and writes the stacked observation.
  void emit(std::uint8_t* observation);

  std::unique_ptr<Env> inner_;
  AtariOptions options_;
  EnvSpec spec_;
  AreaResizer resizer_;
  int in_height_, in_width_, channels_;
  std::vector<std::uint8_t> raw_;      // the inner env's latest frame
  std::vector<std::uint8_t> pool_[2];  // frames to max-pool, at input size (grey or RGB)
  std::vector<std::uint8_t> stack_;    // frame_stack processed frames, ring order
  std::size_t newest_ = 0;             // ring index of the newest frame
};

/// PixelPong behind AtariPreprocessing with the default options: id "PixelPong-v0",
/// observations (4, 84, 84) uint8.
class PixelPongAtari final : public Env {
 public:
  PixelPongAtari();
  explicit PixelPongAtari(const AtariOptions& options);

  [[nodiscard]] const EnvSpec& spec() const noexcept override { return wrapped_->spec(); }

  void reset_impl(void* observation) override;
  StepResult step_impl(const Action& action, void* observation) override;

 private:
  std::unique_ptr<AtariPreprocessing> wrapped_;
};

}  // namespace tagflow::envs
