// What a policy of a multi-agent cluster sees of one agent: the agent's observation, followed by
// the one-hot of its index when the policy serves several agents (PolicyConfig::agent_id_input).
// The multi-agent node builds its transitions with it and the inference server its forward
// passes, so the learner trains on exactly what the server evaluates.
#pragma once

#include <algorithm>
#include <cstddef>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::nodes {

/// Writes policy `policy`'s input for `agent` (config.input_size(policy) floats) to `out`, from
/// the agent's `observation` (config.observation_size floats).
inline void write_agent_input(const cluster::MultiAgentConfig& config, int policy, int agent,
                              const float* observation, float* out) {
  const auto size = static_cast<std::size_t>(config.observation_size);
  std::copy(observation, observation + size, out);
  if (!config.policies[static_cast<std::size_t>(policy)].agent_id_input) return;
  std::fill(out + size, out + size + static_cast<std::size_t>(config.num_agents), 0.0F);
  out[size + static_cast<std::size_t>(agent)] = 1.0F;
}

}  // namespace tagflow::nodes
