#include "rl/learning/flat_mlp.hpp"

#include <ATen/ATen.h>

#include <cstring>
#include <stdexcept>

namespace tagflow::learning {

FlatMlp::FlatMlp(const MlpSpec& spec, std::uint64_t seed, bool trainable)
    : spec_(spec), slices_(layer_slices(spec)) {
  const std::vector<float> initial = init_mlp_parameters(spec, seed);
  parameters_ = at::empty({static_cast<std::int64_t>(initial.size())}, at::kFloat);
  std::memcpy(parameters_.data_ptr<float>(), initial.data(), initial.size() * sizeof(float));
  if (trainable) parameters_.set_requires_grad(true);
}

at::Tensor FlatMlp::forward(const at::Tensor& input) const {
  at::Tensor x = input;
  for (std::size_t i = 0; i < slices_.size(); ++i) {
    const LayerSlice& s = slices_[i];
    const at::Tensor weight =
        parameters_.narrow(0, s.weight_offset, static_cast<std::int64_t>(s.in) * s.out)
            .view({s.out, s.in});
    const at::Tensor bias = parameters_.narrow(0, s.bias_offset, s.out);
    x = at::addmm(bias, x, weight.t());
    if (i + 1 < slices_.size()) x = at::relu(x);
  }
  return x;
}

void FlatMlp::load(const float* values, std::size_t count) {
  if (count != static_cast<std::size_t>(parameters_.numel())) {
    throw std::invalid_argument("MLP " + spec_.to_string() + " has " +
                                std::to_string(parameters_.numel()) + " parameters, got " +
                                std::to_string(count));
  }
  const at::NoGradGuard no_grad;
  std::memcpy(parameters_.data_ptr<float>(), values, count * sizeof(float));
}

std::vector<float> FlatMlp::values() const {
  std::vector<float> out(static_cast<std::size_t>(parameters_.numel()));
  std::memcpy(out.data(), parameters_.data_ptr<float>(), out.size() * sizeof(float));
  return out;
}

at::Tensor borrow_matrix(const float* data, std::int64_t rows, std::int64_t columns) {
  // from_blob wants a mutable pointer; the tensors made here are only read.
  return at::from_blob(const_cast<float*>(data), {rows, columns}, at::kFloat);
}

}  // namespace tagflow::learning
