#include "federate/cycle_inputs.hpp"

#include <algorithm>

namespace tagflow::coordinator {

std::size_t CycleInputs::add(std::string from, std::uint32_t port,
                             reactors::PhysicalAction<transport::Payload>& action) {
  Input input;
  input.from = std::move(from);
  input.port = port;
  input.action = &action;
  inputs_.push_back(std::move(input));
  return inputs_.size() - 1;
}

std::optional<std::size_t> CycleInputs::find(const std::string& from, std::uint32_t port) const {
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i].from == from && inputs_[i].port == port) return i;
  }
  return std::nullopt;
}

void CycleInputs::trigger(Input& input, const transport::WireTag& tag) {
  // Called with mutex_ held; schedule_at only queues (it waits only on a full queue, which one
  // event per tag and input does not fill).
  if (tag <= input.triggered) return;
  input.triggered = tag;
  input.action->schedule_at(tag, transport::Payload());
}

void CycleInputs::on_arrival(std::size_t index, const transport::WireTag& tag,
                             std::optional<transport::Payload> value) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    Input& input = inputs_[index];
    input.arrived.emplace_back(tag, std::move(value));
    // One peer's messages arrive in tag order: nothing earlier can follow this one.
    input.known_through = std::max(input.known_through, tag.predecessor());
    trigger(input, tag);
  }
  changed_.notify_all();
}

void CycleInputs::known_through(const transport::WireTag& tag) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (Input& input : inputs_) input.known_through = std::max(input.known_through, tag);
  }
  changed_.notify_all();
}

void CycleInputs::provisional(const transport::WireTag& tag) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (Input& input : inputs_) {
    if (!known_locked(input, tag)) trigger(input, tag);
  }
}

void CycleInputs::abort() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
  }
  changed_.notify_all();
}

bool CycleInputs::known_locked(const Input& input, const transport::WireTag& tag) const {
  if (tag <= input.known_through) return true;
  for (const auto& entry : input.arrived) {
    if (entry.first == tag) return true;
  }
  return false;
}

bool CycleInputs::known(std::size_t index, const transport::WireTag& tag) {
  const std::lock_guard<std::mutex> lock(mutex_);
  return aborted_ || known_locked(inputs_[index], tag);
}

std::optional<transport::Payload> CycleInputs::take(std::size_t index,
                                                    const transport::WireTag& tag) {
  std::unique_lock<std::mutex> lock(mutex_);
  Input& input = inputs_[index];
  changed_.wait(lock, [&] { return aborted_ || known_locked(input, tag); });
  std::optional<transport::Payload> value;
  while (!input.arrived.empty() && input.arrived.front().first <= tag) {
    if (input.arrived.front().first == tag) value = std::move(input.arrived.front().second);
    input.arrived.pop_front();
  }
  return value;
}

}  // namespace tagflow::coordinator
