// The environments tagflow knows by id, as Gymnasium's registry: make an env or a batch by name.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "rl/envs/env.hpp"
#include "rl/envs/multi_agent_env.hpp"

namespace tagflow::envs {

class EnvBatch;

/// One registered environment id.
struct EnvEntry {
  std::string id;
  std::string description;
  bool multi_agent = false;  ///< built with make_multi_agent_env, not make_env
};

/// Every registered id, single-agent first, in a fixed order.
const std::vector<EnvEntry>& registered_envs();

/// A new env `id`. Throws std::invalid_argument naming the known ids if `id` is unknown or
/// multi-agent.
std::unique_ptr<Env> make_env(const std::string& id);

/// A new multi-agent env `id` (TrafficJunction4-v1, ...). Throws std::invalid_argument naming the
/// known multi-agent ids if `id` is unknown or single-agent.
std::unique_ptr<MultiAgentEnv> make_multi_agent_env(const std::string& id);

/// n copies of env `id` in one contiguous batch (used by VectorEnv). Same errors as make_env.
std::unique_ptr<EnvBatch> make_env_batch(const std::string& id, std::size_t n);

}  // namespace tagflow::envs
