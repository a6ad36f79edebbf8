#include "rl/learning/stacked_mlp.hpp"

#include <torch/torch.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace tagflow::learning {

struct StackedMlp::Impl {
  std::vector<at::Tensor> weights;  // per layer: [slots, in, out] (transposed for bmm)
  std::vector<at::Tensor> biases;   // per layer: [slots, 1, out]

  at::Tensor forward(const float* inputs, std::size_t slots, std::int64_t rows, int in) const {
    const at::NoGradGuard no_grad;
    at::Tensor x = at::from_blob(const_cast<float*>(inputs),
                                 {static_cast<std::int64_t>(slots), rows, in}, at::kFloat);
    for (std::size_t l = 0; l < weights.size(); ++l) {
      x = at::baddbmm(biases[l], x, weights[l]);
      if (l + 1 < weights.size()) x = at::relu(x);
    }
    return x.contiguous();
  }
};

StackedMlp::StackedMlp(const MlpSpec& spec, std::size_t slots, std::int64_t rows_per_slot,
                       std::uint64_t seed)
    : spec_(spec), slots_(slots), rows_(rows_per_slot), impl_(std::make_unique<Impl>()) {
  spec_.validate();
  if (slots == 0 || rows_per_slot < 1) {
    throw std::invalid_argument("StackedMlp: needs at least one slot and one row per slot");
  }
  for (const LayerSlice& s : layer_slices(spec_)) {
    impl_->weights.push_back(at::zeros({static_cast<std::int64_t>(slots), s.in, s.out}));
    impl_->biases.push_back(at::zeros({static_cast<std::int64_t>(slots), 1, s.out}));
  }
  const std::vector<float> initial = init_mlp_parameters(spec_, seed);
  for (std::size_t slot = 0; slot < slots; ++slot) load(slot, initial);
}

StackedMlp::~StackedMlp() = default;
StackedMlp::StackedMlp(StackedMlp&&) noexcept = default;
StackedMlp& StackedMlp::operator=(StackedMlp&&) noexcept = default;

void StackedMlp::load(std::size_t slot, const std::vector<float>& parameters) {
  if (slot >= slots_) {
    throw std::invalid_argument("StackedMlp: no slot " + std::to_string(slot) + " of " +
                                std::to_string(slots_));
  }
  if (static_cast<std::int64_t>(parameters.size()) != spec_.parameter_count()) {
    throw std::invalid_argument("StackedMlp: MLP " + spec_.to_string() + " needs " +
                                std::to_string(spec_.parameter_count()) + " parameters, got " +
                                std::to_string(parameters.size()));
  }
  const at::NoGradGuard no_grad;
  const std::vector<LayerSlice> slices = layer_slices(spec_);
  const auto s = static_cast<std::int64_t>(slot);
  for (std::size_t l = 0; l < slices.size(); ++l) {
    const LayerSlice& layer = slices[l];
    const at::Tensor weight =
        at::from_blob(const_cast<float*>(parameters.data() + layer.weight_offset),
                      {layer.out, layer.in}, at::kFloat);
    impl_->weights[l][s].copy_(weight.t());
    const at::Tensor bias = at::from_blob(const_cast<float*>(parameters.data() + layer.bias_offset),
                                          {1, layer.out}, at::kFloat);
    impl_->biases[l][s].copy_(bias);
  }
}

std::vector<float> StackedMlp::scores(const float* inputs) const {
  const at::Tensor out = impl_->forward(inputs, slots_, rows_, spec_.input_size);
  std::vector<float> result(static_cast<std::size_t>(out.numel()));
  std::memcpy(result.data(), out.data_ptr<float>(), result.size() * sizeof(float));
  return result;
}

void StackedMlp::act(const float* inputs, std::int64_t* actions) const {
  act(inputs, rows_, actions);
}

void StackedMlp::act(const float* inputs, std::int64_t rows, std::int64_t* actions) const {
  if (rows < 1) throw std::invalid_argument("StackedMlp: act needs at least one row per slot");
  const at::Tensor out = impl_->forward(inputs, slots_, rows, spec_.input_size);
  const float* s = out.data_ptr<float>();
  const auto n = static_cast<std::int64_t>(slots_) * rows;
  const std::int64_t width = spec_.output_size;
  for (std::int64_t row = 0; row < n; ++row) {
    std::int64_t best = 0;
    for (std::int64_t a = 1; a < width; ++a) {
      if (s[row * width + a] > s[row * width + best]) best = a;
    }
    actions[row] = best;
  }
}

}  // namespace tagflow::learning
