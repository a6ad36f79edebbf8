// The federation door of the scheduler: a tag-advance barrier and hooks, the way Lingua Franca's
// centralized coordination drives a federate (docs/ARCHITECTURE.md; federation/PROTOCOL.md).
//
// 1. Before run(), the federation layer calls Environment::enable_tag_barrier(initial_grant) and
//    Environment::set_federation_hooks(hooks), and sets EnvironmentConfig::start_time_ns to the
//    start tag the coordinator sent.
// 2. Whenever the scheduler has completed a tag and picked the next tag it wants to process, it
//    calls hooks.next_event_tag(next) (send NET). `next` may be Tag::forever() when nothing is
//    pending, or the stop tag. It is called again only when `next` changes (for example an
//    earlier event arrived while waiting).
// 3. If `next` is above the grant, the scheduler does not process it: it waits (parked, no
//    spinning) until Environment::grant(g) raises the grant to >= next (TAG), an earlier event
//    arrives through a physical action (a received message), or a stop is requested.
//    Ordering rule: schedule every received value with a tag <= g BEFORE calling grant(g), from
//    the same thread. The scheduler reads the grant before it collects physical events, so a
//    value scheduled before its grant is always seen by the tag it belongs to. A grant() given
//    before run() (after enable_tag_barrier) is kept.
// 4. After every processed tag it calls hooks.tag_complete(tag) (send LTC).
// 5. Received port values enter through PhysicalAction<T>::schedule_at(tag, value) from the
//    federation's thread (or from hooks.wait, step 8), at the tag carried by the message; a
//    reaction of the receiving reactor forwards the value to local ports. A message whose tag is
//    not above the last started tag is late (a protocol violation): it is delivered at the next
//    microstep and counted in Environment::late_events().
// 6. A PTAG(g) ("no message below g; at g only outputs of the zero-delay cycle") is
//    grant(g.predecessor()), unless every input that may still carry a value at g is received
//    by a reaction that waits, inside the tag, until the value or its absence is known: then it
//    may be grant(g). The scheduler does not know the difference; the federation layer
//    (federate/reactor_federate.hpp, PROTOCOL.md §3.7) schedules those inputs at g before
//    the grant and orders their reactions with Environment::order_before.
// 7. Stop: with hooks.stop_requested set, Environment::request_stop() (from a reaction or any
//    thread) does not stop locally; it calls hooks.stop_requested(proposed tag) and the
//    federation later calls Environment::stop_at(granted tag), which is processed under the
//    barrier like any tag. Between the two, no tag at or past the proposed one is processed (a
//    federate must not run past a stop tag that may still be granted); the hook is called again
//    (same proposal) for every later request_stop(), e.g. to answer another federate's. Without
//    that hook, request_stop() is local: the stop tag runs without waiting for a grant.
//    Environment::stop_without_grant() does the same even with the hook (a failed federation).
//
// 8. Waiting on the federation's own thread (optional, single-thread mode only): with hooks.wait
//    set, the scheduler does not park when it must wait (step 3, a physical event, real time);
//    it calls hooks.wait(timeout_ns) (negative: no limit), in which the federation does its
//    network work on this thread and returns when something may have changed: it receives,
//    grants, schedules received values, and sends what the hooks and reactions queued. It calls
//    hooks.poll() at every tag advance, before it looks at the grant, for what must not wait
//    for the next wait (queued sends; now and then a look at the sockets). A notification from
//    another thread (grant(), a physical action, a stop) calls hooks.wake(), which must make a
//    wait() in progress or the next one return soon. One thread then carries a message from the
//    socket to the reaction and from the reaction to the socket: no hand-over between threads,
//    each of which costs a wake-up.
//
// Contract: the hooks run on whichever worker thread is advancing time, between tags, while no
// reaction runs. They must be quick and must not block or call into the environment except
// grant(), stop_at() and physical actions (wait() blocks by design, up to its timeout). They are
// copied at set time; unset hooks cost nothing. wake() is called from any thread.
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
  /// Step 8 (all three or none; only with one worker): wait up to timeout_ns (negative: no
  /// limit) doing the federation's network work; the per-advance look; the cross-thread wake.
  std::function<void(std::int64_t timeout_ns)> wait;
  std::function<void()> poll;
  std::function<void()> wake;
};

}  // namespace tagflow::reactors
