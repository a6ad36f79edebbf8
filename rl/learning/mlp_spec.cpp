#include "rl/learning/mlp_spec.hpp"

#include <cmath>
#include <random>
#include <stdexcept>

namespace tagflow::learning {

std::vector<int> MlpSpec::layer_sizes() const {
  std::vector<int> sizes;
  sizes.reserve(hidden_sizes.size() + 2);
  sizes.push_back(input_size);
  sizes.insert(sizes.end(), hidden_sizes.begin(), hidden_sizes.end());
  sizes.push_back(output_size);
  return sizes;
}

std::int64_t MlpSpec::parameter_count() const {
  const std::vector<int> sizes = layer_sizes();
  std::int64_t count = 0;
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    count += static_cast<std::int64_t>(sizes[i]) * sizes[i + 1] + sizes[i + 1];
  }
  return count;
}

void MlpSpec::validate() const {
  for (int size : layer_sizes()) {
    if (size <= 0) throw std::invalid_argument("MLP " + to_string() + ": every size must be > 0");
  }
}

std::string MlpSpec::to_string() const {
  std::string text;
  for (int size : layer_sizes()) {
    if (!text.empty()) text += "-";
    text += std::to_string(size);
  }
  return text;
}

std::vector<LayerSlice> layer_slices(const MlpSpec& spec) {
  const std::vector<int> sizes = spec.layer_sizes();
  std::vector<LayerSlice> slices;
  std::int64_t offset = 0;
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    LayerSlice slice;
    slice.in = sizes[i];
    slice.out = sizes[i + 1];
    slice.weight_offset = offset;
    offset += static_cast<std::int64_t>(slice.in) * slice.out;
    slice.bias_offset = offset;
    offset += slice.out;
    slices.push_back(slice);
  }
  return slices;
}

std::vector<float> init_mlp_parameters(const MlpSpec& spec, std::uint64_t seed) {
  spec.validate();
  std::vector<float> values(static_cast<std::size_t>(spec.parameter_count()));
  std::mt19937_64 engine(seed);
  for (const LayerSlice& slice : layer_slices(spec)) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(slice.in));
    std::uniform_real_distribution<double> uniform(-bound, bound);
    const std::int64_t end = slice.bias_offset + slice.out;
    for (std::int64_t i = slice.weight_offset; i < end; ++i) {
      values[static_cast<std::size_t>(i)] = static_cast<float>(uniform(engine));
    }
  }
  return values;
}

}  // namespace tagflow::learning
