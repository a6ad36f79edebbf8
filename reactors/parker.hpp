// Parker: a lock-free way for threads to sleep until an event counter moves (Linux futex).
//
// The counter is a 32-bit atomic. A waiter reads the counter, checks its condition, and calls
// wait(seen): it returns at once if the counter already moved, else sleeps until notify_all(),
// a timeout or a spurious wake-up. Callers always re-check their condition in a loop. notify_all()
// bumps the counter and issues the wake system call only when a waiter may be asleep, so an
// uncontended notify costs two atomic operations. No mutex, no condition variable, no allocation.
//
// Contract: thread-safe for any number of waiters and notifiers; must outlive every waiter.
#pragma once

#include <atomic>
#include <cstdint>

namespace tagflow::reactors {

class Parker {
 public:
  /// The value to pass to wait(); read it before checking the condition you wait for.
  [[nodiscard]] std::uint32_t epoch() const { return epoch_.load(std::memory_order_seq_cst); }
  /// Sleeps while the epoch equals `seen`, at most `timeout_ns` (negative: no limit).
  void wait(std::uint32_t seen, std::int64_t timeout_ns = -1);
  /// Moves the epoch and wakes every sleeper.
  void notify_all();

 private:
  std::atomic<std::uint32_t> epoch_{0};
  std::atomic<std::uint32_t> sleepers_{0};
};

}  // namespace tagflow::reactors
