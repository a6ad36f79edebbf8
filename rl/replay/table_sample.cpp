// Table::sample and sample_many: admission and draws under the mutex, the tree descent and the
// copies under the shared side of the tree lock.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <shared_mutex>
#include <stdexcept>
#include <vector>

#include "rl/replay/table.hpp"

namespace tagflow::replay {
namespace {

void size_batch(SampledBatch& out, std::size_t n, std::size_t action_bytes,
                std::size_t observation_bytes) {
  out.batch_size = n;
  out.keys.resize(n);
  out.weights.resize(n);
  out.priorities.resize(n);
  out.times_sampled.resize(n);
  out.rewards.resize(n);
  out.dones.resize(n);
  out.actions.resize(n * action_bytes);
  out.observations.resize(n * observation_bytes);
  out.next_observations.resize(n * observation_bytes);
}

void weigh(const SampleRequest& request, bool prioritized, SampledBatch& out) {
  const std::size_t n = out.batch_size;
  if (!prioritized || request.importance_beta == 0.0) {
    std::fill(out.weights.begin(), out.weights.end(), 1.0F);
    return;
  }
  const double size = static_cast<double>(out.table_size);
  thread_local std::vector<double> raw;
  raw.resize(n);
  double largest = 0.0;
  for (std::size_t b = 0; b < n; ++b) {
    raw[b] = std::pow(size * out.probabilities[b], -request.importance_beta);
    largest = std::max(largest, raw[b]);
  }
  for (std::size_t b = 0; b < n; ++b) out.weights[b] = static_cast<float>(raw[b] / largest);
}

}  // namespace

ReplayStatus Table::sample(const SampleRequest& request, SampledBatch& out,
                           std::chrono::milliseconds timeout) {
  return sample_impl(request, out, timeout, true);
}

ReplayStatus Table::try_sample(const SampleRequest& request, SampledBatch& out) {
  return sample_impl(request, out, std::chrono::milliseconds(0), false);
}

bool Table::can_sample_now() const {
  if (!limiter_.can_sample(committed_)) return false;
  flush_pending();
  return selector_->can_select();
}

void Table::admit_sample(const SampleRequest& request, Selection& selection, SampledBatch& out) {
  selector_->draw(request.batch_size, rng_, selection);
  limiter_.record_sample(request.batch_size);
  size_batch(out, request.batch_size, action_bytes_, observation_bytes_);
  out.table_size = committed_;
}

// The slots of items in the selector change only under the exclusive tree lock, and frames of
// live items are immutable, so everything here is read without the mutex.
void Table::fill_sample(Selection& selection, SampledBatch& out) const {
  selector_->resolve(selection);
  out.probabilities.swap(selection.probabilities);
  const std::size_t n = out.batch_size;
  for (std::size_t b = 0; b < n; ++b) {
    const std::size_t index = selection.slots[b];
    const Slot& slot = slots_[index];
    out.keys[b] = slot.key;
    out.priorities[b] = slot.priority;
    out.rewards[b] = slot.reward;
    out.dones[b] = slot.done;
    if (action_bytes_ > 0) {
      std::memcpy(out.actions.data() + b * action_bytes_, actions_.data() + index * action_bytes_,
                  action_bytes_);
    }
    std::memcpy(out.observations.data() + b * observation_bytes_, frames_.data(slot.observation),
                observation_bytes_);
    std::memcpy(out.next_observations.data() + b * observation_bytes_,
                frames_.data(slot.next_observation), observation_bytes_);
  }
}

void Table::count_samples(SampledBatch& out) const {
  for (std::size_t b = 0; b < out.batch_size; ++b) {
    std::atomic<std::uint32_t>& count = times_sampled_[slot_of(out.keys[b])];
    out.times_sampled[b] = count.fetch_add(1, std::memory_order_relaxed) + 1;
  }
}

// Steps:
//   1. under the mutex: wait until the rate limiter allows a sample and the selector (its queued
//      writes applied) can draw; draw the batch's random numbers; take the shared tree lock;
//   2. with the mutex released: resolve the draws (the tree descent), copy the items;
//   3. with no lock: the importance weights.
// Taking the shared side while holding the mutex cannot wait long: every writer of the tree holds
// the mutex too, so none is waiting or inside.
ReplayStatus Table::sample_impl(const SampleRequest& request, SampledBatch& out,
                                std::chrono::milliseconds timeout, bool wait) {
  if (request.batch_size == 0)
    throw std::invalid_argument("replay: sample batch_size must be positive");
  thread_local Selection selection;

  std::unique_lock<std::mutex> lock(mutex_);
  const bool ready = wait_until(lock, timeout, wait, [&] { return closed_ || can_sample_now(); });
  if (closed_) return ReplayStatus::kClosed;
  if (!ready) return ReplayStatus::kTimedOut;
  admit_sample(request, selection, out);
  std::shared_lock<WriterPriorityMutex> tree(tree_mutex_);
  changed_.notify_all();  // the rate limiter may now let inserts through
  lock.unlock();

  fill_sample(selection, out);
  count_samples(out);
  tree.unlock();
  weigh(request, config_.selector == SelectorKind::kPrioritized, out);
  return ReplayStatus::kOk;
}

std::size_t Table::sample_many(const SampleRequest& request, std::vector<SampledBatch>& out,
                               const ParallelFor& parallel_for) {
  if (request.batch_size == 0)
    throw std::invalid_argument("replay: sample batch_size must be positive");
  thread_local std::vector<Selection> scratch;
  if (scratch.size() < out.size()) scratch.resize(out.size());
  std::vector<Selection>& selections = scratch;  // this thread's, for the resolving threads

  std::unique_lock<std::mutex> lock(mutex_);
  std::size_t admitted = 0;
  while (!closed_ && admitted < out.size() && can_sample_now()) {
    admit_sample(request, selections[admitted], out[admitted]);
    ++admitted;
  }
  if (admitted == 0) return 0;
  std::shared_lock<WriterPriorityMutex> tree(tree_mutex_);
  changed_.notify_all();
  lock.unlock();

  const bool prioritized = config_.selector == SelectorKind::kPrioritized;
  const auto fill = [&](std::size_t i) {
    fill_sample(selections[i], out[i]);
    weigh(request, prioritized, out[i]);
  };
  if (parallel_for) {
    parallel_for(admitted, fill);
  } else {
    for (std::size_t i = 0; i < admitted; ++i) fill(i);
  }
  // In batch order, so the counts do not depend on the threads either.
  for (std::size_t i = 0; i < admitted; ++i) count_samples(out[i]);
  return admitted;
}

}  // namespace tagflow::replay
