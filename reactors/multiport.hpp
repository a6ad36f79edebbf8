// InputMultiport<T> / OutputMultiport<T>: a fixed number of channels of one value type.
//
// Channel i is an ordinary Input<T>/Output<T> named "name[i]"; a reaction that declares the
// multiport as a trigger runs when any channel is present and inspects them by index. Widths are
// fixed at construction (a bank's size, typically). Contract: as for ports (port.hpp); the
// multiport owns its channels; indexing is bounds-checked only in debug builds.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "reactors/port.hpp"

namespace tagflow::reactors {

template <class Port>
class Multiport {
 public:
  Multiport(const std::string& name, Reactor* owner, std::size_t width) : name_(name) {
    channels_.reserve(width);
    for (std::size_t i = 0; i < width; ++i) {
      channels_.push_back(std::make_unique<Port>(name + "[" + std::to_string(i) + "]", owner));
    }
  }
  Multiport(const Multiport&) = delete;
  Multiport& operator=(const Multiport&) = delete;

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] std::size_t size() const { return channels_.size(); }
  [[nodiscard]] Port& operator[](std::size_t i) { return *channels_[i]; }
  [[nodiscard]] const Port& operator[](std::size_t i) const { return *channels_[i]; }

 private:
  std::string name_;
  std::vector<std::unique_ptr<Port>> channels_;
};

template <class T>
using InputMultiport = Multiport<Input<T>>;
template <class T>
using OutputMultiport = Multiport<Output<T>>;

/// A list of ports picked from several reactors (Bank::ports()); usable wherever a multiport
/// is (connect_each, connect_broadcast, Reaction::triggers). Does not own the ports.
template <class Port>
class PortList {
 public:
  PortList() = default;
  explicit PortList(std::vector<Port*> ports) : ports_(std::move(ports)) {}
  [[nodiscard]] std::size_t size() const { return ports_.size(); }
  [[nodiscard]] Port& operator[](std::size_t i) { return *ports_[i]; }
  [[nodiscard]] const Port& operator[](std::size_t i) const { return *ports_[i]; }

 private:
  std::vector<Port*> ports_;
};

}  // namespace tagflow::reactors
