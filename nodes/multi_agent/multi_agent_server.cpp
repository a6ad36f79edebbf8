#include "nodes/multi_agent/multi_agent_server.hpp"

#include <algorithm>
#include <stdexcept>

#include "nodes/multi_agent/agent_input.hpp"
#include "rl/envs/random.hpp"
#include "rl/envs/registry.hpp"

namespace tagflow::nodes {
namespace {

constexpr std::uint64_t kRandomPolicySalt = 0x52414e44ULL;  // "RAND"
constexpr std::uint64_t kEvalNoiseSalt = 0x4e4f4953ULL;     // "NOIS"

}  // namespace

MultiAgentNodeConfig MultiAgentNodeConfig::from_params(const NodeParams& params,
                                                       const cluster::MultiAgentConfig& agents,
                                                       std::uint64_t seed, std::uint64_t eval_seed,
                                                       std::uint32_t index) {
  params.check_known({"env", "epsilon_start", "epsilon_end", "epsilon_decay_steps", "eval_every",
                      "eval_episodes", "eval_epsilon", "time_input", "reward_scale",
                      "greedy_episodes", "team_reward"});
  MultiAgentNodeConfig c;
  c.agents = agents;
  if (params.get_string("env", agents.env) != agents.env) {
    params.fail("env", "every multi_agent node of a file steps the same env (" + agents.env + ")");
  }
  c.epsilon_start = params.get_double("epsilon_start", c.epsilon_start, 0.0, 1.0);
  c.epsilon_end = params.get_double("epsilon_end", c.epsilon_end, 0.0, 1.0);
  c.epsilon_decay_steps = params.get_int("epsilon_decay_steps", c.epsilon_decay_steps, 1);
  c.eval_every = params.get_int("eval_every", c.eval_every, 0);
  c.eval_episodes = static_cast<int>(params.get_int("eval_episodes", c.eval_episodes, 0));
  c.eval_epsilon = params.get_double("eval_epsilon", c.eval_epsilon, 0.0, 1.0);
  c.time_input = params.get_bool("time_input", c.time_input);
  c.reward_scale = params.get_double("reward_scale", c.reward_scale, 1e-6, 1e6);
  c.greedy_episodes = params.get_double("greedy_episodes", c.greedy_episodes, 0.0, 1.0);
  c.team_reward = params.get_bool("team_reward", c.team_reward);
  c.seed = seed;
  c.eval_seed = eval_seed;
  c.index = index;
  return c;
}

MultiAgentServer::MultiAgentServer(const MultiAgentNodeConfig& config)
    : config_(config), rng_(config.seed) {
  if (config_.agents.empty()) {
    throw std::invalid_argument("multi_agent: the cluster file names no policies");
  }
  train_.env = envs::make_multi_agent_env(config_.agents.env);
  eval_.env = envs::make_multi_agent_env(config_.agents.env);
  const envs::MultiAgentSpec& spec = train_.env->spec();
  env_width_ = spec.observation_space.size();
  observation_size_ = env_width_ + (config_.time_input ? 1 : 0);
  if (observation_size_ != static_cast<std::size_t>(config_.agents.observation_size)) {
    throw std::invalid_argument("multi_agent: the policies' observations have " +
                                std::to_string(config_.agents.observation_size) +
                                " floats, this node's " + std::to_string(observation_size_) +
                                " (time_input must be the same for the file)");
  }
  const auto n = static_cast<std::size_t>(spec.num_agents);
  if (config_.time_input) env_rows_.resize(n * env_width_);
  for (Run* run : {&train_, &eval_}) {
    run->observations.resize(n * observation_size_);
    run->dones.assign(n, 0);
  }
  next_observations_.resize(n * observation_size_);
  rewards_.resize(n);
  next_dones_.resize(n);
  greedy_.assign(n, 0);
  actions_.assign(n, 0);
  versions_.assign(n, 0);
  train_.env->reset(config_.seed, env_rows(train_.observations));
  with_time(0, train_.observations);
  draw_greedy_episode();
  if (config_.eval_episodes > 0) random_ = play_random();
  next_eval_ = config_.eval_every;
  reset_for_answers();
}

envs::Span<float> MultiAgentServer::env_rows(std::vector<float>& out) {
  return config_.time_input ? envs::Span<float>(env_rows_) : envs::Span<float>(out);
}

void MultiAgentServer::with_time(std::int64_t length, std::vector<float>& out) const {
  if (!config_.time_input) return;
  const float elapsed = static_cast<float>(
      static_cast<double>(length) / static_cast<double>(train_.env->spec().max_episode_steps));
  for (std::size_t a = 0; a < static_cast<std::size_t>(num_agents()); ++a) {
    const float* row = env_rows_.data() + a * env_width_;
    float* to = out.data() + a * observation_size_;
    std::copy(row, row + env_width_, to);
    to[env_width_] = elapsed;
  }
}

void MultiAgentServer::draw_greedy_episode() {
  if (config_.greedy_episodes > 0.0)
    greedy_episode_ = envs::uniform01(rng_) < config_.greedy_episodes;
}

double MultiAgentServer::epsilon() const {
  if (evaluating_) return config_.eval_epsilon;
  if (greedy_episode_) return 0.0;
  const double progress = std::min(
      1.0, static_cast<double>(joint_steps_) / static_cast<double>(config_.epsilon_decay_steps));
  return config_.epsilon_start + (config_.epsilon_end - config_.epsilon_start) * progress;
}

AgentObservationsMessage MultiAgentServer::observations(const std::vector<int>& policies) const {
  AgentObservationsMessage m;
  observations(policies, m);
  return m;
}

void MultiAgentServer::observations(const std::vector<int>& policies,
                                    AgentObservationsMessage& m) const {
  m.source = config_.index;
  m.observation_size = static_cast<std::uint32_t>(observation_size_);
  const std::vector<float>& obs = active().observations;
  m.agents.clear();
  m.policies.clear();
  m.agents.reserve(static_cast<std::size_t>(num_agents()));
  m.policies.reserve(static_cast<std::size_t>(num_agents()));
  for (int a = 0; a < num_agents(); ++a) {
    const int policy = config_.agents.agent_policy[static_cast<std::size_t>(a)];
    if (!std::binary_search(policies.begin(), policies.end(), policy)) continue;
    m.agents.push_back(static_cast<std::uint32_t>(a));
    m.policies.push_back(static_cast<std::uint32_t>(policy));
  }
  if (m.agents.size() == static_cast<std::size_t>(num_agents())) {  // every row, in one copy
    m.observations.assign(obs.begin(), obs.end());
    return;
  }
  m.observations.clear();
  m.observations.reserve(m.agents.size() * observation_size_);
  for (const std::uint32_t a : m.agents) {
    const float* row = obs.data() + static_cast<std::size_t>(a) * observation_size_;
    m.observations.insert(m.observations.end(), row, row + observation_size_);
  }
}

bool MultiAgentServer::on_actions(const AgentActionsMessage& answer, std::string* why) {
  const auto fail = [&](const std::string& message) {
    if (why != nullptr) *why = message;
    return false;
  };
  if (!consistent(answer)) return fail("inconsistent row counts");
  const std::int64_t num_actions = config_.agents.num_actions;
  for (std::size_t i = 0; i < answer.rows(); ++i) {
    const std::uint32_t agent = answer.agents[i];
    if (agent >= static_cast<std::uint32_t>(num_agents())) {
      return fail("no agent " + std::to_string(agent));
    }
    const int policy = config_.agents.agent_policy[agent];
    if (answer.policies[i] != static_cast<std::uint32_t>(policy)) {
      return fail("agent " + std::to_string(agent) + " answered by policy " +
                  std::to_string(answer.policies[i]) + ", its policy is " + std::to_string(policy));
    }
    if (answer.actions[i] < 0 || answer.actions[i] >= num_actions) {
      return fail("action " + std::to_string(answer.actions[i]) + " out of range for agent " +
                  std::to_string(agent));
    }
  }
  for (std::size_t i = 0; i < answer.rows(); ++i) {
    const std::uint32_t agent = answer.agents[i];
    greedy_[agent] = answer.actions[i];
    versions_[agent] = answer.versions[i];
    if (!answered_[agent]) {
      answered_[agent] = true;
      --pending_;
    }
  }
  return true;
}

std::uint64_t MultiAgentServer::weights_version() const {
  return versions_.empty() ? 0 : *std::min_element(versions_.begin(), versions_.end());
}

void MultiAgentServer::reset_for_answers() {
  answered_.assign(static_cast<std::size_t>(num_agents()), false);
  pending_ = num_agents();
}

void MultiAgentServer::append_transition(TransitionsMessage& out, int policy, int agent,
                                         const float* next, bool terminated) const {
  const auto width = static_cast<std::size_t>(config_.agents.input_size(policy));
  const auto a = static_cast<std::size_t>(agent);
  const std::size_t at = out.observations.size();
  out.observations.resize(at + width);
  out.next_observations.resize(at + width);
  write_agent_input(config_.agents, policy, agent,
                    train_.observations.data() + a * observation_size_,
                    out.observations.data() + at);
  write_agent_input(config_.agents, policy, agent, next, out.next_observations.data() + at);
  out.actions.push_back(actions_[a]);
  float reward = rewards_[a];
  if (config_.team_reward) {
    reward = 0.0F;
    for (const float r : rewards_) reward += r;
  }
  out.rewards.push_back(static_cast<float>(static_cast<double>(reward) * config_.reward_scale));
  out.terminated.push_back(terminated ? 1 : 0);
}

std::vector<TransitionsMessage> MultiAgentServer::step(bool transitions) {
  if (!ready())
    throw std::logic_error("multi_agent: a joint step before every agent has an action");
  Run& run = active();
  choose_actions();
  const envs::MultiAgentStepInfo info =
      run.env->step(envs::Span<const std::int64_t>(actions_), env_rows(next_observations_),
                    envs::Span<float>(rewards_), envs::Span<std::uint8_t>(next_dones_));
  ++run.length;
  with_time(run.length, next_observations_);
  run.collisions += info.collisions;
  for (const float r : rewards_) run.episode_return += static_cast<double>(r);

  std::vector<TransitionsMessage> out;
  if (!evaluating_) {
    ++joint_steps_;
    collisions_ += info.collisions;
  }
  if (!evaluating_ && transitions) out = step_transitions(run);
  run.observations.swap(next_observations_);
  run.dones = next_dones_;
  if (info.episode_done) end_episode(run);
  if (!evaluating_ && !finishing_ && config_.eval_every > 0 && joint_steps_ >= next_eval_) {
    next_eval_ += config_.eval_every;
    start_evaluation();
  }
  reset_for_answers();
  return out;
}

void MultiAgentServer::choose_actions() {
  const double eps = epsilon();
  // Evaluation noise comes from its own generator; without it evaluations draw from the node's
  // (as they always did: ε = 0 never acts on the draw).
  std::mt19937_64& rng = evaluating_ && config_.eval_epsilon > 0.0 ? eval_rng_ : rng_;
  for (std::size_t a = 0; a < actions_.size(); ++a) {
    actions_[a] = envs::uniform01(rng) < eps ? envs::uniform_index(rng, config_.agents.num_actions)
                                             : greedy_[a];
  }
}

void MultiAgentServer::append_joint_transition(TransitionsMessage& out, int policy, const Run& run,
                                               bool time_limit) const {
  const cluster::PolicyConfig& p = config_.agents.policies[static_cast<std::size_t>(policy)];
  const auto width = static_cast<std::size_t>(config_.agents.input_size(policy));
  const std::size_t k = p.agents.size();
  bool any_alive = false;
  for (const int a : p.agents) any_alive = any_alive || run.dones[static_cast<std::size_t>(a)] == 0;
  if (!any_alive) return;  // every agent of the group was done before this step
  const std::size_t at = out.observations.size();
  out.observations.resize(at + k * (width + 1));
  out.next_observations.resize(at + k * (width + 1));
  float* now = out.observations.data() + at;
  float* next = out.next_observations.data() + at;
  std::int64_t code = 0, scale = 1;
  float reward = 0.0F;
  bool all_ended = true;
  for (std::size_t j = 0; j < k; ++j) {
    const auto a = static_cast<std::size_t>(p.agents[j]);
    write_agent_input(config_.agents, policy, p.agents[j],
                      run.observations.data() + a * observation_size_, now + j * width);
    write_agent_input(config_.agents, policy, p.agents[j],
                      next_observations_.data() + a * observation_size_, next + j * width);
    // Alive before: the agent acted. Alive after: it acts again, or the time limit cut it off
    // (the value of its state then still counts).
    const bool ended = next_dones_[a] != 0 && !time_limit;
    now[k * width + j] = run.dones[a] == 0 ? 1.0F : 0.0F;
    next[k * width + j] = run.dones[a] == 0 && !ended ? 1.0F : 0.0F;
    all_ended = all_ended && (run.dones[a] != 0 || ended);
    code += actions_[a] * scale;
    scale *= config_.agents.num_actions;
    reward += rewards_[a];
    out.weights_version = std::max(out.weights_version, versions_[a]);
  }
  out.actions.push_back(code);
  out.rewards.push_back(static_cast<float>(static_cast<double>(reward) * config_.reward_scale));
  out.terminated.push_back(all_ended ? 1 : 0);
}

std::vector<TransitionsMessage> MultiAgentServer::step_transitions(const Run& run) const {
  std::vector<TransitionsMessage> out(config_.agents.policies.size());
  // A done agent's episode ended in a terminal state unless the time limit ended it.
  const bool time_limit = run.length >= run.env->spec().max_episode_steps;
  for (std::size_t p = 0; p < out.size(); ++p) {
    const int policy = static_cast<int>(p);
    const int width = config_.agents.input_size(policy);
    const cluster::PolicyConfig& config = config_.agents.policies[p];
    if (config.joint_transitions) {
      out[p].observation_size =
          static_cast<std::uint32_t>(static_cast<int>(config.agents.size()) * (width + 1));
      append_joint_transition(out[p], policy, run, time_limit);
    } else {
      out[p].observation_size = static_cast<std::uint32_t>(width);
    }
  }
  for (int a = 0; a < num_agents(); ++a) {
    const auto i = static_cast<std::size_t>(a);
    if (run.dones[i] != 0) continue;  // done before this step: its action was ignored
    const int policy = config_.agents.agent_policy[i];
    if (config_.agents.policies[static_cast<std::size_t>(policy)].joint_transitions) continue;
    TransitionsMessage& m = out[static_cast<std::size_t>(policy)];
    m.weights_version = std::max(m.weights_version, versions_[i]);
    append_transition(m, policy, a, next_observations_.data() + i * observation_size_,
                      next_dones_[i] != 0 && !time_limit);
  }
  return out;
}

void MultiAgentServer::end_episode(Run& run) {
  if (evaluating_) {
    ++eval_episode_;
    eval_return_sum_ += run.episode_return;
    eval_collision_sum_ += static_cast<double>(run.collisions);
    if (run.collisions == 0) ++eval_successes_;
    eval_length_sum_ += static_cast<double>(run.length);
  } else {
    ++episodes_;
    finished_.returns.push_back(run.episode_return);
    finished_.lengths.push_back(run.length);
    finished_.collisions.push_back(run.collisions);
  }
  run.episode_return = 0.0;
  run.length = run.collisions = 0;
  if (evaluating_ && eval_episode_ >= config_.eval_episodes) {
    const double n = static_cast<double>(config_.eval_episodes);
    last_evaluation_ = {eval_return_sum_ / n,
                        eval_collision_sum_ / n,
                        eval_length_sum_ / n,
                        config_.eval_episodes,
                        eval_successes_ / n,
                        joint_steps_,
                        finishing_};
    evaluations_.push_back(last_evaluation_.mean_return);
    evaluating_ = false;
    return;
  }
  if (evaluating_) {
    run.env->reset(config_.eval_seed + static_cast<std::uint64_t>(eval_episode_),
                   env_rows(run.observations));
  } else {
    run.env->reset(std::nullopt, env_rows(run.observations));
    draw_greedy_episode();
  }
  with_time(0, run.observations);
  run.dones.assign(run.dones.size(), 0);
}

void MultiAgentServer::start_evaluation() {
  if (config_.eval_episodes <= 0) return;
  evaluating_ = true;
  eval_rng_.seed(config_.eval_seed ^ kEvalNoiseSalt);
  eval_episode_ = 0;
  eval_return_sum_ = eval_collision_sum_ = eval_length_sum_ = 0.0;
  eval_successes_ = 0;
  eval_.episode_return = 0.0;
  eval_.length = eval_.collisions = 0;
  eval_.env->reset(config_.eval_seed, env_rows(eval_.observations));
  with_time(0, eval_.observations);
  eval_.dones.assign(eval_.dones.size(), 0);
}

void MultiAgentServer::finish() {
  if (finishing_) return;
  finishing_ = true;
  if (!evaluating_) start_evaluation();
}

MultiAgentServer::Finished MultiAgentServer::take_finished() {
  Finished out;
  // Asked after every joint step; episodes end far more rarely.
  if (finished_.returns.empty() && finished_.lengths.empty() && finished_.collisions.empty()) {
    return out;
  }
  std::swap(out, finished_);
  return out;
}

EpisodeFigures MultiAgentServer::play_random() {
  std::mt19937_64 rng(config_.eval_seed ^ kRandomPolicySalt);
  const auto n = static_cast<std::size_t>(num_agents());
  std::vector<float> obs(n * env_width_), rewards(n);
  std::vector<std::uint8_t> dones(n);
  std::vector<std::int64_t> actions(n);
  EpisodeFigures figures;
  figures.episodes = config_.eval_episodes;
  for (int k = 0; k < config_.eval_episodes; ++k) {
    eval_.env->reset(config_.eval_seed + static_cast<std::uint64_t>(k), envs::Span<float>(obs));
    std::int64_t collisions = 0;
    for (bool done = false; !done;) {
      for (auto& action : actions) action = envs::uniform_index(rng, config_.agents.num_actions);
      const envs::MultiAgentStepInfo info =
          eval_.env->step(envs::Span<const std::int64_t>(actions), envs::Span<float>(obs),
                          envs::Span<float>(rewards), envs::Span<std::uint8_t>(dones));
      for (const float r : rewards) figures.mean_return += static_cast<double>(r);
      figures.collisions_per_episode += info.collisions;
      collisions += info.collisions;
      figures.mean_length += 1.0;
      done = info.episode_done;
    }
    if (collisions == 0) figures.success_rate += 1.0;
  }
  const double episodes = std::max(1, config_.eval_episodes);
  figures.mean_return /= episodes;
  figures.collisions_per_episode /= episodes;
  figures.mean_length /= episodes;
  figures.success_rate /= episodes;
  return figures;
}

}  // namespace tagflow::nodes
