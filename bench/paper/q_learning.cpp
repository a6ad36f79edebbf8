#include "bench/paper/q_learning.hpp"

#include <algorithm>
#include <cmath>

namespace tagflow::bench::paper {
namespace {

constexpr std::size_t kW1 = 0;
constexpr std::size_t kB1 = kW1 + QNetwork::kHidden * QNetwork::kInputs;
constexpr std::size_t kW2 = kB1 + QNetwork::kHidden;
constexpr std::size_t kB2 = kW2 + QNetwork::kActions * QNetwork::kHidden;

/// Hidden activations (after ReLU) and outputs for one state.
void forward_pass(const std::array<float, QNetwork::kParameters>& p, const std::array<float, 3>& s,
                  std::array<float, QNetwork::kHidden>& h,
                  std::array<float, QNetwork::kActions>& q) {
  for (std::size_t j = 0; j < QNetwork::kHidden; ++j) {
    float z = p[kB1 + j];
    for (std::size_t i = 0; i < QNetwork::kInputs; ++i)
      z += p[kW1 + j * QNetwork::kInputs + i] * s[i];
    h[j] = std::max(z, 0.0F);
  }
  for (std::size_t k = 0; k < QNetwork::kActions; ++k) {
    float z = p[kB2 + k];
    for (std::size_t j = 0; j < QNetwork::kHidden; ++j)
      z += p[kW2 + k * QNetwork::kHidden + j] * h[j];
    q[k] = z;
  }
}

}  // namespace

QNetwork::QNetwork(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto fill = [&](std::size_t from, std::size_t count, std::size_t fan_in) {
    const float bound = 1.0F / std::sqrt(static_cast<float>(fan_in));
    std::uniform_real_distribution<float> u(-bound, bound);
    for (std::size_t i = 0; i < count; ++i) parameters[from + i] = u(rng);
  };
  fill(kW1, kHidden * kInputs, kInputs);
  fill(kB1, kHidden, kInputs);
  fill(kW2, kActions * kHidden, kHidden);
  fill(kB2, kActions, kHidden);
}

std::array<float, QNetwork::kActions> QNetwork::forward(const std::array<float, 3>& state) const {
  std::array<float, kHidden> h{};
  std::array<float, kActions> q{};
  forward_pass(parameters, state, h, q);
  return q;
}

std::int64_t QNetwork::greedy(const std::array<float, 3>& state) const {
  const auto q = forward(state);
  return q[1] > q[0] ? 1 : 0;
}

QLearner::QLearner(std::uint64_t seed, float learning_rate, float gamma)
    : online_(seed), target_(online_), learning_rate_(learning_rate), gamma_(gamma) {}

double QLearner::update(const std::vector<const Experience*>& batch) {
  std::array<float, QNetwork::kParameters> grad{};
  std::array<float, QNetwork::kHidden> h{};
  std::array<float, QNetwork::kActions> q{};
  double loss = 0.0;
  const float scale = 2.0F / static_cast<float>(batch.size());  // d mean((q - y)^2) / dq
  for (const Experience* e : batch) {
    const auto next = target_.forward(e->next_state);
    const float y = e->reward + gamma_ * std::max(next[0], next[1]) * (1.0F - e->done);
    forward_pass(online_.parameters, e->state, h, q);
    const auto a = static_cast<std::size_t>(e->action);
    const float error = q[a] - y;
    loss += static_cast<double>(error * error);
    const float dq = scale * error;
    grad[kB2 + a] += dq;
    for (std::size_t j = 0; j < QNetwork::kHidden; ++j) {
      grad[kW2 + a * QNetwork::kHidden + j] += dq * h[j];
      if (h[j] <= 0.0F) continue;  // ReLU
      const float dz = dq * online_.parameters[kW2 + a * QNetwork::kHidden + j];
      grad[kB1 + j] += dz;
      for (std::size_t i = 0; i < QNetwork::kInputs; ++i) {
        grad[kW1 + j * QNetwork::kInputs + i] += dz * e->state[i];
      }
    }
  }
  // torch.optim.Adam, defaults besides the learning rate.
  constexpr float kBeta1 = 0.9F, kBeta2 = 0.999F, kEpsilon = 1e-8F;
  ++steps_;
  const float correction1 = 1.0F - std::pow(kBeta1, static_cast<float>(steps_));
  const float correction2 = 1.0F - std::pow(kBeta2, static_cast<float>(steps_));
  for (std::size_t i = 0; i < QNetwork::kParameters; ++i) {
    m_[i] = kBeta1 * m_[i] + (1.0F - kBeta1) * grad[i];
    v_[i] = kBeta2 * v_[i] + (1.0F - kBeta2) * grad[i] * grad[i];
    const float denominator = std::sqrt(v_[i]) / std::sqrt(correction2) + kEpsilon;
    online_.parameters[i] -= learning_rate_ / correction1 * m_[i] / denominator;
  }
  return loss / static_cast<double>(batch.size());
}

void QReplay::add(const Experience& e) {
  if (items_.size() < capacity_) {
    items_.push_back(e);
    return;
  }
  items_[next_] = e;
  next_ = (next_ + 1) % capacity_;
}

const Experience& QReplay::at(std::size_t age) const {
  return items_.size() < capacity_ ? items_[age] : items_[(next_ + age) % capacity_];
}

std::vector<const Experience*> QReplay::first(std::size_t n) const {
  std::vector<const Experience*> out;
  for (std::size_t i = 0; i < std::min(n, items_.size()); ++i) out.push_back(&at(i));
  return out;
}

std::vector<const Experience*> QReplay::sample(std::size_t n, std::mt19937_64& rng) const {
  std::vector<const Experience*> out;
  if (items_.empty()) return out;
  std::uniform_int_distribution<std::size_t> pick(0, items_.size() - 1);
  for (std::size_t i = 0; i < n; ++i) out.push_back(&items_[pick(rng)]);
  return out;
}

}  // namespace tagflow::bench::paper
