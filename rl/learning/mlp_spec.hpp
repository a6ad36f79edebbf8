// MlpSpec: the shape of a fully connected network (input → hidden ReLU layers → output) and the
// layout of its parameters in one contiguous float buffer.
//
// Layout (the same order as PyTorch's named_parameters() of nn.Sequential(Linear, ReLU, ...,
// Linear)): for each layer in order, its weight [out × in] row-major, then its bias [out]. Every
// weight buffer, checkpoint, digest and TorchScript export in rl/learning uses this layout.
// A value type: copy freely; no torch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tagflow::learning {

struct MlpSpec {
  int input_size = 0;
  std::vector<int> hidden_sizes;
  int output_size = 0;

  /// Sizes of every layer boundary: input, hidden..., output.
  [[nodiscard]] std::vector<int> layer_sizes() const;
  /// Number of floats in the flat parameter buffer.
  [[nodiscard]] std::int64_t parameter_count() const;
  /// Throws std::invalid_argument when a size is not positive.
  void validate() const;
  /// "4-64-64-2".
  [[nodiscard]] std::string to_string() const;
};

/// Offsets of one layer's weight and bias inside the flat buffer.
struct LayerSlice {
  int in = 0;
  int out = 0;
  std::int64_t weight_offset = 0;
  std::int64_t bias_offset = 0;
};

/// The slices of every layer of `spec`, in order.
[[nodiscard]] std::vector<LayerSlice> layer_slices(const MlpSpec& spec);

/// Initial parameters drawn from `seed` alone (no global generator): weights and biases
/// U(-1/sqrt(in), 1/sqrt(in)), PyTorch's nn.Linear default, from a std::mt19937_64.
[[nodiscard]] std::vector<float> init_mlp_parameters(const MlpSpec& spec, std::uint64_t seed);

}  // namespace tagflow::learning
