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

void throw_undeclared_effect(const Reaction& reaction, const TriggerBase& output) {
  throw AssemblyError("reaction '" + reaction.full_name() + "' set output '" + output.full_name() +
                      "' without declaring it: add it to the reaction's effects(...); the "
                      "reactions it feeds are not ordered after this one, and its value would "
                      "be lost");
}

void Reaction::check_declarable() const {
  if (owner_->environment().assembled()) {
    throw AssemblyError("reaction " + full_name() +
                        " changed after assembly: declare its triggers, sources, effects and "
                        "body before Environment::assemble()");
  }
}

}  // namespace tagflow::reactors
