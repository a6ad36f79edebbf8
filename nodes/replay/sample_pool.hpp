// SamplePool: the threads a replay binding resolves several minibatches on at once
// (replay::Table::sample_many, param `sample_threads`).
//
// run(count, body) calls body(0) … body(count − 1), each exactly once, on the pool's threads and
// the calling thread, and returns when every call has returned. Which thread runs which index is
// not specified; replay::Table makes the batches independent of it. One run() at a time (the
// binding's reaction); body must not throw (a reaction's code does not).
// Thread-safety: run() from one thread at a time; the destructor joins the workers.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tagflow::nodes {

class SamplePool {
 public:
  /// `threads` ≥ 1 counts the calling thread: SamplePool(1) starts no thread.
  explicit SamplePool(std::size_t threads);
  ~SamplePool();
  SamplePool(const SamplePool&) = delete;
  SamplePool& operator=(const SamplePool&) = delete;

  void run(std::size_t count, const std::function<void(std::size_t)>& body);
  [[nodiscard]] std::size_t threads() const { return workers_.size() + 1; }

 private:
  void work();
  // Takes indices of the current run until none is left; under mutex_ on entry and exit.
  void drain(std::unique_lock<std::mutex>& lock);

  std::mutex mutex_;
  std::condition_variable start_;                           // a run began, or stop
  std::condition_variable done_;                            // the last index of a run finished
  const std::function<void(std::size_t)>* body_ = nullptr;  // guarded by mutex_
  std::size_t count_ = 0;                                   // guarded by mutex_
  std::size_t next_ = 0;                                    // guarded by mutex_
  std::size_t running_ = 0;                                 // guarded by mutex_: calls in flight
  std::uint64_t generation_ = 0;                            // guarded by mutex_
  bool stop_ = false;                                       // guarded by mutex_
  std::vector<std::thread> workers_;
};

}  // namespace tagflow::nodes
