// The CAF actor system configuration of tagflow's actor mode.
//
// make_actor_system_config() returns a config with the control messages registered
// (the type-ID block of actors/message_types.hpp; a host of node actors adds the data messages,
// nodes/actor_messages.hpp) and, when `with_network` is set, CAF's
// middleman (caf::io) loaded so actors can be published on a TCP port and reached from other
// processes. With `tls` given, CAF's OpenSSL module is loaded too and every connection is mutual
// TLS with those credentials (actors/actor_credentials.hpp): a peer without a certificate of the
// cluster's CA is cut off during the TLS handshake, before CAF reads a byte of its BASP messages.
// publish_actor() and remote_actor_at() pick TLS whenever the system has it; remote_actor_at()
// can also require the certificate of one named process (actors/tls_peers.hpp).
// `worker_threads` sets the scheduler's threads (0: one per core; CAF's own default is at least
// four). An idle worker spins 100 times on its queue, then sleeps on a condition variable that
// the next message wakes (CAF's `work-stealing.moderate-poll-attempts` is 0): CAF's default
// second phase, 500 polls 50 µs apart, kept every idle worker of every process waking 20,000
// times a second, which on a small machine took the cores from the workers that had work.
// CAF's own log/console output stays off. Thread-safety: build the config on one thread; the
// actor_system made from it is thread-safe. An actor_system's destructor waits for every actor:
// stop them first (StopRun / send_exit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/expected.hpp>

#include "actors/actor_credentials.hpp"

namespace tagflow::actors {

struct ActorSystemOptions {
  bool with_network = false;  // load caf::io (publish / remote_actor)
  std::size_t worker_threads = 0;
};

/// A fresh config for one actor system (CAF configs are not copyable once used). With `tls` (and
/// `with_network`): mutual TLS with those credentials (caf::openssl).
[[nodiscard]] std::unique_ptr<caf::actor_system_config> make_actor_system_config(
    const ActorSystemOptions& options, const std::optional<ActorCredentials>& tls = std::nullopt);

/// Publishes `actor` on `address:port` (TLS when the system has CAF's OpenSSL module).
[[nodiscard]] caf::expected<std::uint16_t> publish_actor(caf::actor_system& system,
                                                         const caf::actor& actor,
                                                         std::uint16_t port,
                                                         const std::string& address);

/// The actor published at `host:port` (TLS when the system has CAF's OpenSSL module). With TLS
/// and a `certificate` name, the peer's certificate must name it (actors/tls_peers.hpp).
[[nodiscard]] caf::expected<caf::actor> remote_actor_at(caf::actor_system& system,
                                                        const std::string& host, std::uint16_t port,
                                                        const std::string& certificate = "");

}  // namespace tagflow::actors
