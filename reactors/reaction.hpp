// Reaction: a piece of a reactor's behaviour with declared dependencies.
//
// A reaction declares its triggers (elements whose presence runs it), its sources (inputs it
// reads without being triggered by them) and its effects (outputs it sets and actions it
// schedules). The scheduler uses these declarations, and nothing else, to order reactions into
// levels: reading an undeclared input or setting an undeclared output is a programmer error that
// breaks determinism. Reactions of one reactor run in declaration order (their priority) and
// never concurrently with each other; reactions of different reactors at the same level may run
// in parallel on different workers.
//
// Contract: created only by Reactor::reaction(); owned by its reactor. Declarations must be
// complete before Environment::assemble() (later calls throw AssemblyError). The body runs on a
// worker thread and must not block. A body that throws ends the run, not the process: the run
// stops at the next tag and Environment::run() throws ReactionError naming the reaction. So
// content from a peer that a node refuses should be dropped and counted inside the body (as the
// replay node does); an exception is for what the node cannot go on from.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "reactors/trigger.hpp"

namespace tagflow::reactors {

class Reaction {
 public:
  Reaction(std::string name, Reactor* owner, std::size_t priority);
  Reaction(const Reaction&) = delete;
  Reaction& operator=(const Reaction&) = delete;

  /// Declares triggers: ports, actions, timers, startup(), shutdown(), or whole multiports.
  template <class... Elements>
  Reaction& triggers(Elements&... elements) {
    (declare(triggers_, elements), ...);
    return *this;
  }
  /// Declares inputs read without being triggered by them.
  template <class... Elements>
  Reaction& sources(Elements&... elements) {
    (declare(sources_, elements), ...);
    return *this;
  }
  /// Declares outputs this reaction sets and actions it schedules (own reactor's only).
  template <class... Elements>
  Reaction& effects(Elements&... elements) {
    (declare(effects_, elements), ...);
    return *this;
  }
  /// The code to run. Required before assembly.
  Reaction& body(std::function<void()> body);

  [[nodiscard]] const std::string& name() const { return name_; }
  /// "reactor.reaction", the name errors and traces use.
  [[nodiscard]] std::string full_name() const;
  [[nodiscard]] Reactor& owner() const { return *owner_; }
  [[nodiscard]] std::size_t priority() const { return priority_; }
  /// The level computed at assembly (0 before).
  [[nodiscard]] std::size_t level() const { return level_; }
  [[nodiscard]] const std::vector<TriggerBase*>& declared_triggers() const { return triggers_; }
  [[nodiscard]] const std::vector<TriggerBase*>& declared_sources() const { return sources_; }
  [[nodiscard]] const std::vector<TriggerBase*>& declared_effects() const { return effects_; }
  /// True when `element` (a port or an action) is among the declared effects.
  [[nodiscard]] bool declares_effect(const TriggerBase& element) const {
    return std::find(effects_.begin(), effects_.end(), &element) != effects_.end();
  }

 private:
  friend class Scheduler;
  friend class Environment;
  friend class ReactionGraph;

  template <class Element>
  void declare(std::vector<TriggerBase*>& list, Element& element) {
    if constexpr (std::is_base_of_v<TriggerBase, Element>) {
      check_declarable();
      list.push_back(&element);
    } else {  // a multiport or bank-like container of elements
      for (std::size_t i = 0; i < element.size(); ++i) declare(list, element[i]);
    }
  }
  void check_declarable() const;

  std::string name_;
  Reactor* owner_;
  std::size_t priority_;
  std::size_t level_ = 0;
  std::function<void()> body_;
  std::vector<TriggerBase*> triggers_;
  std::vector<TriggerBase*> sources_;
  std::vector<TriggerBase*> effects_;
  /// Sequence number of the last tag this reaction was enqueued at (dedupe; see Scheduler).
  std::atomic<std::uint64_t> queued_sequence_{0};
  /// Its full name interned in the process's trace, and for which recorder (Scheduler only; a
  /// reaction runs on one worker at a time, handed over by the scheduler's release/acquire).
  const void* trace_recorder_ = nullptr;
  std::uint32_t trace_name_ = 0;
};

/// Throws AssemblyError: `reaction` set `output` without declaring it as an effect. Its value
/// would be lost: the reactions connected to it are not ordered after `reaction` and may have run.
[[noreturn]] void throw_undeclared_effect(const Reaction& reaction, const TriggerBase& output);

}  // namespace tagflow::reactors
