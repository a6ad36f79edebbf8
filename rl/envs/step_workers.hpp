// A fixed pool of threads that runs one function over a split index range, then waits for all.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tagflow::envs {

/// Runs fn(begin, end) over [0, n) split into num_threads contiguous chunks: the caller's thread
/// takes the first chunk, num_threads - 1 workers the others. run() returns when every chunk is
/// done and rethrows the first exception a chunk threw. One run at a time (not re-entrant, one
/// caller). Workers sleep on a condition variable between runs and are joined by the destructor.
class StepWorkers {
 public:
  explicit StepWorkers(std::size_t num_threads);
  ~StepWorkers();
  StepWorkers(const StepWorkers&) = delete;
  StepWorkers& operator=(const StepWorkers&) = delete;

  [[nodiscard]] std::size_t num_threads() const noexcept { return threads_.size() + 1; }
  void run(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn);

 private:
  void worker_loop(std::size_t index);
  void run_chunk(std::size_t chunk) noexcept;

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_;  // workers wait here for a new generation
  std::condition_variable done_;   // the caller waits here for pending_ == 0
  // Guarded by mutex_:
  std::size_t generation_ = 0;
  std::size_t pending_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
  // Written by run() under mutex_ before a generation starts, read-only during it:
  const std::function<void(std::size_t, std::size_t)>* fn_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace tagflow::envs
