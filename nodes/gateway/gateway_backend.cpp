#include "nodes/gateway/gateway_backend.hpp"

#include <algorithm>

#include "nodes/multi_agent/agent_input.hpp"

namespace tagflow::gateway {

bool GatewayModel::serves_policy(int policy) const {
  return std::binary_search(hosted.begin(), hosted.end(), policy);
}

bool GatewayModel::serves_agent(std::uint32_t agent) const {
  return agent < agent_policy.size() && serves_policy(agent_policy[agent]);
}

namespace {

bool adds_agent_id(const GatewayModel& m, int policy) {
  const auto p = static_cast<std::size_t>(policy);
  return p < m.agent_id_input.size() && m.agent_id_input[p];
}

}  // namespace

std::uint32_t GatewayModel::input_size(int policy) const {
  return observation_size + (adds_agent_id(*this, policy) ? num_agents : 0);
}

void GatewayModel::write_input(int policy, std::uint32_t agent, const float* observation,
                               float* out) const {
  nodes::write_agent_input(adds_agent_id(*this, policy), observation_size, num_agents, agent,
                           observation, out);
}

GatewayModel make_gateway_model(const std::string& server, const cluster::MultiAgentConfig& agents,
                                const std::vector<int>& hosted) {
  GatewayModel m;
  m.server = server;
  m.env = agents.env;
  m.num_agents = static_cast<std::uint32_t>(agents.num_agents);
  m.observation_size = static_cast<std::uint32_t>(agents.observation_size);
  m.num_actions = static_cast<std::uint32_t>(agents.num_actions);
  m.time_input = agents.time_input;
  m.max_episode_steps = static_cast<std::uint32_t>(agents.max_episode_steps);
  for (const cluster::PolicyConfig& p : agents.policies) {
    m.policy_names.push_back(p.name);
    m.agent_id_input.push_back(p.agent_id_input);
  }
  m.agent_policy = agents.agent_policy;
  m.policy_server.assign(agents.policies.size(), "");
  m.hosted = hosted;
  std::sort(m.hosted.begin(), m.hosted.end());
  for (const int p : m.hosted) m.policy_server[static_cast<std::size_t>(p)] = server;
  return m;
}

}  // namespace tagflow::gateway
