// N copies of one environment stepped together into preallocated buffers (EnvPool's sync mode).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/state_stream.hpp"
#include "rl/envs/env.hpp"

namespace tagflow::envs {

class EnvBatch;
class StepWorkers;
struct BatchRequest;

/// When a finished episode starts over.
///  - kNextStep (Gymnasium 1.x default, EnvPool): the step after a terminated/truncated step
///    ignores its action, resets that env and returns the reset observation with reward 0 and
///    both flags false.
///  - kSameStep: the step that ends an episode resets at once: observations() holds the new
///    episode's first observation and final_observations() the last one of the ended episode.
enum class AutoresetMode { kNextStep, kSameStep };

struct VectorEnvOptions {
  std::size_t num_envs = 1;
  std::uint64_t seed = 0;       ///< env i is reset with seed + i
  std::size_t num_threads = 1;  ///< 1: step on the caller's thread; more: a fixed worker pool
  AutoresetMode autoreset = AutoresetMode::kNextStep;
};

/// A batch of num_envs independent copies of one environment.
///
/// reset() resets env i with seed + i (the seed from the options on the first call, the
/// generators' continuation afterwards when `reseed` is false). step() takes one action per env
/// (int64 for Discrete action spaces, action_space.size() floats per env for Box) and writes, in
/// env order, observations, rewards and terminated/truncated flags into buffers allocated once at
/// construction; the views returned by the accessors stay valid (same addresses) for the life of
/// the VectorEnv and are overwritten by the next reset/step.
///
/// Results are identical whatever num_threads is (each env owns its generator).
///
/// Errors: std::invalid_argument for an unknown id, zero envs, a wrong action count or type, or
/// an action outside the action space (checked before any env moves); std::logic_error for step
/// before reset or an accessor of the wrong dtype. Not thread-safe: one caller at a time.
class VectorEnv {
 public:
  /// num_envs copies of the registered env `id` (see registry.hpp), stepped without virtual
  /// calls on the hot path.
  VectorEnv(const std::string& id, const VectorEnvOptions& options);
  /// num_envs envs from any factory (one virtual call per env step).
  VectorEnv(const std::function<std::unique_ptr<Env>()>& factory, const VectorEnvOptions& options);
  ~VectorEnv();
  VectorEnv(const VectorEnv&) = delete;
  VectorEnv& operator=(const VectorEnv&) = delete;

  [[nodiscard]] const EnvSpec& spec() const noexcept;
  [[nodiscard]] std::size_t num_envs() const noexcept { return options_.num_envs; }
  [[nodiscard]] const VectorEnvOptions& options() const noexcept { return options_; }

  /// Resets every env: env i with options().seed + i, or, when reseed is false and the envs were
  /// reset before, with their generators' continuation.
  void reset(bool reseed = true);
  /// One step of every env; actions[i] goes to env i. Discrete action spaces.
  void step(Span<const std::int64_t> actions);
  /// One step of every env; actions[i * d .. i * d + d) go to env i (d = action_space.size()).
  /// Box action spaces.
  void step(Span<const float> actions);

  /// num_envs * observation_space.size() elements, env-major.
  [[nodiscard]] Span<const float> observations() const;            ///< float32 spaces
  [[nodiscard]] Span<const std::uint8_t> observations_u8() const;  ///< uint8 spaces
  /// kSameStep only: for envs whose episode ended on the last step, the last observation of that
  /// episode (other rows hold stale data).
  [[nodiscard]] Span<const float> final_observations() const;
  [[nodiscard]] Span<const std::uint8_t> final_observations_u8() const;
  [[nodiscard]] Span<const float> rewards() const noexcept;
  [[nodiscard]] Span<const std::uint8_t> terminated() const noexcept;
  [[nodiscard]] Span<const std::uint8_t> truncated() const noexcept;
  /// Steps of the current episode of each env (0 right after a reset).
  [[nodiscard]] Span<const std::int32_t> episode_steps() const noexcept;

  /// Checkpoints: every env (Env::save) and the batch's buffers and flags, so that a loaded
  /// VectorEnv of the same id and options steps exactly as the saved one would have. save throws
  /// std::logic_error for envs without a settable state; load throws StateError for bytes that
  /// do not fit (another id, another num_envs).
  void save(StateWriter& out) const;
  void load(StateReader& in);

 private:
  void init();
  BatchRequest request();
  void run(bool reset_phase, const BatchRequest& request);

  VectorEnvOptions options_;
  std::unique_ptr<EnvBatch> batch_;
  std::unique_ptr<StepWorkers> workers_;
  bool was_reset_ = false;
  // Preallocated outputs (observations stored as raw bytes of the space's dtype).
  std::vector<std::uint8_t> observations_;
  std::vector<std::uint8_t> final_observations_;
  std::vector<float> rewards_;
  std::vector<std::uint8_t> terminated_;
  std::vector<std::uint8_t> truncated_;
  std::vector<std::int32_t> episode_steps_;
  std::vector<std::uint8_t> needs_reset_;
};

}  // namespace tagflow::envs
