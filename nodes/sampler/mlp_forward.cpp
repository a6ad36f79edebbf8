#include "nodes/sampler/mlp_forward.hpp"

#include <algorithm>
#include <stdexcept>

namespace tagflow::nodes {

MlpForward::MlpForward(std::vector<int> layer_sizes) : sizes_(std::move(layer_sizes)) {
  if (sizes_.size() < 2) throw std::invalid_argument("MlpForward: needs input and output sizes");
  std::size_t count = 0;
  for (std::size_t l = 0; l < sizes_.size(); ++l) {
    if (sizes_[l] <= 0) throw std::invalid_argument("MlpForward: layer sizes must be positive");
    widest_ = std::max(widest_, sizes_[l]);
    if (l > 0) {
      count += static_cast<std::size_t>(sizes_[l - 1]) * static_cast<std::size_t>(sizes_[l]) +
               static_cast<std::size_t>(sizes_[l]);
    }
  }
  parameters_.assign(count, 0.0F);
}

void MlpForward::load(const std::vector<float>& parameters) {
  if (parameters.size() != parameters_.size()) {
    throw std::invalid_argument("MlpForward: expected " + std::to_string(parameters_.size()) +
                                " weights, got " + std::to_string(parameters.size()));
  }
  parameters_ = parameters;
}

void MlpForward::forward(const float* input, std::int64_t batch, float* out) const {
  std::vector<float> a(static_cast<std::size_t>(widest_));
  std::vector<float> b(static_cast<std::size_t>(widest_));
  const std::size_t layers = sizes_.size() - 1;
  for (std::int64_t row = 0; row < batch; ++row) {
    std::copy_n(input + row * sizes_[0], sizes_[0], a.begin());
    const float* w = parameters_.data();
    for (std::size_t l = 0; l < layers; ++l) {
      const int in = sizes_[l];
      const int out_size = sizes_[l + 1];
      const float* bias = w + static_cast<std::ptrdiff_t>(in) * out_size;
      const bool last = l + 1 == layers;
      float* dst = last ? out + row * out_size : b.data();
      for (int o = 0; o < out_size; ++o) {
        const float* wo = w + static_cast<std::ptrdiff_t>(o) * in;
        float sum = 0.0F;
        for (int i = 0; i < in; ++i) sum += wo[i] * a[static_cast<std::size_t>(i)];
        sum += bias[o];
        dst[o] = last ? sum : std::max(sum, 0.0F);
      }
      w = bias + out_size;
      if (!last) std::swap(a, b);
    }
  }
}

void MlpForward::greedy(const float* input, std::int64_t batch, std::int64_t* actions) const {
  const int n = output_size();
  std::vector<float> scores(static_cast<std::size_t>(batch) * static_cast<std::size_t>(n));
  forward(input, batch, scores.data());
  for (std::int64_t row = 0; row < batch; ++row) {
    const float* s = scores.data() + row * n;
    actions[row] = std::max_element(s, s + n) - s;
  }
}

}  // namespace tagflow::nodes
