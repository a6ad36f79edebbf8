#include "rl/learning/policy_network.hpp"

#include <ATen/core/Tensor.h>
#include <c10/core/InferenceMode.h>

#include <cstring>

#include "rl/learning/flat_mlp.hpp"

namespace tagflow::learning {

struct PolicyNetwork::Impl {
  Impl(const MlpSpec& spec, std::uint64_t seed) : mlp(spec, seed, /*trainable=*/false) {}
  FlatMlp mlp;
};

PolicyNetwork::PolicyNetwork(const MlpSpec& spec, std::uint64_t seed)
    : impl_(std::make_unique<Impl>(spec, seed)) {}
PolicyNetwork::~PolicyNetwork() = default;
PolicyNetwork::PolicyNetwork(PolicyNetwork&&) noexcept = default;
PolicyNetwork& PolicyNetwork::operator=(PolicyNetwork&&) noexcept = default;

void PolicyNetwork::load_weights(const WeightsBuffer& weights) {
  impl_->mlp.load(weights.values.data(), weights.values.size());
  version_ = weights.version;
}

const MlpSpec& PolicyNetwork::spec() const { return impl_->mlp.spec(); }

void PolicyNetwork::scores(const float* observations, std::int64_t batch, float* out) const {
  const c10::InferenceMode inference;
  const at::Tensor q =
      impl_->mlp.forward(borrow_matrix(observations, batch, impl_->mlp.spec().input_size))
          .contiguous();
  std::memcpy(out, q.data_ptr<float>(), static_cast<std::size_t>(q.numel()) * sizeof(float));
}

void PolicyNetwork::act(const float* observations, std::int64_t batch,
                        std::int64_t* actions) const {
  const auto n = static_cast<std::size_t>(impl_->mlp.spec().output_size);
  std::vector<float> q(static_cast<std::size_t>(batch) * n);
  scores(observations, batch, q.data());
  for (std::size_t row = 0; row < static_cast<std::size_t>(batch); ++row) {
    std::size_t best = 0;
    for (std::size_t a = 1; a < n; ++a) {
      if (q[row * n + a] > q[row * n + best]) best = a;
    }
    actions[row] = static_cast<std::int64_t>(best);
  }
}

std::int64_t PolicyNetwork::act_one(const float* observation) const {
  std::int64_t action = 0;
  act(observation, 1, &action);
  return action;
}

}  // namespace tagflow::learning
