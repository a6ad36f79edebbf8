#include "reactors/environment.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "reactors/action.hpp"
#include "reactors/errors.hpp"
#include "reactors/reaction_graph.hpp"
#include "reactors/timer.hpp"

namespace tagflow::reactors {
namespace {

std::string type_name(std::type_index type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled != nullptr ? demangled : type.name();
  std::free(demangled);  // NOLINT(cppcoreguidelines-no-malloc): the ABI allocates with malloc
  return name;
}

bool is_effect_kind(ElementKind kind) {
  return kind == ElementKind::kOutput || kind == ElementKind::kLogicalAction ||
         kind == ElementKind::kPhysicalAction;
}

}  // namespace

Environment::Environment(EnvironmentConfig config) : config_(config) {
  if (config_.workers == 0) config_.workers = 1;
}

Environment::~Environment() = default;

void Environment::register_reactor(Reactor* reactor) {
  check_declaring("add reactor " + reactor->name());
  reactors_.push_back(reactor);
}

void Environment::check_declaring(const std::string& what) const {
  if (phase_ != Phase::kDeclaring) throw AssemblyError("cannot " + what + " after assembly");
}

void Environment::width_mismatch(std::size_t from, std::size_t to) {
  throw AssemblyError("connect_each: " + std::to_string(from) + " output ports but " +
                      std::to_string(to) + " input ports");
}

void Environment::connect(PortBase& from, PortBase& to, std::optional<Duration> after) {
  check_declaring("connect " + from.full_name() + " to " + to.full_name());
  connections_.push_back(PendingConnection{&from, &to, after});
}

Reactor* Environment::find_reactor(const std::string& name) const {
  for (Reactor* reactor : reactors_) {
    if (reactor->name() == name) return reactor;
  }
  return nullptr;
}

void Environment::enable_tag_barrier(Tag initial_grant) {
  check_declaring("enable the tag barrier");
  tag_barrier_ = true;
  initial_grant_ = initial_grant;
}

void Environment::set_federation_hooks(FederationHooks hooks) {
  check_declaring("set federation hooks");
  const int waiting = (hooks.wait ? 1 : 0) + (hooks.poll ? 1 : 0) + (hooks.wake ? 1 : 0);
  if (waiting != 0 && waiting != 3) {
    throw std::invalid_argument(
        "federation hooks: wait, poll and wake are set all three or none (" +
        std::to_string(waiting) + " of them set)");
  }
  if (waiting == 3 && config_.workers != 1) {
    throw std::invalid_argument(
        "federation hooks: wait, poll and wake need one worker (this "
        "environment has " +
        std::to_string(config_.workers) + ")");
  }
  hooks_ = std::move(hooks);
}

void Environment::grant(Tag tag) { scheduler_.grant(tag); }
void Environment::request_stop() { scheduler_.request_stop(); }
void Environment::stop_at(Tag tag) { scheduler_.request_stop_at(tag); }
void Environment::stop_without_grant() { scheduler_.stop_without_grant(); }

void Environment::raise_cutoff_floor(Tag tag) {
  std::int64_t seen = cutoff_floor_ns_.load(std::memory_order_relaxed);
  while (tag.time_ns() > seen &&
         !cutoff_floor_ns_.compare_exchange_weak(seen, tag.time_ns(), std::memory_order_relaxed)) {
  }
}

void Environment::bind_connections() {
  for (const PendingConnection& c : connections_) {
    const std::string names = c.from->full_name() + " -> " + c.to->full_name();
    if (c.from->is_input()) {
      throw AssemblyError("connection " + names + ": " + c.from->full_name() +
                          " is an input; connections start at an output");
    }
    if (!c.to->is_input()) {
      throw AssemblyError("connection " + names + ": " + c.to->full_name() +
                          " is an output; connections end at an input");
    }
    if (c.from->value_type() != c.to->value_type()) {
      throw AssemblyError("type mismatch in connection " + names + ": " + c.from->full_name() +
                          " carries " + type_name(c.from->value_type()) + " but " +
                          c.to->full_name() + " expects " + type_name(c.to->value_type()));
    }
    if (c.to->upstream_ == c.from) {
      throw AssemblyError("connection " + names + " is made twice: connect a pair of ports once");
    }
    if (c.to->upstream_ != nullptr) {
      throw AssemblyError("two writers to one port: " + c.to->full_name() +
                          " is connected from both " + c.to->upstream_->full_name() + " and " +
                          c.from->full_name());
    }
    if (c.after && c.after->count() < 0) {
      throw AssemblyError("connection " + names + " has a negative delay");
    }
    c.to->upstream_ = c.from;
    c.from->downstream_.push_back(c.to);
    if (c.after) {
      c.to->delayed_ = true;
      c.to->delay_ = *c.after;
      if (auto connection = c.from->bind_delayed(*c.to, *c.after)) {
        delayed_connections_.push_back(std::move(connection));
      }
    } else {
      c.from->bind_direct(*c.to);
    }
  }
}

void Environment::check_effects() const {
  for (Reactor* reactor : reactors_) {
    for (const auto& reaction : reactor->reactions()) {
      if (!reaction->body_) {
        throw AssemblyError("reaction " + reaction->full_name() + " has no body");
      }
      if (reaction->declared_triggers().empty()) {
        throw AssemblyError("reaction " + reaction->full_name() + " has no trigger");
      }
      for (TriggerBase* effect : reaction->declared_effects()) {
        if (&effect->owner() != reactor || !is_effect_kind(effect->kind())) {
          throw AssemblyError("reaction " + reaction->full_name() + " declares " +
                              effect->full_name() +
                              " as an effect; effects are its own reactor's outputs and actions");
        }
      }
      for (const auto* list : {&reaction->declared_triggers(), &reaction->declared_sources()}) {
        for (TriggerBase* element : *list) {
          if (&element->owner() != reactor) {
            throw AssemblyError("reaction " + reaction->full_name() + " reads " +
                                element->full_name() + ", which belongs to another reactor");
          }
        }
      }
    }
  }
}

void Environment::order_before(Reaction& first, Reaction& second) {
  check_declaring("order " + first.full_name() + " before " + second.full_name());
  ordering_hints_.emplace_back(&first, &second);
}

void Environment::assemble() {
  if (phase_ != Phase::kDeclaring) return;
  bind_connections();
  check_effects();
  for (Reactor* reactor : reactors_) {
    for (const auto& reaction : reactor->reactions()) {
      for (TriggerBase* trigger : reaction->declared_triggers()) {
        auto& list = trigger->triggered_;
        if (std::find(list.begin(), list.end(), reaction.get()) == list.end()) {
          list.push_back(reaction.get());
        }
      }
    }
  }
  for (Reactor* reactor : reactors_) {
    for (TriggerBase* element : reactor->elements()) {
      if (element->kind() == ElementKind::kOutput) static_cast<PortBase*>(element)->finalize();
    }
  }
  ReactionGraph graph(reactors_);
  for (const auto& [first, second] : ordering_hints_) graph.add_ordering_hint(*first, *second);
  levels_ = graph.levels();
  for (Reactor* reactor : reactors_) {
    for (TriggerBase* element : reactor->elements()) element->scheduler_ = &scheduler_;
  }
  phase_ = Phase::kAssembled;
}

void Environment::run() {
  assemble();
  if (phase_ != Phase::kAssembled) throw std::logic_error("Environment::run() called twice");
  phase_ = Phase::kRunning;

  start_tag_ = Tag(config_.start_time_ns ? *config_.start_time_ns : physical_time_ns(), 0);
  SchedulerOptions options;
  options.workers = config_.workers;
  options.share_threshold_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(config_.share_threshold).count();
  options.fast = config_.fast;
  options.start_tag = start_tag_;
  options.timeout_tag =
      config_.timeout ? Tag(start_tag_.time_ns(), 0).delayed(*config_.timeout) : Tag::forever();
  if (config_.timeout && config_.timeout->count() == 0) options.timeout_tag = start_tag_;
  options.tag_barrier = tag_barrier_;
  options.initial_grant = initial_grant_;
  options.hooks = hooks_;

  std::vector<EventSource*> sources;
  std::vector<EventSource*> physical;
  std::vector<LifecycleTrigger*> startup;
  std::vector<LifecycleTrigger*> shutdown;
  for (Reactor* reactor : reactors_) {
    for (TriggerBase* element : reactor->elements()) {
      switch (element->kind()) {
        case ElementKind::kTimer:
          static_cast<Timer*>(element)->arm(start_tag_);
          sources.push_back(static_cast<Timer*>(element));
          break;
        case ElementKind::kPhysicalAction:
          physical.push_back(dynamic_cast<EventSource*>(element));
          sources.push_back(physical.back());
          break;
        case ElementKind::kLogicalAction:
          sources.push_back(dynamic_cast<EventSource*>(element));
          break;
        case ElementKind::kStartup:
          if (!element->triggered_reactions().empty()) {
            startup.push_back(static_cast<LifecycleTrigger*>(element));
          }
          break;
        case ElementKind::kShutdown:
          if (!element->triggered_reactions().empty()) {
            shutdown.push_back(static_cast<LifecycleTrigger*>(element));
          }
          break;
        case ElementKind::kInput:
        case ElementKind::kOutput:
          break;
      }
    }
  }
  for (const auto& connection : delayed_connections_) sources.push_back(connection.get());
  options.keepalive = config_.keepalive ? *config_.keepalive : !physical.empty() || tag_barrier_;

  scheduler_.configure(options, levels_, std::move(sources), std::move(physical),
                       std::move(startup), std::move(shutdown));
  scheduler_.run();
  phase_ = Phase::kDone;
  if (const std::exception_ptr failure = scheduler_.failure()) {
    std::string what = "an exception that is no std::exception";
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    throw ReactionError("reaction '" + scheduler_.failed_reaction() + "' threw: " + what);
  }
}

}  // namespace tagflow::reactors
