#include "actors/actor_system_setup.hpp"

#include <cstdint>

#include <caf/io/middleman.hpp>

#include "actors/message_types.hpp"

namespace tagflow::actors {

std::unique_ptr<caf::actor_system_config> make_actor_system_config(
    const ActorSystemOptions& options) {
  auto config = std::make_unique<caf::actor_system_config>();
  config->add_message_types<caf::id_block::tagflow_control>();
  if (options.worker_threads > 0) {
    config->set("scheduler.max-threads", static_cast<std::int64_t>(options.worker_threads));
  }
  if (options.with_network) config->load<caf::io::middleman>();
  return config;
}

}  // namespace tagflow::actors
