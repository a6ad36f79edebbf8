// The federation door of the scheduler: a tag-advance barrier and hooks, the way Lingua Franca's
// centralized coordination drives a federate (ARCHITECTURE §4; coordinator/PROTOCOL.md).
//
// 1. Before run(), the federation layer calls Environment::enable_tag_barrier(initial_grant) and
//    Environment::set_federation_hooks(hooks), and sets EnvironmentConfig::start_time to the
//    start tag the coordinator sent.
// 2. Whenever the scheduler has completed a tag and picked the next tag it wants to process, it
//    calls hooks.next_event_tag(next) (send NET). `next` may be Tag::forever() when nothing is
//    pending, or the stop tag. It is called again only when `next` changes (for example an
//    earlier event arrived while waiting).
// 3. If `next` is above the grant, the scheduler does not process it: it waits (parked, no
//    spinning) until Environment::grant(g) raises the grant to >= next (TAG), an earlier event
//    arrives through a physical action (a received message), or a stop is requested.
// 4. After every processed tag it calls hooks.tag_complete(tag) (send LTC).
// 5. Received port values enter through PhysicalAction<T>::schedule_at(tag, value) from the
//    network thread, at the tag carried by the message; a reaction of the receiving reactor
//    forwards the value to local ports. A message whose tag is not above the last started tag
//    is late (a protocol violation): it is delivered at the next microstep and counted in
//    Environment::late_events().
// 6. A PTAG(g) ("no message below g") is grant(g.predecessor()).
// 7. Stop: with hooks.stop_requested set, Environment::request_stop() (from a reaction or any
//    thread) does not stop locally; it calls hooks.stop_requested(proposed tag) and the
//    federation later calls Environment::stop_at(granted tag).
//
// Contract: the hooks run on whichever worker thread is advancing time, between tags, while no
// reaction runs. They must be quick and must not block or call into the environment except
// grant(), stop_at() and physical actions. They are copied at set time; unset hooks cost nothing.
#pragma once

#include <functional>

#include "reactors/tag.hpp"

namespace tagflow::reactors {

struct FederationHooks {
  /// NET: the next tag the scheduler wants to process.
  std::function<void(Tag next)> next_event_tag;
  /// LTC: a tag whose reactions have all completed.
  std::function<void(Tag completed)> tag_complete;
  /// A local stop request with the tag it proposes; when set, stop is up to the federation.
  std::function<void(Tag proposed)> stop_requested;
};

}  // namespace tagflow::reactors
