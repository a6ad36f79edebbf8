#include "reactors/trigger.hpp"

#include "reactors/reactor.hpp"
#include "reactors/scheduler.hpp"

namespace tagflow::reactors {

TriggerBase::TriggerBase(std::string name, Reactor* owner, ElementKind kind)
    : name_(std::move(name)), owner_(owner), kind_(kind) {
  owner_->add_element(this);
}

std::string TriggerBase::full_name() const { return owner_->name() + "." + name_; }

void TriggerBase::enqueue_all(const std::vector<Reaction*>& reactions) const {
  for (Reaction* reaction : reactions) scheduler_->enqueue(*reaction);
}

}  // namespace tagflow::reactors
