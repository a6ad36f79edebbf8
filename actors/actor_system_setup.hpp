// The CAF actor system configuration of tagflow's actor mode.
//
// make_actor_system_config() returns a config with the control messages registered
// (the type-ID block of actors/message_types.hpp; a host of node actors adds the data messages,
// nodes/actor_messages.hpp) and, when `with_network` is set, CAF's
// middleman (caf::io) loaded so actors can be published on a TCP port and reached from other
// processes. `worker_threads` sets the scheduler's threads (0: CAF's default, one per core).
// CAF's own log/console output stays off. Thread-safety: build the config on one thread; the
// actor_system made from it is thread-safe. An actor_system's destructor waits for every actor:
// stop them first (StopRun / send_exit).
#pragma once

#include <cstddef>
#include <memory>

#include <caf/actor_system_config.hpp>

namespace tagflow::actors {

struct ActorSystemOptions {
  bool with_network = false;  // load caf::io (publish / remote_actor)
  std::size_t worker_threads = 0;
};

/// A fresh config for one actor system (CAF configs are not copyable once used).
[[nodiscard]] std::unique_ptr<caf::actor_system_config> make_actor_system_config(
    const ActorSystemOptions& options);

}  // namespace tagflow::actors
