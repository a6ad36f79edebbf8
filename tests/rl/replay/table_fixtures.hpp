// Transitions whose every byte derives from one value, so tests can check a sampled row is whole.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "rl/replay/sampled_batch.hpp"
#include "rl/replay/table.hpp"

namespace tagflow::replay::testing {

/// Observation of `words` uint32 words, all equal to `value`.
inline std::vector<std::uint32_t> observation_of(std::uint32_t value, std::size_t words) {
  return std::vector<std::uint32_t>(words, value);
}

inline TransitionSpec spec_of(std::size_t words) {
  TransitionSpec spec;
  spec.observation = FieldSpec{DType::kUInt8, {static_cast<std::int64_t>(words * 4)}};
  spec.action = FieldSpec{DType::kInt64, {}};
  return spec;
}

/// Holds the bytes of the transition with value v: observation v, next observation v + 1,
/// action v, reward v mod 1000, done when v is a multiple of 10.
struct ValueTransition {
  ValueTransition(std::uint32_t v, std::size_t words)
      : observation(observation_of(v, words)),
        next_observation(observation_of(v + 1, words)),
        action{static_cast<std::int64_t>(v)} {
    transition.observation = bytes_of(observation);
    transition.next_observation = bytes_of(next_observation);
    transition.action = bytes_of(action);
    transition.reward = static_cast<float>(v % 1000);
    transition.done = v % 10 == 0;
  }
  std::vector<std::uint32_t> observation;
  std::vector<std::uint32_t> next_observation;
  std::vector<std::int64_t> action;
  Transition transition;
};

/// The value of row b if every field of the row agrees with it, else -1.
inline std::int64_t row_value(const SampledBatch& batch, std::size_t b, std::size_t words) {
  const auto* observation = batch.observations_as<std::uint32_t>() + b * words;
  const auto* next = batch.next_observations_as<std::uint32_t>() + b * words;
  const std::int64_t value = batch.actions_as<std::int64_t>()[b];
  for (std::size_t w = 0; w < words; ++w) {
    if (observation[w] != static_cast<std::uint32_t>(value)) return -1;
    if (next[w] != static_cast<std::uint32_t>(value + 1)) return -1;
  }
  if (batch.rewards[b] != static_cast<float>(value % 1000)) return -1;
  if (batch.dones[b] != (value % 10 == 0 ? 1 : 0)) return -1;
  return value;
}

}  // namespace tagflow::replay::testing
