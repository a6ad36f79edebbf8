// What a policy of a multi-agent cluster sees of one agent: the agent's observation, followed by
// the one-hot of its index when the policy serves several agents (PolicyConfig::agent_id_input).
// The multi-agent node builds its transitions with it and the inference server its forward
// passes, so the learner trains on exactly what the server evaluates.
#pragma once

#include <algorithm>
#include <cstddef>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::nodes {

/// Writes an input of `observation_size` floats from `observation`, followed (with
/// `agent_id_input`) by the one-hot of `agent` among `num_agents`.
inline void write_agent_input(bool agent_id_input, std::size_t observation_size,
                              std::size_t num_agents, std::size_t agent, const float* observation,
                              float* out) {
  std::copy(observation, observation + observation_size, out);
  if (!agent_id_input) return;
  std::fill(out + observation_size, out + observation_size + num_agents, 0.0F);
  out[observation_size + agent] = 1.0F;
}

/// Writes policy `policy`'s input for `agent` (config.input_size(policy) floats) to `out`, from
/// the agent's `observation` (config.observation_size floats).
inline void write_agent_input(const cluster::MultiAgentConfig& config, int policy, int agent,
                              const float* observation, float* out) {
  write_agent_input(config.policies[static_cast<std::size_t>(policy)].agent_id_input,
                    static_cast<std::size_t>(config.observation_size),
                    static_cast<std::size_t>(config.num_agents), static_cast<std::size_t>(agent),
                    observation, out);
}

}  // namespace tagflow::nodes
