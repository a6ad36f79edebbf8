// EventRing<T> and EventHeap<T>: the per-element queues of future events.
//
// EventRing is a FIFO for sources whose events arrive in tag order (a delayed connection: one
// writer, a fixed delay). EventHeap is a min-heap by (tag, insertion order) for sources whose
// events may arrive out of order (actions with extra delays). Both keep their storage between
// events, so once they have reached their high-water mark they never allocate again; the first
// pushes beyond it grow the storage (by doubling for the ring). Neither is thread-safe: each is
// owned by one reactor's reactions and the scheduler, which never run at the same time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "reactors/tag.hpp"

namespace tagflow::reactors {

template <class T>
class EventRing {
 public:
  explicit EventRing(std::size_t capacity = 8) : entries_(round_up(capacity)) {}

  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] Tag front_tag() const { return empty() ? Tag::forever() : front().tag; }

  /// Appends an event; `tag` must not be below the tag of the last pushed event.
  void push(Tag tag, T value) {
    if (size_ == entries_.size()) grow();
    Entry& entry = entries_[(head_ + size_) & (entries_.size() - 1)];
    entry.tag = tag;
    entry.value = std::move(value);
    ++size_;
  }
  /// Removes the oldest event and returns its value.
  T pop() {
    Entry& entry = entries_[head_];
    head_ = (head_ + 1) & (entries_.size() - 1);
    --size_;
    return std::move(entry.value);
  }
  void clear() {
    while (!empty()) pop();
  }

 private:
  struct Entry {
    Tag tag;
    T value{};
  };
  static std::size_t round_up(std::size_t n) {
    std::size_t capacity = 1;
    while (capacity < n) capacity *= 2;
    return capacity;
  }
  const Entry& front() const { return entries_[head_]; }
  void grow() {
    std::vector<Entry> bigger(entries_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) {
      bigger[i] = std::move(entries_[(head_ + i) & (entries_.size() - 1)]);
    }
    entries_.swap(bigger);
    head_ = 0;
  }

  std::vector<Entry> entries_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

template <class T>
class EventHeap {
 public:
  explicit EventHeap(std::size_t capacity = 8) { entries_.reserve(capacity); }

  [[nodiscard]] bool empty() const { return entries_.empty(); }
  [[nodiscard]] std::size_t size() const { return entries_.size(); }
  [[nodiscard]] Tag top_tag() const { return empty() ? Tag::forever() : entries_.front().tag; }

  void push(Tag tag, T value) {
    entries_.push_back(Entry{tag, next_order_++, std::move(value)});
    std::push_heap(entries_.begin(), entries_.end(), later);
  }
  /// Removes the earliest event (the first pushed among equal tags) and returns its value.
  T pop() {
    std::pop_heap(entries_.begin(), entries_.end(), later);
    T value = std::move(entries_.back().value);
    entries_.pop_back();
    return value;
  }
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    Tag tag;
    std::uint64_t order;
    T value;
  };
  static bool later(const Entry& a, const Entry& b) {
    return b.tag < a.tag || (a.tag == b.tag && a.order > b.order);
  }

  std::vector<Entry> entries_;
  std::uint64_t next_order_ = 0;
};

}  // namespace tagflow::reactors
