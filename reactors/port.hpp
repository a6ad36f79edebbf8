// Ports: typed inputs and outputs, and the connections between them.
//
// An Output<T> is set by the reactions of its reactor that declare it as an effect; its value
// lives in one preallocated slot. A directly connected Input<T> reads that slot (no copy, no
// queue), so fan-out to N readers copies nothing; send a Shared<T> for large values. Inputs
// reached from one output through `after` connections of the same delay share one slot, filled
// by the scheduler at the delayed tag from one FIFO (a broadcast over `after` queues each value
// once, and is one event source, not N). A value is present only at the tag it was set.
//
// Contract: T must be default-constructible and copy-assignable. Ports are members of their
// reactor (`Output<int> out{"out", this};`), not copyable or movable. set() is only for the
// owner's reactions that declared the port as an effect; get() and is_present() are for
// reactions that declared the port (or, for outputs, set it); neither locks nor allocates,
// except a delayed connection's FIFO growing past its high-water mark. get() on an absent port
// returns the last value it held (T{} before the first), so check is_present() first.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

#include "reactors/event_queue.hpp"
#include "reactors/scheduler.hpp"
#include "reactors/trigger.hpp"

namespace tagflow::reactors {

/// The part of a port that does not depend on its value type: name, direction, type and
/// connections. Environment::connect() uses it to check and bind ports by reference or by name.
class PortBase : public TriggerBase {
 public:
  PortBase(std::string name, Reactor* owner, ElementKind kind, std::type_index type)
      : TriggerBase(std::move(name), owner, kind), type_(type) {}

  [[nodiscard]] bool is_input() const { return kind() == ElementKind::kInput; }
  [[nodiscard]] std::type_index value_type() const { return type_; }
  /// For an input: the output connected to it (directly or with a delay), or nullptr.
  [[nodiscard]] PortBase* upstream() const { return upstream_; }
  /// For an input reached through `after`, the delay.
  [[nodiscard]] bool has_delay() const { return delayed_; }
  [[nodiscard]] Duration delay() const { return delay_; }
  /// For an output: every input connected to it.
  [[nodiscard]] const std::vector<PortBase*>& downstream() const { return downstream_; }

 protected:
  friend class Environment;
  /// Binds `input` (same value type, checked by the caller) to this output's slot. Outputs only.
  virtual void bind_direct(PortBase& input) = 0;
  /// Binds `input` to the FIFO that carries this output's values `after` later: a new one, returned
  /// (an event source), or nullptr when one with that delay already exists and now feeds `input`
  /// too. Outputs only.
  virtual std::unique_ptr<EventSource> bind_delayed(PortBase& input, Duration after) = 0;
  /// Called at assembly, after every connection: precomputes the fan-out of reactions.
  virtual void finalize() {}

 private:
  std::type_index type_;
  PortBase* upstream_ = nullptr;
  bool delayed_ = false;
  Duration delay_{0};
  std::vector<PortBase*> downstream_;
};

template <class T>
struct PortSlot {
  T value{};
  std::uint64_t sequence = 0;  // Scheduler::sequence() of the tag the value was set at
};

template <class T>
class Input;

/// The values of one output to every input it reaches with the same delay: one FIFO, one slot
/// the inputs read, and the union of the reactions they trigger.
template <class T>
class DelayedConnection final : public EventSource {
 public:
  explicit DelayedConnection(Duration after) : after_(after) {}

  [[nodiscard]] Duration after() const { return after_; }
  /// Makes `input` read this connection's slot.
  void add(Input<T>& input);
  /// At assembly, after every connection: the reactions the inputs trigger, each once.
  void finalize();
  void push(Tag now, const T& value) { queue_.push(now.delayed(after_), value); }
  [[nodiscard]] Tag next_event_tag() const override { return queue_.front_tag(); }
  void fire(Tag tag) override;
  void clear() override { queue_.clear(); }

 private:
  Duration after_;
  PortSlot<T> slot_;
  std::vector<const TriggerBase*> inputs_;
  std::vector<Reaction*> fanout_;
  EventRing<T> queue_;
};

template <class T>
class Output final : public PortBase {
 public:
  Output(std::string name, Reactor* owner)
      : PortBase(std::move(name), owner, ElementKind::kOutput, typeid(T)) {}

  /// Sets the value at the current tag; the last set in a tag wins. From a reaction that did not
  /// declare this output as an effect: throws AssemblyError naming both (the run then fails
  /// with a ReactionError).
  void set(T value) {
    if (const Reaction* reaction = Scheduler::running_reaction(); reaction != checked_writer_) {
      if (reaction != nullptr && !reaction->declares_effect(*this)) {
        throw_undeclared_effect(*reaction, *this);
      }
      checked_writer_ = reaction;
    }
    slot_.value = std::move(value);
    slot_.sequence = scheduler_->sequence();
    enqueue_all(fanout_);
    for (DelayedConnection<T>* connection : delayed_) {
      connection->push(scheduler_->current_tag(), slot_.value);
    }
  }
  [[nodiscard]] bool is_present() const {
    return scheduler_ != nullptr && slot_.sequence == scheduler_->sequence();
  }
  [[nodiscard]] const T& get() const { return slot_.value; }

 private:
  void bind_direct(PortBase& input) override;
  std::unique_ptr<EventSource> bind_delayed(PortBase& input, Duration after) override;
  void finalize() override;

  PortSlot<T> slot_;
  std::vector<Reaction*> fanout_;
  std::vector<DelayedConnection<T>*> delayed_;
  // The last writer found to declare this output. Its writers are reactions of its own reactor,
  // which never run at once.
  const Reaction* checked_writer_ = nullptr;
};

template <class T>
class Input final : public PortBase {
 public:
  Input(std::string name, Reactor* owner)
      : PortBase(std::move(name), owner, ElementKind::kInput, typeid(T)) {}

  [[nodiscard]] bool is_present() const {
    return scheduler_ != nullptr && slot_->sequence == scheduler_->sequence();
  }
  [[nodiscard]] const T& get() const { return slot_->value; }

 private:
  friend class Output<T>;
  // Connections are bound from their output side (Environment checks directions first).
  void bind_direct(PortBase& /*input*/) override {}
  std::unique_ptr<EventSource> bind_delayed(PortBase& /*input*/, Duration /*after*/) override {
    return nullptr;
  }
  friend class DelayedConnection<T>;
  const PortSlot<T>* slot_ = &own_slot_;  // the output's, a DelayedConnection's, or its own
  PortSlot<T> own_slot_;                  // never written: an unconnected input is never present
};

// ---- template bodies ----

template <class T>
void DelayedConnection<T>::add(Input<T>& input) {
  input.slot_ = &slot_;
  inputs_.push_back(&input);
}

template <class T>
void DelayedConnection<T>::finalize() {
  fanout_.clear();
  for (const TriggerBase* input : inputs_) {
    for (Reaction* reaction : input->triggered_) {
      if (std::find(fanout_.begin(), fanout_.end(), reaction) == fanout_.end()) {
        fanout_.push_back(reaction);
      }
    }
  }
}

template <class T>
void DelayedConnection<T>::fire(Tag tag) {
  while (queue_.front_tag() == tag) slot_.value = queue_.pop();  // last set in a tag wins
  slot_.sequence = inputs_.front()->scheduler_->sequence();
  inputs_.front()->enqueue_all(fanout_);
}

template <class T>
void Output<T>::bind_direct(PortBase& input) {
  static_cast<Input<T>&>(input).slot_ = &slot_;
}

template <class T>
std::unique_ptr<EventSource> Output<T>::bind_delayed(PortBase& input, Duration after) {
  auto& typed = static_cast<Input<T>&>(input);
  for (DelayedConnection<T>* connection : delayed_) {
    if (connection->after() == after) {
      connection->add(typed);
      return nullptr;  // the connection (an event source already) now carries this input too
    }
  }
  auto connection = std::make_unique<DelayedConnection<T>>(after);
  connection->add(typed);
  delayed_.push_back(connection.get());
  return connection;
}

template <class T>
void Output<T>::finalize() {
  fanout_.clear();
  for (PortBase* input : downstream()) {
    if (input->has_delay()) continue;
    for (Reaction* reaction : input->triggered_reactions()) {
      if (std::find(fanout_.begin(), fanout_.end(), reaction) == fanout_.end()) {
        fanout_.push_back(reaction);
      }
    }
  }
  for (DelayedConnection<T>* connection : delayed_) connection->finalize();
}

}  // namespace tagflow::reactors
