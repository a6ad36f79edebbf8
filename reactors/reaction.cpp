#include "reactors/reaction.hpp"

#include "reactors/environment.hpp"
#include "reactors/reactor.hpp"

namespace tagflow::reactors {

Reaction::Reaction(std::string name, Reactor* owner, std::size_t priority)
    : name_(std::move(name)), owner_(owner), priority_(priority) {}

Reaction& Reaction::body(std::function<void()> body) {
  check_declarable();
  body_ = std::move(body);
  return *this;
}

std::string Reaction::full_name() const { return owner_->name() + "." + name_; }

void Reaction::check_declarable() const {
  if (owner_->environment().assembled()) {
    throw AssemblyError("reaction " + full_name() + " declared after assembly");
  }
}

}  // namespace tagflow::reactors
