// Tracing in actor mode (tracing/README.md): a node actor's message handlers as spans.
//
//   behavior_type make_behavior() override {
//     return traced<behavior_type>(replica_name(), [this](const TransitionsMessage& t) {...}, ...);
//   }
//
// traced() wraps every handler in one with the same signature that, while the process traces
// (common/trace_recorder.hpp), records a `handler` span named "REPLICA MESSAGE" (the handled
// type's name without its namespace, `atom` for CAF atoms) around the call; otherwise the cost
// is one atomic load and a branch. The messages a node actor sends and takes are recorded by
// NodeActorBase (actor_binding_base.hpp). Thread-safety: as the handlers (one at a time).
#pragma once

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "common/trace_recorder.hpp"

namespace tagflow::nodes {
namespace detail {

/// A type's name as people read it: "TransitionsMessage", "atom".
template <class T>
std::string handled_name() {
  const char* mangled = typeid(T).name();
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  std::string name = status == 0 ? demangled.get() : mangled;
  if (name.rfind("caf::atom_constant", 0) == 0) return "atom";
  name = name.substr(0, name.find('<'));
  const auto colon = name.rfind("::");
  return colon == std::string::npos ? name : name.substr(colon + 2);
}

template <class... A>
std::string first_name() {
  if constexpr (sizeof...(A) == 0) {
    return "(nothing)";
  } else {
    using First = std::decay_t<std::tuple_element_t<0, std::tuple<A...>>>;
    return handled_name<First>();
  }
}

template <class F, class R, class... A>
auto wrap(const std::string& replica, F f) {
  return [name = replica + " " + first_name<A...>(), f = std::move(f)](A... args) mutable -> R {
    trace::TraceRecorder* const tracer = trace::active();
    const trace::Span span(trace::Kind::kHandler, Tag::never(),
                           tracer != nullptr ? tracer->intern(name) : 0);
    return f(std::forward<A>(args)...);
  };
}

template <class F, class R, class C, class... A>
auto wrap_member(const std::string& replica, F f, R (C::*)(A...) const) {
  return wrap<F, R, A...>(replica, std::move(f));
}
template <class F, class R, class C, class... A>
auto wrap_member(const std::string& replica, F f, R (C::*)(A...)) {
  return wrap<F, R, A...>(replica, std::move(f));
}

}  // namespace detail

template <class Behavior, class... Handlers>
Behavior traced(const std::string& replica, Handlers... handlers) {
  return Behavior{detail::wrap_member(replica, std::move(handlers), &Handlers::operator())...};
}

}  // namespace tagflow::nodes
