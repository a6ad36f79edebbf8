#include "actors/actor_system_setup.hpp"

#include <cstdint>

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/openssl/remote_actor.hpp>

#include "actors/message_types.hpp"

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
