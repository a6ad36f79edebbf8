#include "rl/envs/step_workers.hpp"

namespace tagflow::envs {

StepWorkers::StepWorkers(std::size_t num_threads) {
  const std::size_t extra = num_threads > 1 ? num_threads - 1 : 0;
  threads_.reserve(extra);
  for (std::size_t i = 0; i < extra; ++i) threads_.emplace_back([this, i] { worker_loop(i + 1); });
}

StepWorkers::~StepWorkers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  start_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void StepWorkers::run(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn) {
  if (threads_.empty()) {
    fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    n_ = n;
    pending_ = threads_.size();
    error_ = nullptr;
    ++generation_;
  }
  start_.notify_all();
  run_chunk(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return pending_ == 0; });
  fn_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

void StepWorkers::run_chunk(std::size_t chunk) noexcept {
  const std::size_t parts = num_threads();
  const std::size_t begin = n_ * chunk / parts;
  const std::size_t end = n_ * (chunk + 1) / parts;
  try {
    if (begin < end) (*fn_)(begin, end);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_) error_ = std::current_exception();
  }
}

void StepWorkers::worker_loop(std::size_t index) {
  std::size_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    run_chunk(index);
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last = --pending_ == 0;
    }
    if (last) done_.notify_one();
  }
}

}  // namespace tagflow::envs
