#include "nodes/sampler/sampler_server.hpp"

#include <algorithm>
#include <stdexcept>

#include "nodes/network_input.hpp"

namespace tagflow::nodes {
namespace {

// Row i of `rows` (rows of `width` elements) over row i of `into`.
template <class T>
void copy_row(envs::Span<const T> rows, std::size_t i, std::size_t width, std::vector<T>& into) {
  std::copy_n(rows.begin() + static_cast<std::ptrdiff_t>(i * width), width,
              into.begin() + static_cast<std::ptrdiff_t>(i * width));
}

// The current observations of `env` into the array of `type` (the other one stays empty).
void copy_observations(const envs::VectorEnv& env, ObservationType type, std::vector<float>& floats,
                       std::vector<std::uint8_t>& pixels) {
  if (type == ObservationType::kUInt8) {
    const auto current = env.observations_u8();
    pixels.assign(current.begin(), current.end());
  } else {
    const auto current = env.observations();
    floats.assign(current.begin(), current.end());
  }
}

}  // namespace

SamplerConfig SamplerConfig::from_params(const NodeParams& params, std::uint64_t seed,
                                         std::uint32_t index, const std::string& default_policy) {
  params.check_known({"env", "num_envs", "policy", "hidden", "epsilon_start", "epsilon_end",
                      "epsilon_decay_steps", "reseed_at_step", "reseed"});
  SamplerConfig c;
  c.env = params.get_string("env", c.env);
  c.num_envs = static_cast<std::size_t>(params.get_int("num_envs", 8, 1));
  if (c.num_envs > kMaxNumEnvs) {
    params.fail("num_envs", "must be at most " + std::to_string(kMaxNumEnvs) +
                                " (the envs of one sampler, each stepped every round)");
  }
  const std::string policy = params.get_string("policy", default_policy);
  if (policy != "local" && policy != "inference") {
    params.fail("policy", "expected local or inference, got '" + policy + "'");
  }
  c.local_policy = policy == "local";
  c.hidden = params.get_sizes("hidden", c.hidden);
  c.epsilon_start = params.get_double("epsilon_start", c.epsilon_start, 0.0, 1.0);
  c.epsilon_end = params.get_double("epsilon_end", c.epsilon_end, 0.0, 1.0);
  c.epsilon_decay_steps = params.get_int("epsilon_decay_steps", c.epsilon_decay_steps, 0);
  c.reseed_at_step = params.get_int("reseed_at_step", 0, 0);
  c.reseed = static_cast<std::uint64_t>(params.get_int("reseed", 0, 0));
  c.seed = seed;
  c.index = index;
  return c;
}

SamplerServer::SamplerServer(const SamplerConfig& config)
    : config_(config), rng_(config.seed * 0x9E3779B97F4A7C15ULL + 0x5a3) {
  envs::VectorEnvOptions options;
  options.num_envs = config.num_envs;
  options.seed = config.seed;
  options.autoreset = envs::AutoresetMode::kSameStep;
  env_ = std::make_unique<envs::VectorEnv>(config.env, options);
  const envs::EnvSpec& spec = env_->spec();
  if (spec.action_space.kind != envs::Space::Kind::kDiscrete ||
      (spec.observation_space.dtype != envs::DType::kFloat32 &&
       spec.observation_space.dtype != envs::DType::kUInt8)) {
    throw std::invalid_argument("sampler: env " + config.env +
                                " needs discrete actions and float32 or uint8 observations");
  }
  observation_type_ = observation_type_of(spec.observation_space.dtype);
  observation_size_ = spec.observation_space.size();
  num_actions_ = spec.action_space.n;
  std::vector<int> sizes{static_cast<int>(observation_size_)};
  sizes.insert(sizes.end(), config.hidden.begin(), config.hidden.end());
  sizes.push_back(static_cast<int>(num_actions_));
  policy_ = std::make_unique<MlpForward>(sizes);
  actions_.assign(config.num_envs, 0);
  episode_returns_.assign(config.num_envs, 0.0);
  env_->reset();
}

ObservationBatchMessage SamplerServer::observations() const {
  ObservationBatchMessage m;
  m.source = config_.index;
  m.observation_size = static_cast<std::uint32_t>(observation_size_);
  m.observation_type = observation_type_;
  copy_observations(*env_, observation_type_, m.observations, m.observations_u8);
  return m;
}

double SamplerServer::epsilon() const {
  if (config_.epsilon_decay_steps <= 0 || env_steps_ >= config_.epsilon_decay_steps) {
    return config_.epsilon_end;
  }
  const double fraction =
      static_cast<double>(env_steps_) / static_cast<double>(config_.epsilon_decay_steps);
  return config_.epsilon_start + (config_.epsilon_end - config_.epsilon_start) * fraction;
}

TransitionsMessage SamplerServer::step(const std::vector<std::int64_t>& greedy,
                                       std::uint64_t acting_version) {
  const std::size_t n = config_.num_envs;
  if (greedy.size() != n) {
    throw std::invalid_argument("sampler: expected " + std::to_string(n) + " actions, got " +
                                std::to_string(greedy.size()));
  }
  const double eps = epsilon();
  if (config_.reseed_at_step > 0 && env_steps_ < config_.reseed_at_step &&
      config_.reseed_at_step <= env_steps_ + static_cast<std::int64_t>(n)) {
    rng_.seed(config_.reseed * 0x9E3779B97F4A7C15ULL + 0x5a3);  // from this step on
  }
  for (std::size_t i = 0; i < n; ++i) {
    // Two draws per env and step whatever the outcome, so the stream stays aligned.
    const double u = static_cast<double>(rng_() >> 11U) * 0x1.0p-53;
    const auto random_action =
        static_cast<std::int64_t>(rng_() % static_cast<std::uint64_t>(num_actions_));
    if (greedy[i] < 0 || greedy[i] >= num_actions_) {
      throw std::invalid_argument("sampler: action out of range");
    }
    actions_[i] = u < eps ? random_action : greedy[i];
  }
  TransitionsMessage t;
  t.observation_size = static_cast<std::uint32_t>(observation_size_);
  t.weights_version = acting_version;
  t.observation_type = observation_type_;
  const bool pixels = observation_type_ == ObservationType::kUInt8;
  copy_observations(*env_, observation_type_, t.observations, t.observations_u8);
  env_->step(envs::Span<const std::int64_t>(actions_.data(), actions_.size()));
  copy_observations(*env_, observation_type_, t.next_observations, t.next_observations_u8);
  const auto rewards = env_->rewards();
  const auto terminated = env_->terminated();
  const auto truncated = env_->truncated();
  t.actions = actions_;
  t.rewards.assign(rewards.begin(), rewards.end());
  t.terminated.assign(terminated.begin(), terminated.end());
  for (std::size_t i = 0; i < n; ++i) {
    episode_returns_[i] += static_cast<double>(rewards[i]);
    if (terminated[i] != 0 || truncated[i] != 0) {
      // The row's next observation is the episode's last one, not the reset that followed.
      if (pixels) {
        copy_row(env_->final_observations_u8(), i, observation_size_, t.next_observations_u8);
      } else {
        copy_row(env_->final_observations(), i, observation_size_, t.next_observations);
      }
      finished_.push_back(episode_returns_[i]);
      episode_returns_[i] = 0.0;
      ++episodes_;
    }
  }
  env_steps_ += static_cast<std::int64_t>(n);
  return t;
}

TransitionsMessage SamplerServer::step_local() {
  std::vector<std::int64_t> greedy(config_.num_envs);
  policy_->greedy(network_input(*env_, policy_input_), static_cast<std::int64_t>(config_.num_envs),
                  greedy.data());
  return step(greedy, weights_version_);
}

void SamplerServer::on_weights(const WeightsMessage& weights) {
  if (weights.version < weights_version_ && !any_version_next_) return;
  policy_->load(weights.values);
  any_version_next_ = false;
  weights_version_ = weights.version;
}

std::vector<double> SamplerServer::take_finished_returns() {
  std::vector<double> out;
  out.swap(finished_);
  return out;
}

void SamplerServer::save(StateWriter& out) const {
  env_->save(out);
  out.generator(rng_);
  out.u64(weights_version_);
  out.pod_vector(policy_->parameters());
  out.pod_vector(actions_);
  out.f64_vector(episode_returns_);
  out.f64_vector(finished_);
  out.i64(env_steps_);
  out.i64(episodes_);
}

void SamplerServer::load(StateReader& in) {
  env_->load(in);
  in.generator(rng_);
  weights_version_ = in.u64();
  const std::vector<float> parameters = in.pod_vector<float>();
  if (parameters.size() != policy_->parameter_count()) in.fail("the local policy's parameters");
  policy_->load(parameters);
  actions_ = in.pod_vector<std::int64_t>();
  episode_returns_ = in.f64_vector();
  if (actions_.size() != config_.num_envs || episode_returns_.size() != config_.num_envs) {
    in.fail("one action and one return per env");
  }
  finished_ = in.f64_vector();
  env_steps_ = in.i64();
  episodes_ = in.i64();
}

}  // namespace tagflow::nodes
