// AtomicTag: a Tag shared between threads, with a lock-free read and monotonic updates.
//
// Contract: load() never blocks and never sees a torn tag (it is a sequence lock over atomic
// fields, release-stored and acquire-loaded: a reader retries while a writer is mid-update).
// raise_to(t) / lower_to(t) set it to max / min(value, t); writers serialize on the sequence word
// (a short spin), so it is meant for rare events (grants, stop requests), not for a per-tag path.
// Thread-safe for any number of readers and writers.
#pragma once

#include <atomic>
#include <cstdint>

#include "reactors/tag.hpp"

namespace tagflow::reactors {

class AtomicTag {
 public:
  explicit AtomicTag(Tag initial = Tag::never()) { store_fields(initial); }

  [[nodiscard]] Tag load() const {
    for (;;) {
      const std::uint64_t before = sequence_.load(std::memory_order_acquire);
      if ((before & 1U) != 0) continue;  // a writer is mid-update
      // Acquire loads of the fields: if one reads a writer's (release) store, the writer's odd
      // sequence store happens-before the re-check below, so the re-check fails.
      const Tag value(time_.load(std::memory_order_acquire),
                      microstep_.load(std::memory_order_acquire));
      if (sequence_.load(std::memory_order_relaxed) == before) return value;
    }
  }

  /// Sets the value to max(current, tag). Returns true when the value changed.
  bool raise_to(Tag tag) { return write(tag, Mode::kRaise); }
  /// Sets the value to min(current, tag). Returns true when the value changed.
  bool lower_to(Tag tag) { return write(tag, Mode::kLower); }
  /// Sets the value unconditionally (used to reset between runs).
  void store(Tag tag) { write(tag, Mode::kStore); }

 private:
  enum class Mode { kRaise, kLower, kStore };
  bool write(Tag tag, Mode mode) {
    std::uint64_t even = sequence_.load(std::memory_order_relaxed);
    for (;;) {
      even &= ~std::uint64_t{1};
      if (sequence_.compare_exchange_weak(even, even + 1, std::memory_order_acq_rel,
                                          std::memory_order_relaxed)) {
        break;
      }
    }
    const Tag current(time_.load(std::memory_order_relaxed),
                      microstep_.load(std::memory_order_relaxed));
    const bool change = mode == Mode::kRaise   ? current < tag
                        : mode == Mode::kLower ? tag < current
                                               : current != tag;
    if (change) store_fields(tag);
    sequence_.store(even + 2, std::memory_order_release);
    return change;
  }
  void store_fields(Tag tag) {
    time_.store(tag.time_ns(), std::memory_order_release);
    microstep_.store(tag.microstep(), std::memory_order_release);
  }

  std::atomic<std::uint64_t> sequence_{0};
  std::atomic<std::int64_t> time_{0};
  std::atomic<std::uint32_t> microstep_{0};
};

}  // namespace tagflow::reactors
