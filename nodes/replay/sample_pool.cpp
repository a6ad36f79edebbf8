#include "nodes/replay/sample_pool.hpp"

namespace tagflow::nodes {

SamplePool::SamplePool(std::size_t threads) {
  for (std::size_t t = 1; t < threads; ++t) workers_.emplace_back([this] { work(); });
}

SamplePool::~SamplePool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void SamplePool::drain(std::unique_lock<std::mutex>& lock) {
  while (next_ < count_) {
    const std::size_t index = next_++;
    ++running_;
    const std::function<void(std::size_t)>& body = *body_;
    lock.unlock();
    body(index);
    lock.lock();
    --running_;
  }
  if (running_ == 0) done_.notify_all();
}

void SamplePool::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  // Not generation_: a run may have begun before this thread got here, and it must join it.
  std::uint64_t seen = 0;
  while (true) {
    start_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    drain(lock);
  }
}

void SamplePool::run(std::size_t count, const std::function<void(std::size_t)>& body) {
  if (workers_.empty() || count <= 1) {
    for (std::size_t i = 0; i < count; ++i) body(i);
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  body_ = &body;
  count_ = count;
  next_ = 0;
  ++generation_;
  start_.notify_all();
  drain(lock);
  done_.wait(lock, [&] { return next_ >= count_ && running_ == 0; });
  body_ = nullptr;
  count_ = 0;
}

}  // namespace tagflow::nodes
