// MlpForward: the forward pass of the learner's Q-network in plain C++, so a sampler can act
// with a local policy copy without linking LibTorch.
//
// The parameters are the learner's flat weights in MlpSpec layout (rl/learning/mlp_spec.hpp):
// for each layer, weight [out × in] row-major, then bias [out]; ReLU between layers, none after
// the last. Sums run in float in input order, so results equal LibTorch's up to float rounding
// (tested against DqnLearner::q_values).
// Value type; forward() is const and may run concurrently with other const calls.
// Errors: std::invalid_argument for non-positive layer sizes or weights of the wrong length.
#pragma once

#include <cstdint>
#include <vector>

namespace tagflow::nodes {

class MlpForward {
 public:
  /// layer_sizes = input, hidden..., output (at least two entries). Weights start at zero.
  explicit MlpForward(std::vector<int> layer_sizes);

  /// Number of floats load() expects.
  [[nodiscard]] std::size_t parameter_count() const { return parameters_.size(); }
  void load(const std::vector<float>& parameters);
  /// The loaded parameters (zeros before the first load).
  [[nodiscard]] const std::vector<float>& parameters() const { return parameters_; }

  /// batch rows of input_size floats → batch rows of output_size scores, into `out`.
  void forward(const float* input, std::int64_t batch, float* out) const;
  /// argmax of each row's scores (ties: lowest index) into `actions`.
  void greedy(const float* input, std::int64_t batch, std::int64_t* actions) const;

  [[nodiscard]] int input_size() const { return sizes_.front(); }
  [[nodiscard]] int output_size() const { return sizes_.back(); }

 private:
  std::vector<int> sizes_;
  std::vector<float> parameters_;
  int widest_ = 0;
};

}  // namespace tagflow::nodes
