// FlatMlp: an MLP whose parameters are one contiguous float32 tensor (MlpSpec layout); each
// layer's weight and bias are views into it, so gradients land in one flat gradient tensor and
// weights move in and out with one memcpy.
//
// Internal to rl/learning (it exposes LibTorch types): the public headers hand out plain floats.
// Not thread-safe; forward() may run concurrently only while nothing writes the parameters.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "rl/learning/mlp_spec.hpp"

namespace tagflow::learning {

class FlatMlp {
 public:
  /// Parameters from init_mlp_parameters(spec, seed); `trainable` turns on autograd for them.
  FlatMlp(const MlpSpec& spec, std::uint64_t seed, bool trainable);

  /// [batch, input] float32 → [batch, output] scores (ReLU between layers, none after the last).
  [[nodiscard]] at::Tensor forward(const at::Tensor& input) const;

  /// The flat parameter tensor (1-D, contiguous).
  [[nodiscard]] const at::Tensor& parameters() const { return parameters_; }
  [[nodiscard]] at::Tensor& parameters() { return parameters_; }
  [[nodiscard]] const MlpSpec& spec() const { return spec_; }

  /// Copies `count` floats into the parameters (no autograd); throws std::invalid_argument on a
  /// size mismatch.
  void load(const float* values, std::size_t count);
  /// The parameters as plain floats.
  [[nodiscard]] std::vector<float> values() const;

 private:
  MlpSpec spec_;
  std::vector<LayerSlice> slices_;
  at::Tensor parameters_;
};

/// Wraps rows of floats as a [rows, columns] tensor without copying. The caller keeps `data`
/// alive and unchanged while the tensor is used.
[[nodiscard]] at::Tensor borrow_matrix(const float* data, std::int64_t rows, std::int64_t columns);

}  // namespace tagflow::learning
