#include "nodes/gateway/experience_queue.hpp"

#include <algorithm>

namespace tagflow::gateway {
namespace {

template <class T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

bool ExperienceQueue::try_push(int policy, const nodes::TransitionsMessage& transitions) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (rows_ + transitions.rows() > max_rows_) return false;
  nodes::TransitionsMessage& to = queued_[policy];
  to.observation_size = transitions.observation_size;
  to.weights_version = std::max(to.weights_version, transitions.weights_version);
  append(to.observations, transitions.observations);
  append(to.actions, transitions.actions);
  append(to.rewards, transitions.rewards);
  append(to.terminated, transitions.terminated);
  append(to.next_observations, transitions.next_observations);
  rows_ += transitions.rows();
  return true;
}

std::vector<std::pair<int, nodes::TransitionsMessage>> ExperienceQueue::take() {
  std::map<int, nodes::TransitionsMessage> taken;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    taken.swap(queued_);
    rows_ = 0;
  }
  std::vector<std::pair<int, nodes::TransitionsMessage>> out;
  out.reserve(taken.size());
  for (auto& [policy, transitions] : taken) out.emplace_back(policy, std::move(transitions));
  return out;
}

std::size_t ExperienceQueue::rows() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return rows_;
}

}  // namespace tagflow::gateway
