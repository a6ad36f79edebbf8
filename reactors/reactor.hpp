// Reactor: the unit of behaviour. Subclass it, declare ports, actions and timers as members, and
// declare reactions in the constructor:
//
//   class Doubler : public Reactor {
//    public:
//     Input<int> in{"in", this};
//     Output<int> out{"out", this};
//     Doubler(std::string name, Environment& env) : Reactor(std::move(name), env) {
//       reaction("double").triggers(in).effects(out).body([this] { out.set(2 * in.get()); });
//     }
//   };
//
// Contract: constructed with the Environment it belongs to (it registers itself there), usually
// through Environment::add<R>() or add_bank<R>(), which own it; a reactor constructed otherwise
// (for example as a member of another reactor) must outlive the run. Not copyable or movable.
// Declarations are single-threaded and end at assembly. At run time its reactions run one at a
// time, in declaration order, so its state needs no lock. Bank members know their index.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "reactors/reaction.hpp"
#include "reactors/tag.hpp"
#include "reactors/trigger.hpp"

namespace tagflow::reactors {

class Environment;
class PortBase;

/// The startup or shutdown trigger of a reactor (present at the first and the last tag).
class LifecycleTrigger final : public TriggerBase {
 public:
  LifecycleTrigger(std::string name, Reactor* owner, ElementKind kind)
      : TriggerBase(std::move(name), owner, kind) {}

 private:
  friend class Scheduler;
  void trigger() const { enqueue_all(triggered_); }
};

class Reactor {
 public:
  Reactor(std::string name, Environment& environment, std::size_t bank_index = 0);
  virtual ~Reactor() = default;
  Reactor(const Reactor&) = delete;
  Reactor& operator=(const Reactor&) = delete;

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] std::size_t bank_index() const { return bank_index_; }
  [[nodiscard]] Environment& environment() const { return environment_; }

  /// The tag being processed (valid inside reactions).
  [[nodiscard]] Tag tag() const;
  /// Logical time since the start tag (valid inside reactions).
  [[nodiscard]] Duration elapsed() const;
  /// Stops the program at the next microstep (see Environment::request_stop()).
  void request_stop() const;

  [[nodiscard]] LifecycleTrigger& startup() { return startup_; }
  [[nodiscard]] LifecycleTrigger& shutdown() { return shutdown_; }

  /// The port named `name` (multiport channels are "name[i]"), or nullptr.
  [[nodiscard]] PortBase* find_port(const std::string& name) const;
  [[nodiscard]] const std::vector<TriggerBase*>& elements() const { return elements_; }
  [[nodiscard]] const std::vector<std::unique_ptr<Reaction>>& reactions() const {
    return reactions_;
  }

 protected:
  /// Declares a reaction; declaration order is priority order. Throws AssemblyError after
  /// assembly.
  Reaction& reaction(std::string name);

 private:
  friend class TriggerBase;
  void add_element(TriggerBase* element) { elements_.push_back(element); }

  std::string name_;
  Environment& environment_;
  std::size_t bank_index_;
  std::vector<TriggerBase*> elements_;
  std::vector<std::unique_ptr<Reaction>> reactions_;
  LifecycleTrigger startup_{"startup", this, ElementKind::kStartup};
  LifecycleTrigger shutdown_{"shutdown", this, ElementKind::kShutdown};
};

}  // namespace tagflow::reactors
