#include "nodes/gateway/episode_experience.hpp"

#include <algorithm>

namespace tagflow::gateway {

EpisodeExperience::EpisodeExperience(const GatewayModel& model)
    : model_(&model), steps_(model.num_agents) {}

std::string EpisodeExperience::check(const GatewayRequest& request) const {
  if (request.rows != 1) {
    return "a logged episode takes one observation per agent (rows " +
           std::to_string(request.rows) + ")";
  }
  const auto unopened = [&](std::uint32_t agent, const char* what) -> std::string {
    if (agent < steps_.size() && steps_[agent].open) return {};
    return std::string(what) + " for agent " + std::to_string(agent) +
           ", which has no step open in this logged episode (no act of the episode held its "
           "observation since its last done)";
  };
  for (const auto& [agent, reward] : request.rewards) {
    if (std::string why = unopened(agent, "rewards"); !why.empty()) return why;
  }
  for (const auto& [agent, done] : request.dones) {
    if (std::string why = unopened(agent, "dones"); !why.empty()) return why;
  }
  return {};
}

void EpisodeExperience::finish(std::uint32_t agent, const float* next, bool terminated,
                               std::vector<nodes::TransitionsMessage>& out) {
  Step& step = steps_[agent];
  const int policy = model_->agent_policy[agent];
  nodes::TransitionsMessage& m = out[static_cast<std::size_t>(policy)];
  const std::uint32_t width = model_->input_size(policy);
  m.observation_size = width;
  m.weights_version = std::max(m.weights_version, step.version);
  const std::size_t at = m.observations.size();
  m.observations.resize(at + width);
  m.next_observations.resize(at + width);
  model_->write_input(policy, agent, step.observation.data(), m.observations.data() + at);
  model_->write_input(policy, agent, next != nullptr ? next : step.observation.data(),
                      m.next_observations.data() + at);
  m.actions.push_back(step.action);
  m.rewards.push_back(static_cast<float>(step.reward));
  m.terminated.push_back(terminated ? 1 : 0);
  step.open = false;
  step.reward = 0.0;
}

std::size_t EpisodeExperience::complete(const GatewayRequest& request, bool end,
                                        std::vector<nodes::TransitionsMessage>& out) {
  out.resize(std::max(out.size(), model_->policy_names.size()));
  for (const auto& [agent, reward] : request.rewards) steps_[agent].reward += reward;
  const std::size_t width = model_->observation_size;
  std::vector<const float*> next(steps_.size(), nullptr);
  for (std::size_t k = 0; k < request.agents.size(); ++k) {
    next[request.agents[k]] = request.observations.data() + k * width;
  }
  std::vector<bool> done(steps_.size(), false);
  for (const auto& [agent, d] : request.dones) done[agent] = done[agent] || d;
  std::size_t made = 0;
  for (std::uint32_t a = 0; a < steps_.size(); ++a) {
    if (!steps_[a].open) continue;
    if (done[a] || end) {
      finish(a, next[a], true, out);
    } else if (next[a] != nullptr) {
      finish(a, next[a], false, out);
    } else {
      continue;
    }
    ++made;
  }
  return made;
}

void EpisodeExperience::open(const std::vector<std::uint32_t>& agents,
                             const std::vector<float>& observations,
                             const std::vector<std::int64_t>& actions,
                             const std::vector<std::uint64_t>& versions) {
  const std::size_t width = model_->observation_size;
  for (std::size_t k = 0; k < agents.size(); ++k) {
    Step& step = steps_[agents[k]];
    const float* obs = observations.data() + k * width;
    step.observation.assign(obs, obs + width);
    step.action = actions.at(k);
    step.version = versions.at(k);
    step.reward = 0.0;
    step.open = true;
  }
}

std::size_t EpisodeExperience::open_steps() const {
  return static_cast<std::size_t>(
      std::count_if(steps_.begin(), steps_.end(), [](const Step& s) { return s.open; }));
}

}  // namespace tagflow::gateway
