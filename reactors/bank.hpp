// Bank<R>: N instances of one reactor class, each knowing its index (Reactor::bank_index()).
//
// Created by Environment::add_bank<R>(name, n, args...), which constructs
// R(name + "[i]", environment, i, args...) for i in [0, n). ports(&R::member) picks the same
// port from every member, for connect_each / connect_broadcast or as a reaction trigger.
// Contract: the environment owns the members; a Bank is a cheap view (copyable) that stays valid
// as long as the environment.
#pragma once

#include <cstddef>
#include <vector>

#include "reactors/multiport.hpp"

namespace tagflow::reactors {

template <class R>
class Bank {
 public:
  Bank() = default;
  explicit Bank(std::vector<R*> members) : members_(std::move(members)) {}

  [[nodiscard]] std::size_t size() const { return members_.size(); }
  [[nodiscard]] R& operator[](std::size_t i) const { return *members_[i]; }
  [[nodiscard]] auto begin() const { return members_.begin(); }
  [[nodiscard]] auto end() const { return members_.end(); }

  /// The port `member` of every bank member, in index order.
  template <class Port>
  [[nodiscard]] PortList<Port> ports(Port R::*member) const {
    std::vector<Port*> ports;
    ports.reserve(members_.size());
    for (R* reactor : members_) ports.push_back(&(reactor->*member));
    return PortList<Port>(std::move(ports));
  }

 private:
  std::vector<R*> members_;
};

}  // namespace tagflow::reactors
