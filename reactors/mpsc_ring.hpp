// BoundedMpscRing<T>: a fixed-capacity lock-free queue, many producers, one consumer.
//
// Each cell carries a sequence number (the classic bounded-queue design): a producer claims a
// cell with a compare-and-swap on the tail and publishes it with a release store of the cell's
// sequence; the consumer reads cells in order with acquire loads. try_push() fails, without
// blocking, when the ring is full. Storage is allocated once at construction.
//
// Contract: try_push() is thread-safe (any number of threads); try_pop() must be called by one
// thread at a time. T must be default-constructible and move-assignable.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <utility>

namespace tagflow::reactors {

template <class T>
class BoundedMpscRing {
 public:
  /// Room for `capacity` values, rounded up to a power of two and to at least 2: in a ring of
  /// one cell a full cell's sequence would equal the next position and take a second value.
  explicit BoundedMpscRing(std::size_t capacity) {
    capacity_ = 2;
    while (capacity_ < capacity) capacity_ *= 2;
    cells_ = std::make_unique<Cell[]>(capacity_);
    for (std::size_t i = 0; i < capacity_; ++i) {
      cells_[i].sequence.store(i, std::memory_order_relaxed);
    }
  }
  BoundedMpscRing(const BoundedMpscRing&) = delete;
  BoundedMpscRing& operator=(const BoundedMpscRing&) = delete;

  [[nodiscard]] std::size_t capacity() const { return capacity_; }

  [[nodiscard]] bool try_push(T value) {
    std::size_t position = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[position & (capacity_ - 1)];
      const std::size_t sequence = cell.sequence.load(std::memory_order_acquire);
      if (sequence == position) {
        if (tail_.compare_exchange_weak(position, position + 1, std::memory_order_relaxed)) {
          cell.value = std::move(value);
          cell.sequence.store(position + 1, std::memory_order_release);
          return true;
        }
      } else if (sequence < position) {
        return false;  // full: the consumer has not freed this cell yet
      } else {
        position = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  [[nodiscard]] bool try_pop(T& out) {
    Cell& cell = cells_[head_ & (capacity_ - 1)];
    if (cell.sequence.load(std::memory_order_acquire) != head_ + 1) return false;
    out = std::move(cell.value);
    cell.sequence.store(head_ + capacity_, std::memory_order_release);
    ++head_;
    return true;
  }

  /// True when a pop would succeed (consumer thread only).
  [[nodiscard]] bool ready() const {
    return cells_[head_ & (capacity_ - 1)].sequence.load(std::memory_order_acquire) == head_ + 1;
  }

 private:
  struct alignas(64) Cell {
    std::atomic<std::size_t> sequence{0};
    T value{};
  };

  std::unique_ptr<Cell[]> cells_;
  std::size_t capacity_ = 0;
  alignas(64) std::atomic<std::size_t> tail_{0};
  alignas(64) std::size_t head_ = 0;
};

}  // namespace tagflow::reactors
