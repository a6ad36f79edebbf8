// CycleInputs: what a federate knows, tag by tag, about its network inputs on a zero-delay cycle
// across federates (PROTOCOL.md §3.7), and the waits of the reactions that deliver them.
//
// Under PTAG(g) a federate runs tag g before it knows whether its cycle inputs carry a value at
// g. The network thread records here every value and every ABSENT that arrives on such an input,
// and the grants: an input's status at tag t is known once a value or ABSENT with tag t arrived,
// anything with a later tag arrived on it (one peer's messages arrive in order), or a TAG >= t
// (or a PTAG above t) was applied. The deliver reaction of the input calls take(), which blocks
// until the status at its tag is known and returns the value, or nullopt when the port is absent.
//
// Every arrival, and every PTAG, also schedules the input's physical action at that tag (once per
// tag and input), so that the federate processes the tag and the deliver reaction runs at it; the
// action's own value is ignored (the value is here).
//
// Thread-safety: add() before the run, from the declaring thread; the network thread calls
// on_arrival(), known_through(), provisional() and abort(); deliver reactions call take() from
// worker threads. One mutex guards the per-input state; take() waits on a condition variable.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reactors/action.hpp"
#include "transport/payload.hpp"
#include "transport/wire_tag.hpp"

namespace tagflow::coordinator {

class CycleInputs {
 public:
  /// Registers an input (from, port) whose action is `action`; returns its index.
  std::size_t add(std::string from, std::uint32_t port,
                  reactors::PhysicalAction<transport::Payload>& action);
  /// The index of (from, port), or nullopt when it is not a cycle input.
  [[nodiscard]] std::optional<std::size_t> find(const std::string& from, std::uint32_t port) const;
  [[nodiscard]] bool empty() const { return inputs_.empty(); }

  /// A value (or, with nullopt, an ABSENT) with `tag` arrived on input `index`.
  void on_arrival(std::size_t index, const transport::WireTag& tag,
                  std::optional<transport::Payload> value);
  /// Nothing more arrives on any input with a tag <= `tag` (TAG applied).
  void known_through(const transport::WireTag& tag);
  /// PTAG(tag) applied: every input whose status at `tag` is unknown gets its action scheduled
  /// at `tag`, so its deliver reaction runs there and waits.
  void provisional(const transport::WireTag& tag);
  /// The run is over: every wait returns nullopt.
  void abort();

  /// True when the status of input `index` at `tag` is known.
  [[nodiscard]] bool known(std::size_t index, const transport::WireTag& tag);
  /// Blocks until the status of input `index` at `tag` is known; returns the value or nullopt.
  std::optional<transport::Payload> take(std::size_t index, const transport::WireTag& tag);

 private:
  struct Input {
    std::string from;
    std::uint32_t port = 0;
    reactors::PhysicalAction<transport::Payload>* action = nullptr;
    std::deque<std::pair<transport::WireTag, std::optional<transport::Payload>>> arrived;  // by tag
    transport::WireTag known_through = transport::kNever;
    transport::WireTag triggered = transport::kNever;  // latest tag the action was scheduled at
  };
  void trigger(Input& input, const transport::WireTag& tag);
  bool known_locked(const Input& input, const transport::WireTag& tag) const;

  std::vector<Input> inputs_;
  std::mutex mutex_;  // guards every Input's arrived, known_through, triggered; aborted_
  std::condition_variable changed_;
  bool aborted_ = false;
};

}  // namespace tagflow::coordinator
