// Actions: events a reactor schedules for itself at a later tag.
//
// LogicalAction<T>: scheduled by the owner's reactions (declared as an effect) at
// current tag + min_delay + extra (a zero total delay means the next microstep). Events are kept
// in a per-action heap that reuses its storage, so scheduling allocates nothing once warmed up.
// Two events for the same tag: the later schedule wins.
//
// PhysicalAction<T>: the only door for the outside world. Any thread may schedule it, at any
// time after assembly: with schedule(value) it gets the tag (physical time + min_delay + extra,
// 0); with schedule_at(tag, value) (a message received with its tag, see federation.hpp) it gets
// that tag. Events go through a bounded lock-free multi-producer queue (capacity fixed at
// construction) and are moved into the action's heap by the scheduler between tags. A tag that
// is not above the last tag started is moved to the next microstep after it (for schedule_at
// this is counted as a late event). Physical events for one action are ordered by arrival.
//
// Contract: T must be default-constructible and move-assignable. get()/is_present() are for
// reactions that declared the action; schedule() of a logical action is for the owner's
// reactions only (not thread-safe). A physical action's schedule functions are thread-safe and
// lock-free; the blocking variants spin (yielding) while the queue is full.
#pragma once

#include <thread>
#include <utility>

#include "reactors/event_queue.hpp"
#include "reactors/mpsc_ring.hpp"
#include "reactors/scheduler.hpp"
#include "reactors/trigger.hpp"
#include "reactors/value.hpp"

namespace tagflow::reactors {

template <class T>
class ActionBase : public TriggerBase, public EventSource {
 public:
  [[nodiscard]] bool is_present() const {
    return scheduler_ != nullptr && present_sequence_ == scheduler_->sequence();
  }
  [[nodiscard]] const T& get() const { return value_; }
  [[nodiscard]] Duration min_delay() const { return min_delay_; }

  [[nodiscard]] Tag next_event_tag() const override { return events_.top_tag(); }
  void fire(Tag tag) override {
    while (!events_.empty() && events_.top_tag() == tag) value_ = events_.pop();
    present_sequence_ = scheduler_->sequence();
    enqueue_all(triggered_);
  }
  void clear() override { events_.clear(); }

 protected:
  ActionBase(std::string name, Reactor* owner, ElementKind kind, Duration min_delay)
      : TriggerBase(std::move(name), owner, kind), min_delay_(min_delay) {}

  EventHeap<T> events_;

 private:
  Duration min_delay_;
  T value_{};
  std::uint64_t present_sequence_ = 0;
};

template <class T = Signal>
class LogicalAction final : public ActionBase<T> {
 public:
  LogicalAction(std::string name, Reactor* owner, Duration min_delay = Duration::zero())
      : ActionBase<T>(std::move(name), owner, ElementKind::kLogicalAction, min_delay) {}

  /// Schedules `value` at current tag + min_delay + extra.
  void schedule(T value, Duration extra = Duration::zero()) {
    const Tag tag = this->scheduler_->current_tag().delayed(this->min_delay() + extra);
    this->events_.push(tag, std::move(value));
  }
  /// Schedules a default value (for signal actions).
  void schedule() { schedule(T{}); }
};

template <class T = Signal>
class PhysicalAction final : public ActionBase<T> {
 public:
  PhysicalAction(std::string name, Reactor* owner, Duration min_delay = Duration::zero(),
                 std::size_t queue_capacity = 1024)
      : ActionBase<T>(std::move(name), owner, ElementKind::kPhysicalAction, min_delay),
        incoming_(queue_capacity) {}

  /// Schedules at (physical time + min_delay + extra, 0). False when the queue is full or the
  /// program is not assembled or has finished.
  [[nodiscard]] bool try_schedule(T value, Duration extra = Duration::zero()) {
    const Tag tag = Tag(physical_time_ns(), 0).delayed(this->min_delay() + extra);
    return push(Incoming{tag, false, std::move(value)});
  }
  /// As try_schedule(), but waits while the queue is full. False when the program is not
  /// assembled or has finished (the event is dropped).
  bool schedule(T value, Duration extra = Duration::zero()) {
    const Tag tag = Tag(physical_time_ns(), 0).delayed(this->min_delay() + extra);
    return push_waiting(Incoming{tag, false, std::move(value)});
  }
  /// Schedules at exactly `tag` (a value received with its tag). Waits while the queue is full.
  /// False when the program is not assembled or has finished.
  bool schedule_at(Tag tag, T value) { return push_waiting(Incoming{tag, true, std::move(value)}); }
  [[nodiscard]] bool try_schedule_at(Tag tag, T value) {
    return push(Incoming{tag, true, std::move(value)});
  }

  void drain_external(Tag current) override {
    Incoming event;
    while (incoming_.try_pop(event)) {
      Tag tag = event.tag;
      if (tag <= current) {
        if (event.at_tag) this->scheduler_->count_late_event();
        tag = current.next_microstep();
      }
      if (!event.at_tag && tag <= last_physical_) tag = last_physical_.next_microstep();
      if (!event.at_tag) last_physical_ = tag;
      this->events_.push(tag, std::move(event.value));
    }
  }

 private:
  struct Incoming {
    Tag tag;
    bool at_tag = false;
    T value{};
  };

  bool push(Incoming event) {
    Scheduler* scheduler = this->scheduler_;
    if (scheduler == nullptr || scheduler->finished()) return false;
    if (!incoming_.try_push(std::move(event))) return false;
    scheduler->notify_external();
    return true;
  }
  bool push_waiting(Incoming event) {
    Scheduler* scheduler = this->scheduler_;
    if (scheduler == nullptr) return false;
    for (;;) {
      if (scheduler->finished()) return false;
      if (incoming_.try_push(std::move(event))) break;
      std::this_thread::yield();
    }
    scheduler->notify_external();
    return true;
  }

  BoundedMpscRing<Incoming> incoming_;
  Tag last_physical_ = Tag::never();
};

}  // namespace tagflow::reactors
