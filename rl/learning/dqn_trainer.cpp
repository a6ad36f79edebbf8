#include "rl/learning/dqn_trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>

#include "rl/envs/registry.hpp"
#include "rl/learning/dqn_learner.hpp"
#include "rl/learning/n_step.hpp"
#include "rl/learning/policy_network.hpp"
#include "rl/replay/table.hpp"

namespace tagflow::learning {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kRecentEpisodes = 20;
constexpr double kMinPriority = 1e-6;
// Seeds of the evaluation episodes: far from the training episodes' seeds.
constexpr std::uint64_t kIntervalEvalSeed = 1000003;
constexpr std::uint64_t kFinalEvalSeed = 2000003;
constexpr std::uint64_t kConfirmEvalSeed = 3000017;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void validate(const TrainConfig& config) {
  auto require = [](bool ok, const char* field) {
    if (!ok) throw std::invalid_argument(std::string("TrainConfig.") + field + " is out of range");
  };
  require(config.total_env_steps > 0, "total_env_steps");
  require(config.learning_starts >= 0, "learning_starts");
  require(config.train_every > 0, "train_every");
  require(config.updates_per_round > 0, "updates_per_round");
  require(config.batch_size > 0, "batch_size");
  require(config.replay_capacity >= config.batch_size, "replay_capacity");
  require(config.n_step >= 1, "n_step");
  require(config.gamma >= 0.0 && config.gamma <= 1.0, "gamma");
  require(config.eval_episodes > 0, "eval_episodes");
  require(config.eval_interval_episodes > 0, "eval_interval_episodes");
  require(config.final_learning_rate_fraction > 0.0, "final_learning_rate_fraction");
}

/// Copies a sampled batch into the learner's layout: action rows are (action, n-step horizon).
void to_transition_batch(const replay::SampledBatch& sampled, std::size_t observation_size,
                         double gamma, bool with_weights, TransitionBatch* batch) {
  const std::size_t n = sampled.batch_size;
  batch->size = static_cast<std::int64_t>(n);
  batch->observations.resize(n * observation_size);
  batch->next_observations.resize(n * observation_size);
  std::memcpy(batch->observations.data(), sampled.observations.data(),
              batch->observations.size() * sizeof(float));
  std::memcpy(batch->next_observations.data(), sampled.next_observations.data(),
              batch->next_observations.size() * sizeof(float));
  const std::int64_t* actions = sampled.actions_as<std::int64_t>();
  batch->actions.resize(n);
  batch->rewards.assign(sampled.rewards.begin(), sampled.rewards.end());
  batch->discounts.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    batch->actions[i] = actions[2 * i];
    const auto horizon = static_cast<double>(actions[2 * i + 1]);
    batch->discounts[i] =
        sampled.dones[i] != 0 ? 0.0F : static_cast<float>(std::pow(gamma, horizon));
  }
  if (with_weights) {
    batch->importance_weights.assign(sampled.weights.begin(), sampled.weights.end());
  } else {
    batch->importance_weights.clear();
  }
}

}  // namespace

double evaluate_greedy(const std::string& env_id, const MlpSpec& network,
                       const WeightsBuffer& weights, int episodes, std::uint64_t seed,
                       std::vector<double>* returns) {
  const std::unique_ptr<envs::Env> env = envs::make_env(env_id);
  PolicyNetwork policy(network);
  policy.load_weights(weights);
  std::vector<float> observation(env->spec().observation_space.size());
  double total = 0.0;
  for (int episode = 0; episode < episodes; ++episode) {
    env->reset(seed + static_cast<std::uint64_t>(episode), observation);
    double episode_return = 0.0;
    while (true) {
      const envs::StepResult step =
          env->step(envs::Action::discrete(policy.act_one(observation.data())), observation);
      episode_return += static_cast<double>(step.reward);
      if (step.terminated || step.truncated) break;
    }
    if (returns != nullptr) returns->push_back(episode_return);
    total += episode_return;
  }
  return total / episodes;
}

TrainSummary train_dqn(TrainConfig config, const ProgressCallback& progress) {
  validate(config);
  const Clock::time_point start = Clock::now();
  const std::unique_ptr<envs::Env> env = envs::make_env(config.env_id);
  const envs::EnvSpec& spec = env->spec();
  if (spec.action_space.kind != envs::Space::Kind::kDiscrete) {
    throw std::invalid_argument(config.env_id + ": DQN needs a discrete action space, not " +
                                spec.action_space.to_string());
  }
  if (spec.observation_space.dtype != envs::DType::kFloat32) {
    throw std::invalid_argument(config.env_id + ": DQN here needs float32 observations");
  }
  const std::size_t obs_size = spec.observation_space.size();
  const std::int64_t num_actions = spec.action_space.n;
  config.dqn.network.input_size = static_cast<int>(obs_size);
  config.dqn.network.output_size = static_cast<int>(num_actions);
  config.dqn.seed = config.seed;
  DqnLearner learner(config.dqn);
  const double base_learning_rate = config.dqn.learning_rate;

  replay::TableConfig table_config;
  table_config.spec.observation = {replay::DType::kFloat32, {static_cast<std::int64_t>(obs_size)}};
  table_config.spec.action = {replay::DType::kInt64, {2}};  // (action, n-step horizon)
  table_config.max_items = config.replay_capacity;
  table_config.selector =
      config.prioritized ? replay::SelectorKind::kPrioritized : replay::SelectorKind::kUniform;
  table_config.priority_exponent = config.priority_exponent;
  table_config.binary_sum_tree = config.binary_sum_tree;
  table_config.rate_limiter.min_size_to_sample = config.batch_size;
  table_config.seed = config.seed * 0x9E3779B97F4A7C15ULL + 1;
  replay::Table table(table_config);

  NStepAccumulator accumulator(config.n_step, config.gamma);
  std::mt19937_64 explore(config.seed * 0xD1B54A32D192ED03ULL + 2);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::uniform_int_distribution<std::int64_t> random_action(0, num_actions - 1);

  std::vector<float> observation(obs_size);
  std::vector<float> next_observation(obs_size);
  std::vector<NStepTransition> ready;
  replay::SampledBatch sampled;
  TransitionBatch batch;
  std::deque<double> recent_returns;
  double episode_return = 0.0;
  double max_priority = 1.0;
  double loss_sum = 0.0;
  std::int64_t loss_count = 0;
  std::int64_t episodes = 0;

  TrainSummary summary;
  summary.env_id = config.env_id;
  summary.seed = config.seed;
  summary.network = config.dqn.network;
  summary.policy = "final";
  double best_eval = -1e300;
  WeightsBuffer best_weights;
  double last_eval = -1.0;

  TrainProgress report;
  Clock::time_point last_report = start;
  std::int64_t last_report_steps = 0;
  std::int64_t last_report_updates = 0;
  auto emit_progress = [&](std::int64_t steps) {
    const double elapsed = std::max(seconds_since(last_report), 1e-9);
    report.env_steps = steps;
    report.updates = learner.updates();
    report.episodes = episodes;
    report.steps_per_second = static_cast<double>(steps - last_report_steps) / elapsed;
    report.updates_per_second =
        static_cast<double>(learner.updates() - last_report_updates) / elapsed;
    report.recent_return = recent_returns.empty() ? 0.0
                                                  : std::accumulate(recent_returns.begin(),
                                                                    recent_returns.end(), 0.0) /
                                                        static_cast<double>(recent_returns.size());
    report.epsilon = config.epsilon.at(steps);
    report.loss = loss_count > 0 ? loss_sum / static_cast<double>(loss_count) : 0.0;
    report.last_eval_return = last_eval;
    loss_sum = 0.0;
    loss_count = 0;
    last_report = Clock::now();
    last_report_steps = steps;
    last_report_updates = learner.updates();
    if (progress) progress(report);
  };

  env->reset(config.seed, observation);
  std::int64_t step = 0;
  while (step < config.total_env_steps) {
    const double epsilon = config.epsilon.at(step);
    const std::int64_t action = coin(explore) < epsilon ? random_action(explore)
                                                        : learner.greedy_action(observation.data());
    const envs::StepResult result = env->step(envs::Action::discrete(action), next_observation);
    ++step;
    episode_return += static_cast<double>(result.reward);

    ready.clear();
    accumulator.push(observation, action, result.reward, next_observation, result.terminated,
                     result.truncated, &ready);
    for (const NStepTransition& t : ready) {
      const std::vector<std::int64_t> action_row = {t.action, t.horizon};
      replay::Transition item;
      item.observation = replay::bytes_of(t.observation);
      item.action = replay::bytes_of(action_row);
      item.reward = t.reward;
      item.done = t.discount == 0.0F;
      item.next_observation = replay::bytes_of(t.next_observation);
      const replay::ReplayStatus status =
          table.try_insert(item, config.prioritized ? max_priority : 1.0);
      if (status != replay::ReplayStatus::kOk) {
        throw std::runtime_error(std::string("replay insert failed: ") + replay::to_string(status));
      }
    }

    if (result.terminated || result.truncated) {
      recent_returns.push_back(episode_return);
      if (recent_returns.size() > kRecentEpisodes) recent_returns.pop_front();
      ++episodes;
      episode_return = 0.0;
      env->reset(std::nullopt, observation);
    } else {
      observation.swap(next_observation);
    }

    if (step >= config.learning_starts && step % config.train_every == 0 &&
        table.size() >= config.batch_size) {
      const double fraction =
          static_cast<double>(step) / static_cast<double>(config.total_env_steps);
      learner.set_learning_rate(base_learning_rate *
                                (1.0 - (1.0 - config.final_learning_rate_fraction) * fraction));
      replay::SampleRequest request;
      request.batch_size = config.batch_size;
      request.importance_beta =
          config.importance_beta_start + (1.0 - config.importance_beta_start) * fraction;
      for (int u = 0; u < config.updates_per_round; ++u) {
        if (table.try_sample(request, sampled) != replay::ReplayStatus::kOk) break;
        to_transition_batch(sampled, obs_size, config.gamma, config.prioritized, &batch);
        const UpdateResult update = learner.update(batch);
        loss_sum += update.loss;
        ++loss_count;
        if (config.prioritized) {
          std::vector<double> priorities(update.priorities.size());
          for (std::size_t i = 0; i < priorities.size(); ++i) {
            priorities[i] = static_cast<double>(update.priorities[i]) + kMinPriority;
            max_priority = std::max(max_priority, priorities[i]);
          }
          (void)table.update_priorities(sampled.keys, priorities);
        }
      }
    }

    if (config.eval_every > 0 && step % config.eval_every == 0) {
      const WeightsBuffer current = learner.weights();
      last_eval =
          evaluate_greedy(config.env_id, config.dqn.network, current, config.eval_interval_episodes,
                          kIntervalEvalSeed + static_cast<std::uint64_t>(step));
      // A policy at the threshold must also reach it in every episode of a second evaluation
      // on other episodes before it counts as solved; its score is the mean over both.
      bool solved = false;
      if (spec.reward_threshold && last_eval >= *spec.reward_threshold) {
        std::vector<double> returns;
        const double confirmation = evaluate_greedy(
            config.env_id, config.dqn.network, current, config.eval_interval_episodes,
            kConfirmEvalSeed + static_cast<std::uint64_t>(step), &returns);
        solved = *std::min_element(returns.begin(), returns.end()) >= *spec.reward_threshold;
        last_eval = 0.5 * (last_eval + confirmation);
      }
      if (config.keep_best && last_eval >= best_eval) {
        best_eval = last_eval;
        best_weights = current;
        summary.policy = "best@" + std::to_string(step);
      }
      if (config.stop_at_threshold && solved) break;
    }
    if ((step & 255) == 0 && seconds_since(last_report) >= config.progress_interval_seconds) {
      emit_progress(step);
    }
  }
  emit_progress(step);

  summary.weights =
      config.keep_best && !best_weights.values.empty() ? best_weights : learner.weights();
  summary.mean_return =
      evaluate_greedy(config.env_id, config.dqn.network, summary.weights, config.eval_episodes,
                      kFinalEvalSeed + config.seed, &summary.eval_returns);
  summary.min_return = *std::min_element(summary.eval_returns.begin(), summary.eval_returns.end());
  summary.max_return = *std::max_element(summary.eval_returns.begin(), summary.eval_returns.end());
  summary.env_steps = step;
  summary.updates = learner.updates();
  summary.episodes = episodes;
  summary.digest = summary.weights.digest();
  summary.seconds = seconds_since(start);
  return summary;
}

}  // namespace tagflow::learning
