// Table::sample: select under the mutex, copy observation frames outside it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "rl/replay/table.hpp"

namespace tagflow::replay {

ReplayStatus Table::sample(const SampleRequest& request, SampledBatch& out,
                           std::chrono::milliseconds timeout) {
  return sample_impl(request, out, timeout, true);
}

ReplayStatus Table::try_sample(const SampleRequest& request, SampledBatch& out) {
  return sample_impl(request, out, std::chrono::milliseconds(0), false);
}

// Steps:
//   1. under the mutex: wait until the rate limiter allows a sample and the selector can draw;
//      draw the slots; copy each item's small fields; take a reference on its two frames so that
//      eviction cannot hand them to a new item meanwhile;
//   2. without the lock: copy the frames' bytes (immutable while referenced) into the batch;
//   3. under the mutex: drop the references.
ReplayStatus Table::sample_impl(const SampleRequest& request, SampledBatch& out,
                                std::chrono::milliseconds timeout, bool wait) {
  const std::size_t n = request.batch_size;
  if (n == 0) throw std::invalid_argument("replay: sample batch_size must be positive");
  thread_local std::vector<std::size_t> chosen;
  thread_local std::vector<FrameId> pinned;

  out.batch_size = n;
  out.keys.resize(n);
  out.weights.resize(n);
  out.priorities.resize(n);
  out.times_sampled.resize(n);
  out.rewards.resize(n);
  out.dones.resize(n);
  out.actions.resize(n * action_bytes_);
  out.observations.resize(n * observation_bytes_);
  out.next_observations.resize(n * observation_bytes_);
  pinned.resize(2 * n);

  std::unique_lock<std::mutex> lock(mutex_);
  const bool ready = wait_until(lock, timeout, wait, [&] {
    return closed_ || (limiter_.can_sample(committed_) && selector_->can_select());
  });
  if (closed_) return ReplayStatus::kClosed;
  if (!ready) return ReplayStatus::kTimedOut;

  selector_->select(n, rng_, chosen, out.probabilities);
  limiter_.record_sample(n);
  out.table_size = committed_;
  for (std::size_t b = 0; b < n; ++b) {
    Slot& slot = slots_[chosen[b]];
    ++slot.times_sampled;
    out.keys[b] = slot.key;
    out.priorities[b] = slot.priority;
    out.times_sampled[b] = slot.times_sampled;
    out.rewards[b] = slot.reward;
    out.dones[b] = slot.done;
    if (action_bytes_ > 0) {
      std::memcpy(out.actions.data() + b * action_bytes_,
                  actions_.data() + chosen[b] * action_bytes_, action_bytes_);
    }
    pinned[2 * b] = slot.observation;
    pinned[2 * b + 1] = slot.next_observation;
    frames_.retain(slot.observation);
    frames_.retain(slot.next_observation);
  }
  changed_.notify_all();  // the rate limiter may now let inserts through
  lock.unlock();

  if (config_.selector == SelectorKind::kPrioritized && request.importance_beta != 0.0) {
    const double size = static_cast<double>(out.table_size);
    double largest = 0.0;
    for (std::size_t b = 0; b < n; ++b) {
      largest = std::max(largest, std::pow(size * out.probabilities[b], -request.importance_beta));
    }
    for (std::size_t b = 0; b < n; ++b) {
      out.weights[b] = static_cast<float>(
          std::pow(size * out.probabilities[b], -request.importance_beta) / largest);
    }
  } else {
    std::fill(out.weights.begin(), out.weights.end(), 1.0F);
  }
  for (std::size_t b = 0; b < n; ++b) {
    std::memcpy(out.observations.data() + b * observation_bytes_, frames_.data(pinned[2 * b]),
                observation_bytes_);
    std::memcpy(out.next_observations.data() + b * observation_bytes_,
                frames_.data(pinned[2 * b + 1]), observation_bytes_);
  }

  lock.lock();
  for (FrameId frame : pinned) frames_.release(frame);
  return ReplayStatus::kOk;
}

}  // namespace tagflow::replay
