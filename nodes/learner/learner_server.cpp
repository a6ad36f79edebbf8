#include "nodes/learner/learner_server.hpp"

#include <filesystem>

#include "rl/learning/torchscript_policy.hpp"

#include <stdexcept>

#include "nodes/learner/learner_params.hpp"
#include "nodes/network_input.hpp"

namespace tagflow::nodes {

LearnerConfig LearnerConfig::from_params(const NodeParams& params, std::uint64_t seed,
                                         int observation_size, int num_actions, int joint_agents) {
  const LearnerParams p = LearnerParams::read(params);
  if (p.value_decomposition && joint_agents < 2) {
    params.fail("algo",
                "vdn sums the Qs of the agents a policy serves: it needs a policy of a "
                "multi-agent file that serves two agents or more");
  }
  LearnerConfig c;
  if (p.value_decomposition) c.dqn.joint_agents = joint_agents;
  c.dqn.network = {observation_size, p.hidden, num_actions};
  c.dqn.learning_rate = p.learning_rate;
  c.gamma = p.gamma;
  c.dqn.target_update = p.target_update;
  c.dqn.double_dqn = p.double_dqn;
  c.dqn.max_grad_norm = p.max_grad_norm;
  c.dqn.negative_td_weight = p.negative_td_weight;
  c.publish_every = p.publish_every;
  c.eval_every = p.eval_every;
  c.eval_episodes = p.eval_episodes;
  c.eval_max_steps = p.eval_max_steps;
  c.dqn.seed = seed;
  c.dqn.validate();
  return c;
}

LearnerServer::LearnerServer(const LearnerConfig& config) : config_(config), learner_(config.dqn) {}

LearnerOutput LearnerServer::on_batch(const SampleBatchMessage& b) {
  const int obs_size = config_.dqn.row_size();
  if (static_cast<int>(b.observation_size) != obs_size) {
    throw std::invalid_argument("learner: batch observation size " +
                                std::to_string(b.observation_size) + ", network input " +
                                std::to_string(obs_size));
  }
  const std::size_t n = b.rows();
  batch_.size = static_cast<std::int64_t>(n);
  const std::size_t elements = n * static_cast<std::size_t>(obs_size);
  assign_network_input(b.observation_type, b.observations, b.observations_u8, elements,
                       batch_.observations);
  batch_.actions = b.actions;
  batch_.rewards = b.rewards;
  assign_network_input(b.observation_type, b.next_observations, b.next_observations_u8, elements,
                       batch_.next_observations);
  batch_.importance_weights = b.importance_weights;
  batch_.discounts.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    batch_.discounts[i] = b.terminated[i] != 0 ? 0.0F : static_cast<float>(config_.gamma);
  }
  learning::UpdateResult result = learner_.update(batch_);
  LearnerOutput out;
  out.loss = result.loss;
  out.priorities.keys = b.keys;
  out.priorities.priorities = std::move(result.priorities);
  if (result.updates % config_.publish_every == 0) out.weights = weights();
  return out;
}

WeightsMessage LearnerServer::weights() const {
  const learning::WeightsBuffer buffer = learner_.weights();
  WeightsMessage m;
  m.version = static_cast<std::uint64_t>(learner_.updates());
  m.values = buffer.values;
  return m;
}

void LearnerServer::export_torchscript(const std::string& path) const {
  const std::filesystem::path file(path);
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  learning::export_torchscript(config_.dqn.network, weights().values, path);
}

void LearnerServer::save(StateWriter& out) const {
  const learning::LearnerState state = learner_.state();
  out.string(state.network);
  out.i64(state.updates);
  out.i64(state.adam_step);
  out.pod_vector(state.online);
  out.pod_vector(state.target);
  out.pod_vector(state.adam_m);
  out.pod_vector(state.adam_v);
}

void LearnerServer::load(StateReader& in) {
  learning::LearnerState state;
  state.network = in.string();
  state.updates = in.i64();
  state.adam_step = in.i64();
  state.online = in.pod_vector<float>();
  state.target = in.pod_vector<float>();
  state.adam_m = in.pod_vector<float>();
  state.adam_v = in.pod_vector<float>();
  learner_.restore(state);
}

}  // namespace tagflow::nodes
