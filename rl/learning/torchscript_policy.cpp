#include "rl/learning/torchscript_policy.hpp"

#include <torch/script.h>

#include <cstring>
#include <sstream>

#include "common/atomic_file.hpp"
#include "rl/learning/learner_checkpoint.hpp"

namespace tagflow::learning {
namespace {

/// TorchScript source of the forward pass for `layers` Linear layers with ReLU between them.
std::string forward_source(std::size_t layers) {
  std::ostringstream source;
  source << "def forward(self, x):\n";
  for (std::size_t i = 0; i < layers; ++i) {
    source << "    x = torch.addmm(self.b" << i << ", x, self.w" << i << ".t())\n";
    if (i + 1 < layers) source << "    x = torch.relu(x)\n";
  }
  source << "    return x\n";
  return source.str();
}

}  // namespace

void export_torchscript(const MlpSpec& spec, const std::vector<float>& parameters,
                        const std::string& path) {
  spec.validate();
  if (static_cast<std::int64_t>(parameters.size()) != spec.parameter_count()) {
    throw std::invalid_argument("export_torchscript: MLP " + spec.to_string() + " needs " +
                                std::to_string(spec.parameter_count()) + " parameters, got " +
                                std::to_string(parameters.size()));
  }
  try {
    const at::Tensor flat = at::empty({static_cast<std::int64_t>(parameters.size())}, at::kFloat);
    std::memcpy(flat.data_ptr<float>(), parameters.data(), parameters.size() * sizeof(float));
    torch::jit::Module module("TagflowMlpPolicy");
    const std::vector<LayerSlice> slices = layer_slices(spec);
    for (std::size_t i = 0; i < slices.size(); ++i) {
      const LayerSlice& s = slices[i];
      const at::Tensor weight =
          flat.narrow(0, s.weight_offset, static_cast<std::int64_t>(s.in) * s.out)
              .view({s.out, s.in})
              .clone();
      module.register_parameter("w" + std::to_string(i), weight, /*is_buffer=*/false);
      module.register_parameter("b" + std::to_string(i),
                                flat.narrow(0, s.bias_offset, s.out).clone(),
                                /*is_buffer=*/false);
    }
    module.define(forward_source(slices.size()));
    std::ostringstream bytes;
    module.save(bytes);
    write_file_atomically(path, bytes.str());
  } catch (const c10::Error& e) {
    throw TorchScriptError("cannot export TorchScript policy to " + path + ": " +
                           e.what_without_backtrace());
  }
}

struct TorchScriptPolicy::Impl {
  torch::jit::Module module;
};

TorchScriptPolicy::TorchScriptPolicy(const std::string& path) : impl_(std::make_unique<Impl>()) {
  try {
    impl_->module = torch::jit::load(path);
    impl_->module.eval();
  } catch (const c10::Error& e) {
    throw TorchScriptError("cannot load TorchScript policy " + path + ": " +
                           e.what_without_backtrace());
  }
}

TorchScriptPolicy::~TorchScriptPolicy() = default;
TorchScriptPolicy::TorchScriptPolicy(TorchScriptPolicy&&) noexcept = default;
TorchScriptPolicy& TorchScriptPolicy::operator=(TorchScriptPolicy&&) noexcept = default;

std::vector<float> TorchScriptPolicy::scores(const float* observations, std::int64_t batch,
                                             std::int64_t observation_size) {
  const at::NoGradGuard no_grad;
  const at::Tensor input =
      at::from_blob(const_cast<float*>(observations), {batch, observation_size}, at::kFloat);
  at::Tensor output;
  try {
    output = impl_->module.forward({input}).toTensor().to(at::kFloat).contiguous();
  } catch (const c10::Error& e) {
    throw TorchScriptError(std::string("TorchScript policy forward failed: ") +
                           e.what_without_backtrace());
  }
  if (output.dim() != 2 || output.size(0) != batch) {
    throw TorchScriptError("TorchScript policy returned a tensor of the wrong shape");
  }
  std::vector<float> out(static_cast<std::size_t>(output.numel()));
  std::memcpy(out.data(), output.data_ptr<float>(), out.size() * sizeof(float));
  return out;
}

std::vector<float> TorchScriptPolicy::mlp_parameters(const MlpSpec& spec) const {
  const std::vector<LayerSlice> slices = layer_slices(spec);
  std::vector<at::Tensor> tensors;
  for (const auto& parameter : impl_->module.parameters(/*recurse=*/true)) {
    tensors.push_back(parameter);
  }
  if (tensors.size() != 2 * slices.size()) return {};
  std::vector<float> flat(static_cast<std::size_t>(spec.parameter_count()));
  for (std::size_t i = 0; i < slices.size(); ++i) {
    const LayerSlice& s = slices[i];
    const at::Tensor weight = tensors[2 * i].detach().to(at::kFloat).contiguous();
    const at::Tensor bias = tensors[2 * i + 1].detach().to(at::kFloat).contiguous();
    if (weight.dim() != 2 || weight.size(0) != s.out || weight.size(1) != s.in || bias.dim() != 1 ||
        bias.size(0) != s.out) {
      return {};
    }
    std::memcpy(flat.data() + s.weight_offset, weight.data_ptr<float>(),
                static_cast<std::size_t>(s.out) * static_cast<std::size_t>(s.in) * sizeof(float));
    std::memcpy(flat.data() + s.bias_offset, bias.data_ptr<float>(),
                static_cast<std::size_t>(s.out) * sizeof(float));
  }
  return flat;
}

std::vector<std::int64_t> TorchScriptPolicy::act(const float* observations, std::int64_t batch,
                                                 std::int64_t observation_size) {
  const std::vector<float> s = scores(observations, batch, observation_size);
  const auto actions = static_cast<std::size_t>(s.size() / static_cast<std::size_t>(batch));
  std::vector<std::int64_t> out(static_cast<std::size_t>(batch));
  for (std::size_t row = 0; row < out.size(); ++row) {
    std::size_t best = 0;
    for (std::size_t a = 1; a < actions; ++a) {
      if (s[row * actions + a] > s[row * actions + best]) best = a;
    }
    out[row] = static_cast<std::int64_t>(best);
  }
  return out;
}

}  // namespace tagflow::learning
