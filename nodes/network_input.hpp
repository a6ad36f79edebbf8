// Network input: observations as the float32 rows a Q-network consumes.
//
// Pixel observations (ObservationType::kUInt8) travel and sit in replay as bytes; the code that
// feeds a network — the learner's batch assembly, the inference server, the sampler's local
// policy copy, the evaluator — converts them here, and only there, to floats scaled to [0, 1]
// (value / 255, as Atari DQN and Gymnasium's `scale_obs` do). Float32 observations pass through
// unchanged. Every consumer uses these functions, so learner, inference and samplers see
// bit-identical inputs for the same bytes.
//
// Pure functions on caller-owned buffers; thread-safe. Errors: std::invalid_argument when an
// array of the given type does not hold `elements` values (programmer error).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nodes/messages.hpp"
#include "rl/envs/space.hpp"
#include "rl/envs/vector_env.hpp"

namespace tagflow::nodes {

/// What one pixel byte is multiplied by on its way into a network.
inline constexpr float kPixelScale = 1.0F / 255.0F;

/// The message type of observations of an env space dtype (float32 or uint8; std::invalid_argument
/// for any other).
[[nodiscard]] ObservationType observation_type_of(envs::DType dtype);

/// `count` bytes → `count` floats (byte × kPixelScale) into `out`.
void pixels_to_network_input(const std::uint8_t* pixels, std::size_t count, float* out);

/// The network input for observations held as `type`: `floats` itself for kFloat32 (no copy),
/// or `pixels` converted into `scratch` for kUInt8. The result points at `elements` floats and
/// stays valid until `scratch` or `floats` changes.
[[nodiscard]] const float* network_input(ObservationType type, const std::vector<float>& floats,
                                         const std::vector<std::uint8_t>& pixels,
                                         std::size_t elements, std::vector<float>& scratch);

/// The current observations of `env` as network input: its float32 observations themselves, or
/// its uint8 observations converted into `scratch` (std::invalid_argument for other dtypes).
[[nodiscard]] const float* network_input(const envs::VectorEnv& env, std::vector<float>& scratch);

/// As network_input(), into `out` (resized to `elements`), for consumers that keep the floats.
void assign_network_input(ObservationType type, const std::vector<float>& floats,
                          const std::vector<std::uint8_t>& pixels, std::size_t elements,
                          std::vector<float>& out);

}  // namespace tagflow::nodes
