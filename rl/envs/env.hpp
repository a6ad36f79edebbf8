// The single-agent environment interface: Gymnasium's reset/step contract in C++.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/state_stream.hpp"
#include "rl/envs/space.hpp"
#include "rl/envs/span.hpp"

namespace tagflow::envs {

/// Static facts about an environment, as Gymnasium's EnvSpec plus the spaces.
struct EnvSpec {
  std::string id;             ///< e.g. "CartPole-v1"
  Space observation_space;    ///< what reset/step write
  Space action_space;         ///< what step accepts
  int max_episode_steps = 0;  ///< TimeLimit: truncated once this many steps ran; 0 = none
  std::optional<double> reward_threshold;  ///< the "solved" return, when Gymnasium defines one
};

/// One action. Discrete spaces read `index`; Box spaces read `values` (action_space.size()
/// floats, not owned: they must stay valid for the duration of the step call).
struct Action {
  std::int64_t index = 0;
  Span<const float> values;

  static Action discrete(std::int64_t i) {
    Action a;
    a.index = i;
    return a;
  }
  static Action box(Span<const float> v) {
    Action a;
    a.values = v;
    return a;
  }
};

/// What one step returns besides the observation (written into the caller's buffer).
struct StepResult {
  float reward = 0.0F;
  bool terminated = false;  ///< the MDP reached a terminal state
  bool truncated = false;   ///< the time limit (max_episode_steps) cut the episode
};

/// A single-agent environment with Gymnasium's semantics:
///  - reset(seed, obs) starts an episode; with a seed it first reseeds the env's generator
///    (std::mt19937_64; a fresh env is seeded with 0, so runs are reproducible by default).
///  - step(action, obs) advances one step and writes the next observation. `truncated` is set
///    when max_episode_steps steps have run since reset (even if `terminated` is also set), as
///    Gymnasium's TimeLimit wrapper does.
///  - Observation buffers must hold observation_space.size() elements of its dtype (float32 or
///    uint8); the matching overload is required.
///
/// Errors: std::invalid_argument for a discrete action outside the action space, a continuous
/// action of the wrong length or NaN, or an observation buffer of the wrong size or dtype (a
/// continuous action out of bounds is the env's to clamp, as Pendulum does); std::logic_error for
/// stepping before reset or after the episode ended (terminated or truncated) without a reset.
///
/// Ownership and threads: an env owns its state and generator; it is not thread-safe (use one
/// env per thread, or a VectorEnv). Envs are movable, not copyable through this interface.
class Env {
 public:
  virtual ~Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  [[nodiscard]] virtual const EnvSpec& spec() const noexcept = 0;

  void reset(std::optional<std::uint64_t> seed, Span<float> observation);
  void reset(std::optional<std::uint64_t> seed, Span<std::uint8_t> observation);
  [[nodiscard]] StepResult step(const Action& action, Span<float> observation);
  [[nodiscard]] StepResult step(const Action& action, Span<std::uint8_t> observation);

  /// Steps taken since the last reset.
  [[nodiscard]] int elapsed_steps() const noexcept { return elapsed_steps_; }

  /// Gymnasium's `env.unwrapped.state` (float64), for envs that expose one (the classic control
  /// envs); empty otherwise.
  [[nodiscard]] virtual std::vector<double> state() const { return {}; }
  /// Overwrites the internal state (same layout as state()) and allows stepping from it; the step
  /// counter is left as it is. Throws std::invalid_argument on a wrong length and
  /// std::logic_error when the env has no settable state.
  void set_state(const std::vector<double>& state);
  /// Writes the observation that corresponds to the current internal state.
  void observe(Span<float> observation) const;
  /// Checkpoints (docs/recovery.md): the whole env — state(), generator, step counter — so that
  /// a loaded env steps exactly as the saved one would have. std::logic_error for an env without
  /// a settable state (save refuses it before anything is written); load throws StateError for
  /// bytes that do not fit.
  void save(StateWriter& out) const;
  void load(StateReader& in);

 protected:
  Env() = default;
  Env(Env&&) = default;
  Env& operator=(Env&&) = default;

  /// Implementations. `observation` points at observation_space.size() elements of its dtype.
  /// step_impl must not handle the time limit: the base class does.
  virtual void reset_impl(void* observation) = 0;
  virtual StepResult step_impl(const Action& action, void* observation) = 0;
  virtual void set_state_impl(const std::vector<double>& /*state*/) {
    throw std::logic_error(spec().id + " has no settable state");
  }
  virtual void observe_impl(void* /*observation*/) const {
    throw std::logic_error(spec().id + " cannot observe its state");
  }

  /// The env's generator; reseeded by reset(seed).
  std::mt19937_64& rng() noexcept { return rng_; }

 private:
  void check_observation(DType dtype, std::size_t size) const;
  void check_action(const Action& action) const;
  void do_reset(std::optional<std::uint64_t> seed, void* observation);
  StepResult do_step(const Action& action, void* observation);

  std::mt19937_64 rng_{0};
  int elapsed_steps_ = 0;
  bool needs_reset_ = true;
};

}  // namespace tagflow::envs
