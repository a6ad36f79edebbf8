// Shared<T>: how large port values travel. An immutable, reference-counted value.
//
// Contract: a Shared<T> is a std::shared_ptr<const T>; setting it on an output and reading it on
// N inputs copies the pointer (one atomic increment), never the T. Nobody may mutate the pointee
// after it was set on a port (it is const). Thread-safe to read from every reader at once.
// Small values (ints, doubles, small structs) should be sent by value instead.
#pragma once

#include <memory>
#include <utility>

namespace tagflow::reactors {

template <class T>
using Shared = std::shared_ptr<const T>;

/// Builds a Shared<T> (one allocation, done by the sender, outside the runtime's per-tag path).
template <class T, class... Args>
Shared<T> make_shared_value(Args&&... args) {
  return std::make_shared<const T>(std::forward<Args>(args)...);
}

/// An empty value for actions and ports that only signal presence.
struct Signal {
  friend constexpr bool operator==(Signal /*a*/, Signal /*b*/) { return true; }
};

}  // namespace tagflow::reactors
