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

/// The env of a DQN run; std::invalid_argument unless its actions are discrete and its
/// observations float32.
std::unique_ptr<envs::Env> make_dqn_env(const std::string& env_id) {
  std::unique_ptr<envs::Env> env = envs::make_env(env_id);
  const envs::EnvSpec& spec = env->spec();
  if (spec.action_space.kind != envs::Space::Kind::kDiscrete) {
    throw std::invalid_argument(env_id + ": DQN needs a discrete action space, not " +
                                spec.action_space.to_string());
  }
  if (spec.observation_space.dtype != envs::DType::kFloat32) {
    throw std::invalid_argument(env_id + ": DQN here needs float32 observations");
  }
  return env;
}

/// `config` with the Q-network sized for `spec` and the learner seeded with the run's seed.
TrainConfig sized_for(TrainConfig config, const envs::EnvSpec& spec) {
  config.dqn.network.input_size = static_cast<int>(spec.observation_space.size());
  config.dqn.network.output_size = static_cast<int>(spec.action_space.n);
  config.dqn.seed = config.seed;
  return config;
}

/// The replay table of a run: observations, (action, n-step horizon) rows.
replay::TableConfig replay_config(const TrainConfig& config, std::size_t obs_size) {
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
  return table_config;
}

/// One train_dqn() run: the loop's steps (dqn_trainer.hpp) and the state they share.
class DqnTraining {
 public:
  DqnTraining(const TrainConfig& config, const ProgressCallback& progress)
      : env_(make_dqn_env(config.env_id)),
        config_(sized_for(config, env_->spec())),
        progress_(progress),
        obs_size_(env_->spec().observation_space.size()),
        learner_(config_.dqn),
        base_learning_rate_(config_.dqn.learning_rate),
        table_(replay_config(config_, obs_size_)),
        accumulator_(config_.n_step, config_.gamma),
        explore_(config_.seed * 0xD1B54A32D192ED03ULL + 2),
        random_action_(0, env_->spec().action_space.n - 1),
        observation_(obs_size_),
        next_observation_(obs_size_) {
    summary_.env_id = config_.env_id;
    summary_.seed = config_.seed;
    summary_.network = config_.dqn.network;
    summary_.policy = "final";
  }

  TrainSummary run() {
    env_->reset(config_.seed, observation_);
    while (step_ < config_.total_env_steps) {
      take_step();
      if (train_due()) train_round();
      if (evaluation_due() && evaluate() && config_.stop_at_threshold) break;
      if ((step_ & 255) == 0 && seconds_since(last_report_) >= config_.progress_interval_seconds) {
        emit_progress();
      }
    }
    emit_progress();
    return summarize();
  }

 private:
  void take_step();
  void store_ready();
  void end_episode();
  [[nodiscard]] bool train_due() const;
  void train_round();
  void reprioritize(const replay::SampledBatch& sampled, const UpdateResult& update);
  [[nodiscard]] bool evaluation_due() const;
  bool evaluate();
  void emit_progress();
  TrainSummary summarize();

  const Clock::time_point start_ = Clock::now();
  const std::unique_ptr<envs::Env> env_;
  const TrainConfig config_;
  const ProgressCallback& progress_;
  const std::size_t obs_size_;
  DqnLearner learner_;
  const double base_learning_rate_;
  replay::Table table_;
  NStepAccumulator accumulator_;
  std::mt19937_64 explore_;
  std::uniform_real_distribution<double> coin_{0.0, 1.0};
  std::uniform_int_distribution<std::int64_t> random_action_;

  std::vector<float> observation_;
  std::vector<float> next_observation_;
  std::vector<NStepTransition> ready_;
  replay::SampledBatch sampled_;
  TransitionBatch batch_;
  std::deque<double> recent_returns_;
  double episode_return_ = 0.0;
  double max_priority_ = 1.0;
  double loss_sum_ = 0.0;
  std::int64_t loss_count_ = 0;
  std::int64_t episodes_ = 0;
  std::int64_t step_ = 0;

  TrainSummary summary_;
  double best_eval_ = -1e300;
  WeightsBuffer best_weights_;
  double last_eval_ = -1.0;

  TrainProgress report_;
  Clock::time_point last_report_ = start_;
  std::int64_t last_report_steps_ = 0;
  std::int64_t last_report_updates_ = 0;
};

/// One epsilon-greedy env step; its complete n-step transitions go to the table.
void DqnTraining::take_step() {
  const double epsilon = config_.epsilon.at(step_);
  const std::int64_t action = coin_(explore_) < epsilon
                                  ? random_action_(explore_)
                                  : learner_.greedy_action(observation_.data());
  const envs::StepResult result = env_->step(envs::Action::discrete(action), next_observation_);
  ++step_;
  episode_return_ += static_cast<double>(result.reward);
  ready_.clear();
  accumulator_.push(observation_, action, result.reward, next_observation_, result.terminated,
                    result.truncated, &ready_);
  store_ready();
  if (result.terminated || result.truncated) {
    end_episode();
  } else {
    observation_.swap(next_observation_);
  }
}

void DqnTraining::store_ready() {
  for (const NStepTransition& t : ready_) {
    const std::vector<std::int64_t> action_row = {t.action, t.horizon};
    replay::Transition item;
    item.observation = replay::bytes_of(t.observation);
    item.action = replay::bytes_of(action_row);
    item.reward = t.reward;
    item.done = t.discount == 0.0F;
    item.next_observation = replay::bytes_of(t.next_observation);
    const replay::ReplayStatus status =
        table_.try_insert(item, config_.prioritized ? max_priority_ : 1.0);
    if (status != replay::ReplayStatus::kOk) {
      throw std::runtime_error(std::string("replay insert failed: ") + replay::to_string(status));
    }
  }
}

void DqnTraining::end_episode() {
  recent_returns_.push_back(episode_return_);
  if (recent_returns_.size() > kRecentEpisodes) recent_returns_.pop_front();
  ++episodes_;
  episode_return_ = 0.0;
  env_->reset(std::nullopt, observation_);
}

bool DqnTraining::train_due() const {
  return step_ >= config_.learning_starts && step_ % config_.train_every == 0 &&
         table_.size() >= config_.batch_size;
}

/// updates_per_round updates, with the learning rate and importance beta annealed by progress.
void DqnTraining::train_round() {
  const double fraction = static_cast<double>(step_) / static_cast<double>(config_.total_env_steps);
  learner_.set_learning_rate(base_learning_rate_ *
                             (1.0 - (1.0 - config_.final_learning_rate_fraction) * fraction));
  replay::SampleRequest request;
  request.batch_size = config_.batch_size;
  request.importance_beta =
      config_.importance_beta_start + (1.0 - config_.importance_beta_start) * fraction;
  for (int u = 0; u < config_.updates_per_round; ++u) {
    if (table_.try_sample(request, sampled_) != replay::ReplayStatus::kOk) break;
    to_transition_batch(sampled_, obs_size_, config_.gamma, config_.prioritized, &batch_);
    const UpdateResult update = learner_.update(batch_);
    loss_sum_ += update.loss;
    ++loss_count_;
    if (config_.prioritized) reprioritize(sampled_, update);
  }
}

void DqnTraining::reprioritize(const replay::SampledBatch& sampled, const UpdateResult& update) {
  std::vector<double> priorities(update.priorities.size());
  for (std::size_t i = 0; i < priorities.size(); ++i) {
    priorities[i] = static_cast<double>(update.priorities[i]) + kMinPriority;
    max_priority_ = std::max(max_priority_, priorities[i]);
  }
  (void)table_.update_priorities(sampled.keys, priorities);
}

bool DqnTraining::evaluation_due() const {
  return config_.eval_every > 0 && step_ % config_.eval_every == 0;
}

/// An interval evaluation (keeping the best policy); true when the policy is solved.
bool DqnTraining::evaluate() {
  const std::optional<double>& threshold = env_->spec().reward_threshold;
  const WeightsBuffer current = learner_.weights();
  last_eval_ =
      evaluate_greedy(config_.env_id, config_.dqn.network, current, config_.eval_interval_episodes,
                      kIntervalEvalSeed + static_cast<std::uint64_t>(step_));
  // A policy at the threshold must also reach it in every episode of a second evaluation on
  // other episodes before it counts as solved; its score is the mean over both.
  bool solved = false;
  if (threshold && last_eval_ >= *threshold) {
    std::vector<double> returns;
    const double confirmation = evaluate_greedy(
        config_.env_id, config_.dqn.network, current, config_.eval_interval_episodes,
        kConfirmEvalSeed + static_cast<std::uint64_t>(step_), &returns);
    solved = *std::min_element(returns.begin(), returns.end()) >= *threshold;
    last_eval_ = 0.5 * (last_eval_ + confirmation);
  }
  if (config_.keep_best && last_eval_ >= best_eval_) {
    best_eval_ = last_eval_;
    best_weights_ = current;
    summary_.policy = "best@" + std::to_string(step_);
  }
  return solved;
}

/// The progress since the last report, to the callback.
void DqnTraining::emit_progress() {
  const double elapsed = std::max(seconds_since(last_report_), 1e-9);
  report_.env_steps = step_;
  report_.updates = learner_.updates();
  report_.episodes = episodes_;
  report_.steps_per_second = static_cast<double>(step_ - last_report_steps_) / elapsed;
  report_.updates_per_second =
      static_cast<double>(learner_.updates() - last_report_updates_) / elapsed;
  report_.recent_return = recent_returns_.empty() ? 0.0
                                                  : std::accumulate(recent_returns_.begin(),
                                                                    recent_returns_.end(), 0.0) /
                                                        static_cast<double>(recent_returns_.size());
  report_.epsilon = config_.epsilon.at(step_);
  report_.loss = loss_count_ > 0 ? loss_sum_ / static_cast<double>(loss_count_) : 0.0;
  report_.last_eval_return = last_eval_;
  loss_sum_ = 0.0;
  loss_count_ = 0;
  last_report_ = Clock::now();
  last_report_steps_ = step_;
  last_report_updates_ = learner_.updates();
  if (progress_) progress_(report_);
}

/// The returned policy (the best one kept, or the last) and its final evaluation.
TrainSummary DqnTraining::summarize() {
  summary_.weights =
      config_.keep_best && !best_weights_.values.empty() ? best_weights_ : learner_.weights();
  summary_.mean_return =
      evaluate_greedy(config_.env_id, config_.dqn.network, summary_.weights, config_.eval_episodes,
                      kFinalEvalSeed + config_.seed, &summary_.eval_returns);
  summary_.min_return =
      *std::min_element(summary_.eval_returns.begin(), summary_.eval_returns.end());
  summary_.max_return =
      *std::max_element(summary_.eval_returns.begin(), summary_.eval_returns.end());
  summary_.env_steps = step_;
  summary_.updates = learner_.updates();
  summary_.episodes = episodes_;
  summary_.digest = summary_.weights.digest();
  summary_.seconds = seconds_since(start_);
  return summary_;
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
  return DqnTraining(config, progress).run();
}

}  // namespace tagflow::learning
