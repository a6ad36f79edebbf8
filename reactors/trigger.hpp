// TriggerBase and EventSource: the two roles a reactor element can play.
//
// A TriggerBase is anything a reaction can declare as a trigger, source or effect: ports,
// actions, timers, startup and shutdown. It knows the reactions it triggers (fixed at assembly)
// and enqueues them when it becomes present. An EventSource holds events at future tags (actions,
// timers, delayed connections) and is polled by the scheduler between tags.
//
// Contract: elements are created as members of their Reactor (they register themselves with it),
// never copied or moved, and live as long as the reactor. Declaration methods are not
// thread-safe and must finish before Environment::assemble(). At run time, an element is touched
// only by the reactions of its own reactor (serialized by priority) and by the scheduler between
// tags, so it needs no lock; the only exception, PhysicalAction, says so in its own header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reactors/tag.hpp"

namespace tagflow::reactors {

class Reaction;
class Reactor;
class Scheduler;

enum class ElementKind {
  kInput,
  kOutput,
  kLogicalAction,
  kPhysicalAction,
  kTimer,
  kStartup,
  kShutdown
};

class TriggerBase {
 public:
  TriggerBase(std::string name, Reactor* owner, ElementKind kind);
  virtual ~TriggerBase() = default;
  TriggerBase(const TriggerBase&) = delete;
  TriggerBase& operator=(const TriggerBase&) = delete;

  [[nodiscard]] const std::string& name() const { return name_; }
  /// "reactor.element", the name errors use.
  [[nodiscard]] std::string full_name() const;
  [[nodiscard]] Reactor& owner() const { return *owner_; }
  [[nodiscard]] ElementKind kind() const { return kind_; }
  /// Reactions that declared this element as a trigger.
  [[nodiscard]] const std::vector<Reaction*>& triggered_reactions() const { return triggered_; }

 protected:
  friend class Reaction;
  friend class Environment;
  template <class T>
  friend class DelayedConnection;
  /// Enqueues every reaction in `reactions` for the current tag. Lock-free; no allocation.
  void enqueue_all(const std::vector<Reaction*>& reactions) const;
  /// Set at assembly; null before.
  Scheduler* scheduler_ = nullptr;
  std::vector<Reaction*> triggered_;

 private:
  std::string name_;
  Reactor* owner_;
  ElementKind kind_;
};

/// A holder of events at future tags. Called only by the scheduler, between tags.
class EventSource {
 public:
  virtual ~EventSource() = default;
  /// Earliest pending tag, or Tag::forever() when there is none.
  [[nodiscard]] virtual Tag next_event_tag() const = 0;
  /// Makes the events at `tag` (== next_event_tag()) present and enqueues their reactions.
  virtual void fire(Tag tag) = 0;
  /// Moves events scheduled from other threads into the local queue; `current` is the last tag
  /// started, so that late events can be moved after it. Default: nothing to drain.
  virtual void drain_external(Tag /*current*/) {}
  /// Drops every pending event (run end).
  virtual void clear() = 0;
};

}  // namespace tagflow::reactors
