#include "reactors/reactor.hpp"

#include "reactors/environment.hpp"
#include "reactors/port.hpp"

namespace tagflow::reactors {

Reactor::Reactor(std::string name, Environment& environment, std::size_t bank_index)
    : name_(std::move(name)), environment_(environment), bank_index_(bank_index) {
  environment_.register_reactor(this);
}

Tag Reactor::tag() const { return environment_.scheduler().current_tag(); }

Duration Reactor::elapsed() const {
  return Duration(tag().time_ns() - environment_.scheduler().start_time_ns());
}

void Reactor::request_stop() const { environment_.request_stop(); }

PortBase* Reactor::find_port(const std::string& name) const {
  for (TriggerBase* element : elements_) {
    if (element->name() == name &&
        (element->kind() == ElementKind::kInput || element->kind() == ElementKind::kOutput)) {
      return static_cast<PortBase*>(element);
    }
  }
  return nullptr;
}

Reaction& Reactor::reaction(std::string name) {
  if (environment_.assembled()) {
    throw AssemblyError("reaction " + name_ + "." + name + " declared after assembly");
  }
  reactions_.push_back(std::make_unique<Reaction>(std::move(name), this, reactions_.size()));
  return *reactions_.back();
}

}  // namespace tagflow::reactors
