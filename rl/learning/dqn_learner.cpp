#include "rl/learning/dqn_learner.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <cmath>
#include <cstring>
#include <string>

#include "rl/learning/flat_mlp.hpp"

namespace tagflow::learning {
namespace {

void check_length(const char* name, std::size_t actual, std::int64_t expected) {
  if (actual != static_cast<std::size_t>(expected)) {
    throw std::invalid_argument(std::string("TransitionBatch.") + name + " has " +
                                std::to_string(actual) + " values, expected " +
                                std::to_string(expected));
  }
}

void copy_into(at::Tensor& tensor, const std::vector<float>& values) {
  std::memcpy(tensor.data_ptr<float>(), values.data(), values.size() * sizeof(float));
}

std::vector<float> to_vector(const at::Tensor& tensor) {
  const at::Tensor flat = tensor.contiguous();
  std::vector<float> out(static_cast<std::size_t>(flat.numel()));
  std::memcpy(out.data(), flat.data_ptr<float>(), out.size() * sizeof(float));
  return out;
}

}  // namespace

void TransitionBatch::validate(int row_size) const {
  if (size <= 0) throw std::invalid_argument("TransitionBatch.size must be > 0");
  check_length("observations", observations.size(), size * row_size);
  check_length("next_observations", next_observations.size(), size * row_size);
  check_length("actions", actions.size(), size);
  check_length("rewards", rewards.size(), size);
  check_length("discounts", discounts.size(), size);
  if (!importance_weights.empty()) {
    check_length("importance_weights", importance_weights.size(), size);
  }
}

struct DqnLearner::Impl {
  explicit Impl(const DqnConfig& c)
      : config(c),
        online(c.network, c.seed, /*trainable=*/true),
        target(c.network, c.seed, /*trainable=*/false),
        adam_m(at::zeros_like(online.parameters().detach())),
        adam_v(at::zeros_like(online.parameters().detach())) {}

  /// torch.optim.Adam's update on the flat parameters (after gradient clipping).
  void adam_step(const at::Tensor& grad) {
    const at::NoGradGuard no_grad;
    ++adam_t;
    const double bias1 = 1.0 - std::pow(config.adam_beta1, static_cast<double>(adam_t));
    const double bias2 = 1.0 - std::pow(config.adam_beta2, static_cast<double>(adam_t));
    adam_m.mul_(config.adam_beta1).add_(grad, 1.0 - config.adam_beta1);
    adam_v.mul_(config.adam_beta2).addcmul_(grad, grad, 1.0 - config.adam_beta2);
    const at::Tensor denom = (adam_v.sqrt() / std::sqrt(bias2)).add_(config.adam_epsilon);
    online.parameters().addcdiv_(adam_m, denom, -config.learning_rate / bias1);
  }

  void sync_target() {
    const at::NoGradGuard no_grad;
    at::Tensor& t = target.parameters();
    const at::Tensor o = online.parameters().detach();
    if (config.target_tau > 0.0) {
      t.mul_(1.0 - config.target_tau).add_(o, config.target_tau);
    } else if (updates % config.target_update == 0) {
      t.copy_(o);
    }
  }

  DqnConfig config;
  FlatMlp online;
  FlatMlp target;
  at::Tensor adam_m;
  at::Tensor adam_v;
  std::int64_t adam_t = 0;
  std::int64_t updates = 0;
};

DqnLearner::DqnLearner(const DqnConfig& config) {
  config.validate();
  impl_ = std::make_unique<Impl>(config);
}

DqnLearner::~DqnLearner() = default;
DqnLearner::DqnLearner(DqnLearner&&) noexcept = default;
DqnLearner& DqnLearner::operator=(DqnLearner&&) noexcept = default;

namespace {

/// The joint rows' agent inputs as (size·k) × input_size and their alive flags as size × k.
struct JointRows {
  at::Tensor inputs;
  at::Tensor alive;
};

JointRows split_joint_rows(const std::vector<float>& rows, std::int64_t size, int k, int width) {
  const at::Tensor all =
      borrow_matrix(rows.data(), size, static_cast<std::int64_t>(k) * (width + 1));
  return {all.narrow(1, 0, static_cast<std::int64_t>(k) * width).reshape({size * k, width}),
          all.narrow(1, static_cast<std::int64_t>(k) * width, k)};
}

/// Each agent's action of the joint codes, size·k × 1 (agent j of row i at i·k + j).
at::Tensor agent_actions(const std::vector<std::int64_t>& codes, int k, std::int64_t num_actions) {
  at::Tensor out = at::empty({static_cast<std::int64_t>(codes.size()) * k, 1}, at::kLong);
  std::int64_t* a = out.data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < codes.size(); ++i) {
    std::int64_t code = codes[i];
    for (int j = 0; j < k; ++j) {
      *a++ = code % num_actions;
      code /= num_actions;
    }
  }
  return out;
}

/// max-action values of `next_inputs`: the target network's value of the action the online
/// network (double DQN) or the target network picks.
at::Tensor next_values(const FlatMlp& online, const FlatMlp& target, const at::Tensor& next_inputs,
                       bool double_dqn) {
  const at::Tensor next_target_q = target.forward(next_inputs);
  const at::Tensor next_actions =
      double_dqn ? online.forward(next_inputs).argmax(1, true) : next_target_q.argmax(1, true);
  return next_target_q.gather(1, next_actions).squeeze(1);
}

}  // namespace

/// q (the taken actions' values, with gradient) and the TD targets of one batch.
struct DqnLearner::Estimates {
  at::Tensor q;
  at::Tensor targets;
};

DqnLearner::Estimates DqnLearner::estimate(const TransitionBatch& batch) const {
  const Impl& m = *impl_;
  const int width = m.config.network.input_size;
  const std::int64_t n = batch.size;
  const at::Tensor rewards = borrow_matrix(batch.rewards.data(), n, 1).view({n});
  const at::Tensor discounts = borrow_matrix(batch.discounts.data(), n, 1).view({n});
  const int k = m.config.joint_agents;
  if (k == 0) {
    const at::Tensor obs = borrow_matrix(batch.observations.data(), n, width);
    const at::Tensor next_obs = borrow_matrix(batch.next_observations.data(), n, width);
    const at::Tensor actions =
        at::from_blob(const_cast<std::int64_t*>(batch.actions.data()), {n, 1}, at::kLong);
    at::Tensor targets;
    {
      const at::NoGradGuard no_grad;
      targets =
          rewards + discounts * next_values(m.online, m.target, next_obs, m.config.double_dqn);
    }
    return {m.online.forward(obs).gather(1, actions).squeeze(1), targets};
  }
  const JointRows now = split_joint_rows(batch.observations, n, k, width);
  const JointRows next = split_joint_rows(batch.next_observations, n, k, width);
  const at::Tensor actions = agent_actions(batch.actions, k, m.config.network.output_size);
  at::Tensor targets;
  {
    const at::NoGradGuard no_grad;
    const at::Tensor per_agent =
        next_values(m.online, m.target, next.inputs, m.config.double_dqn).view({n, k});
    targets = rewards + discounts * (per_agent * next.alive).sum(1);
  }
  const at::Tensor q_agents = m.online.forward(now.inputs).gather(1, actions).view({n, k});
  return {(q_agents * now.alive).sum(1), targets};
}

UpdateResult DqnLearner::update(const TransitionBatch& batch) {
  Impl& m = *impl_;
  batch.validate(m.config.row_size());
  const std::int64_t n = batch.size;
  const Estimates estimates = estimate(batch);
  const at::Tensor& q = estimates.q;
  const at::Tensor& targets = estimates.targets;
  const at::Tensor td = targets - q;
  const at::Tensor abs_td = td.abs();
  const double delta = m.config.huber_delta;
  const at::Tensor quadratic = at::clamp_max(abs_td, delta);
  at::Tensor per_sample = 0.5 * quadratic * quadratic + delta * (abs_td - quadratic);
  if (m.config.negative_td_weight < 1.0) {
    per_sample = per_sample * at::where(td < 0, m.config.negative_td_weight, 1.0);
  }
  if (!batch.importance_weights.empty()) {
    per_sample = per_sample * borrow_matrix(batch.importance_weights.data(), n, 1).view({n});
  }
  const at::Tensor loss = per_sample.mean();

  at::Tensor& params = m.online.parameters();
  if (params.grad().defined()) params.mutable_grad().zero_();
  loss.backward();
  const at::Tensor grad = params.grad();
  const double grad_norm = grad.norm().item<double>();
  if (m.config.max_grad_norm > 0.0 && grad_norm > m.config.max_grad_norm) {
    const at::NoGradGuard no_grad;
    grad.mul_(m.config.max_grad_norm / (grad_norm + 1e-6));
  }
  m.adam_step(grad);
  ++m.updates;
  m.sync_target();

  UpdateResult result;
  result.loss = loss.item<double>();
  result.mean_q = q.detach().mean().item<double>();
  result.grad_norm = grad_norm;
  result.priorities = to_vector(abs_td.detach());
  result.updates = m.updates;
  return result;
}

void DqnLearner::q_values(const float* observations, std::int64_t batch, float* out) const {
  const c10::InferenceMode inference;
  const at::Tensor q =
      impl_->online.forward(borrow_matrix(observations, batch, impl_->config.network.input_size));
  std::memcpy(out, q.contiguous().data_ptr<float>(), static_cast<std::size_t>(q.numel()) * 4);
}

std::int64_t DqnLearner::greedy_action(const float* observation) const {
  std::vector<float> q(static_cast<std::size_t>(impl_->config.network.output_size));
  q_values(observation, 1, q.data());
  std::size_t best = 0;
  for (std::size_t a = 1; a < q.size(); ++a) {
    if (q[a] > q[best]) best = a;
  }
  return static_cast<std::int64_t>(best);
}

WeightsBuffer DqnLearner::weights() const {
  WeightsBuffer weights;
  weights.version = static_cast<std::uint64_t>(impl_->updates);
  weights.values = impl_->online.values();
  return weights;
}

void DqnLearner::load_weights(const WeightsBuffer& weights) {
  impl_->online.load(weights.values.data(), weights.values.size());
  impl_->target.load(weights.values.data(), weights.values.size());
}

LearnerState DqnLearner::state() const {
  const Impl& m = *impl_;
  LearnerState state;
  state.network = m.config.network.to_string();
  state.updates = m.updates;
  state.adam_step = m.adam_t;
  state.online = m.online.values();
  state.target = m.target.values();
  state.adam_m = to_vector(m.adam_m);
  state.adam_v = to_vector(m.adam_v);
  return state;
}

void DqnLearner::restore(const LearnerState& state) {
  Impl& m = *impl_;
  const auto count = static_cast<std::size_t>(m.config.network.parameter_count());
  if (state.network != m.config.network.to_string()) {
    throw LearnerStateError("learner state is for network " + state.network + ", not " +
                            m.config.network.to_string());
  }
  if (state.online.size() != count || state.target.size() != count ||
      state.adam_m.size() != count || state.adam_v.size() != count) {
    throw LearnerStateError("learner state has vectors of the wrong length");
  }
  m.online.load(state.online.data(), count);
  m.target.load(state.target.data(), count);
  copy_into(m.adam_m, state.adam_m);
  copy_into(m.adam_v, state.adam_v);
  m.adam_t = state.adam_step;
  m.updates = state.updates;
}

void DqnLearner::set_learning_rate(double learning_rate) {
  if (!(learning_rate > 0.0)) throw std::invalid_argument("learning rate must be > 0");
  impl_->config.learning_rate = learning_rate;
}

std::int64_t DqnLearner::updates() const { return impl_->updates; }
const DqnConfig& DqnLearner::config() const { return impl_->config; }

}  // namespace tagflow::learning
