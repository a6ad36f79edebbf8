#include "actors/actor_system_setup.hpp"

#include <dlfcn.h>

#include <cstdint>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/openssl/remote_actor.hpp>

#include "actors/message_types.hpp"

// OpenSSL's error queue is per thread, and SSL_get_error() reports SSL_ERROR_SSL whenever that
// queue is not empty, whatever the call did: its documentation asks the caller to empty the queue
// before every TLS I/O call. CAF 0.17's TLS module (libcaf_openssl, caf::openssl::session) runs
// every connection's TLS in one multiplexer thread and never empties it, so the first connection
// that fails its handshake — a port scan, a plain client, a forged BASP header — leaves an error
// there, the next read on every healthy connection is taken for a failure, and the nodes lose
// their links to each other: one outsider's TCP connect ended an actor cluster. These four
// definitions take the place of OpenSSL's own for every library of the process (the executable's
// symbols come first), empty the queue and call OpenSSL's.
namespace {
template <class Function>
Function openssl_function(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));  // NOLINT: dlsym's type
}
}  // namespace

extern "C" {
int SSL_read(SSL* ssl, void* buffer, int size) {
  static const auto next = openssl_function<int (*)(SSL*, void*, int)>("SSL_read");
  ERR_clear_error();
  return next(ssl, buffer, size);
}
int SSL_write(SSL* ssl, const void* buffer, int size) {
  static const auto next = openssl_function<int (*)(SSL*, const void*, int)>("SSL_write");
  ERR_clear_error();
  return next(ssl, buffer, size);
}
int SSL_accept(SSL* ssl) {
  static const auto next = openssl_function<int (*)(SSL*)>("SSL_accept");
  ERR_clear_error();
  return next(ssl);
}
int SSL_connect(SSL* ssl) {
  static const auto next = openssl_function<int (*)(SSL*)>("SSL_connect");
  ERR_clear_error();
  return next(ssl);
}
}

namespace tagflow::actors {

std::unique_ptr<caf::actor_system_config> make_actor_system_config(
    const ActorSystemOptions& options, const std::optional<ActorCredentials>& tls) {
  auto config = std::make_unique<caf::actor_system_config>();
  config->add_message_types<caf::id_block::tagflow_control>();
  if (options.worker_threads > 0) {
    config->set("scheduler.max-threads", static_cast<std::int64_t>(options.worker_threads));
  }
  if (options.with_network) config->load<caf::io::middleman>();
  if (options.with_network && tls) {
    config->load<caf::openssl::manager>();
    // Any of these set turns on CAF's certificate authentication of both ends.
    config->openssl_cafile = tls->ca_file;
    config->openssl_certificate = tls->certificate_file;
    config->openssl_key = tls->key_file;
  }
  return config;
}

caf::expected<std::uint16_t> publish_actor(caf::actor_system& system, const caf::actor& actor,
                                           std::uint16_t port, const std::string& address) {
  if (system.has_openssl_manager())
    return caf::openssl::publish(actor, port, address.c_str(), true);
  return system.middleman().publish(actor, port, address.c_str(), true);
}

caf::expected<caf::actor> remote_actor_at(caf::actor_system& system, const std::string& host,
                                          std::uint16_t port) {
  if (system.has_openssl_manager()) return caf::openssl::remote_actor(system, host, port);
  return system.middleman().remote_actor(host, port);
}

}  // namespace tagflow::actors
