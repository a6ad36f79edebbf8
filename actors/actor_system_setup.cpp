#include "actors/actor_system_setup.hpp"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/openssl/remote_actor.hpp>

#include "actors/message_types.hpp"
#include "actors/tls_peers.hpp"

// OpenSSL's error queue is per thread, and SSL_get_error() reports SSL_ERROR_SSL whenever that
// queue is not empty, whatever the call did: its documentation asks the caller to empty the queue
// before every TLS I/O call. CAF 0.17's TLS module (libcaf_openssl, caf::openssl::session) runs
// every connection's TLS in one multiplexer thread and never empties it, so the first connection
// that fails its handshake — a port scan, a plain client, a forged BASP header — leaves an error
// there, the next read on every healthy connection is taken for a failure, and the nodes lose
// their links to each other: one outsider's TCP connect ended an actor cluster. These four
// definitions take the place of OpenSSL's own for every library of the process (the executable's
// symbols come first), empty the queue and call OpenSSL's.
//
// They also see every handshake step (SSL_accept / SSL_connect, and SSL_read / SSL_write while the
// handshake is not finished), so a handshake that ends in a TLS error is counted and logged once
// per connection (actors/tls_peers.hpp): CAF itself closes such a connection without a word; and
// a connection this process dials is bound to the certificate name expected at its address.
namespace {
template <class Function>
Function openssl_function(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));  // NOLINT: dlsym's type
}

/// "host:port" of the socket's remote end, or "unknown".
std::string peer_address(const SSL* ssl) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  auto* raw = reinterpret_cast<sockaddr*>(&address);  // NOLINT: the sockets API
  if (::getpeername(SSL_get_fd(ssl), raw, &length) != 0) return "unknown";
  char host[INET6_ADDRSTRLEN] = {};
  std::uint16_t port = 0;
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);  // NOLINT
    ::inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
    port = ntohs(v4->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);  // NOLINT
    ::inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
    port = ntohs(v6->sin6_port);
  } else {
    return "unknown";
  }
  return std::string(host) + ":" + std::to_string(port);
}

/// What the hooks keep per connection, from its first handshake step: the peer's address (read
/// while the socket is still connected) and whether its failure was counted.
struct Connection {
  std::string address;
  bool counted = false;
};

void free_connection(void* /*parent*/, void* state, CRYPTO_EX_DATA* /*data*/, int /*index*/,
                     long /*argl*/, void* /*argp*/) {  // NOLINT: OpenSSL's callback type
  delete static_cast<Connection*>(state);              // NOLINT: owned by the SSL object
}

int connection_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, free_connection);
  return index;
}

/// The connection's state, made at its first handshake step.
Connection& connection_of(SSL* ssl) {
  auto* state = static_cast<Connection*>(SSL_get_ex_data(ssl, connection_index()));
  if (state == nullptr) {
    state = new Connection{peer_address(ssl)};  // NOLINT: freed by free_connection
    SSL_set_ex_data(ssl, connection_index(), state);
    // CAF leaves Nagle's algorithm on: a small message (an answer, a credit) then waits for the
    // peer's delayed ACK, milliseconds per request/reply round. Off, as ZeroMQ does.
    const int on = 1;
    (void)::setsockopt(SSL_get_fd(ssl), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  }
  return *state;
}

/// Runs one OpenSSL I/O call with an empty error queue; when it was a handshake step that failed
/// with a TLS error, records the refusal.
template <class Call>
int tls_call(SSL* ssl, Call call) {
  const bool handshaking = SSL_is_init_finished(ssl) == 0;
  Connection* connection = handshaking ? &connection_of(ssl) : nullptr;
  if (handshaking && SSL_in_before(ssl) != 0 && SSL_is_server(ssl) == 0) {
    // A dial's first step: bind the certificate name expected at this address.
    const std::string name = tagflow::actors::expected_certificate(connection->address);
    if (!name.empty()) SSL_set1_host(ssl, name.c_str());
  }
  ERR_clear_error();
  const int result = call();
  if (connection == nullptr || result > 0) return result;
  // Only a TLS error is a refusal: not TLS at all, a certificate of another CA or name, an alert.
  // A peer that merely closes its socket is not counted: with TLS 1.3 a member that dials, is
  // answered and leaves at once can close before the server has read its last handshake message.
  if (SSL_get_error(ssl, result) != SSL_ERROR_SSL || connection->counted) return result;
  const unsigned long error = ERR_peek_error();  // NOLINT: OpenSSL's type
  if (ERR_GET_REASON(error) == SSL_R_UNEXPECTED_EOF_WHILE_READING) return result;  // a close
  connection->counted = true;
  const char* reason = ERR_reason_error_string(error);
  tagflow::actors::record_refused_handshake(connection->address, SSL_is_server(ssl) != 0,
                                            reason != nullptr ? reason : "TLS protocol error");
  return result;
}
}  // namespace

extern "C" {
int SSL_read(SSL* ssl, void* buffer, int size) {
  static const auto next = openssl_function<int (*)(SSL*, void*, int)>("SSL_read");
  return tls_call(ssl, [&] { return next(ssl, buffer, size); });
}
int SSL_write(SSL* ssl, const void* buffer, int size) {
  static const auto next = openssl_function<int (*)(SSL*, const void*, int)>("SSL_write");
  return tls_call(ssl, [&] { return next(ssl, buffer, size); });
}
int SSL_accept(SSL* ssl) {
  static const auto next = openssl_function<int (*)(SSL*)>("SSL_accept");
  return tls_call(ssl, [&] { return next(ssl); });
}
int SSL_connect(SSL* ssl) {
  static const auto next = openssl_function<int (*)(SSL*)>("SSL_connect");
  return tls_call(ssl, [&] { return next(ssl); });
}
}

namespace tagflow::actors {

std::unique_ptr<caf::actor_system_config> make_actor_system_config(
    const ActorSystemOptions& options, const std::optional<ActorCredentials>& tls) {
  auto config = std::make_unique<caf::actor_system_config>();
  config->add_message_types<caf::id_block::tagflow_control>();
  const std::size_t threads = options.worker_threads > 0
                                  ? options.worker_threads
                                  : std::max(1U, std::thread::hardware_concurrency());
  config->set("scheduler.max-threads", static_cast<std::int64_t>(threads));
  // From its 100 spins straight to its condition variable (the header says why).
  config->set("work-stealing.moderate-poll-attempts", std::int64_t{0});
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
                                          std::uint16_t port, const std::string& certificate) {
  if (system.has_openssl_manager()) {
    if (!certificate.empty()) expect_certificate(host, port, certificate);
    return caf::openssl::remote_actor(system, host, port);
  }
  return system.middleman().remote_actor(host, port);
}

}  // namespace tagflow::actors
