// Evaluator: the greedy policy's mean return over a fixed set of evaluation episodes — how the
// cluster decides a `stop: target_return` deterministically (same weights ⇒ same answer).
//
// Episode i is env `env` reset with seed + i and played greedily (argmax of MlpForward over the
// given flat weights, MlpSpec layout) to its end (terminated or time limit) — or for at most
// `max_steps` steps when max_steps > 0 (an unfinished episode counts the rewards it collected:
// a cap for envs whose episodes run for tens of thousands of steps, such as PixelPong-v0). Envs
// with uint8 (pixel) observations are fed to the network scaled to [0, 1], as everywhere else
// (network_input.hpp). Torch-free.
// Errors: std::invalid_argument for weights of the wrong length or an unsupported env.
// Not thread-safe (it owns its envs).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nodes/sampler/mlp_forward.hpp"
#include "rl/envs/vector_env.hpp"

namespace tagflow::nodes {

class Evaluator {
 public:
  Evaluator(const std::string& env, const std::vector<int>& hidden, int episodes,
            std::uint64_t seed, std::int64_t max_steps = 0);

  [[nodiscard]] double mean_return(const std::vector<float>& weights);
  [[nodiscard]] int episodes() const { return episodes_; }

 private:
  int episodes_;
  std::int64_t max_steps_;  // (the seed goes to the vector env, which keeps it)
  std::unique_ptr<envs::VectorEnv> env_;
  std::unique_ptr<MlpForward> policy_;
  std::vector<float> input_;  // pixel observations as network input
};

}  // namespace tagflow::nodes
