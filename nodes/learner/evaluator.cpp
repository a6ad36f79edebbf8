#include "nodes/learner/evaluator.hpp"

#include <stdexcept>

#include "nodes/network_input.hpp"

namespace tagflow::nodes {

Evaluator::Evaluator(const std::string& env, const std::vector<int>& hidden, int episodes,
                     std::uint64_t seed, std::int64_t max_steps)
    : episodes_(episodes), max_steps_(max_steps) {
  if (episodes <= 0) throw std::invalid_argument("evaluator: episodes must be positive");
  if (max_steps < 0) throw std::invalid_argument("evaluator: max_steps must not be negative");
  envs::VectorEnvOptions options;
  options.num_envs = static_cast<std::size_t>(episodes);
  options.seed = seed;
  env_ = std::make_unique<envs::VectorEnv>(env, options);
  const envs::EnvSpec& spec = env_->spec();
  const envs::DType dtype = spec.observation_space.dtype;
  if (spec.action_space.kind != envs::Space::Kind::kDiscrete ||
      (dtype != envs::DType::kFloat32 && dtype != envs::DType::kUInt8)) {
    throw std::invalid_argument("evaluator: env " + env +
                                " needs discrete actions and float32 or uint8 observations");
  }
  std::vector<int> sizes{static_cast<int>(spec.observation_space.size())};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(static_cast<int>(spec.action_space.n));
  policy_ = std::make_unique<MlpForward>(sizes);
}

double Evaluator::mean_return(const std::vector<float>& weights) {
  policy_->load(weights);
  env_->reset(/*reseed=*/true);
  const auto n = static_cast<std::size_t>(episodes_);
  std::vector<double> returns(n, 0.0);
  std::vector<bool> done(n, false);
  std::vector<std::int64_t> actions(n, 0);
  std::size_t remaining = n;
  for (std::int64_t step = 0; remaining > 0 && (max_steps_ == 0 || step < max_steps_); ++step) {
    policy_->greedy(network_input(*env_, input_), static_cast<std::int64_t>(n), actions.data());
    env_->step(envs::Span<const std::int64_t>(actions.data(), n));
    const auto rewards = env_->rewards();
    const auto terminated = env_->terminated();
    const auto truncated = env_->truncated();
    for (std::size_t i = 0; i < n; ++i) {
      if (done[i]) continue;
      returns[i] += static_cast<double>(rewards[i]);
      if (terminated[i] != 0 || truncated[i] != 0) {
        done[i] = true;
        --remaining;
      }
    }
  }
  double sum = 0.0;
  for (const double r : returns) sum += r;
  return sum / static_cast<double>(n);
}

}  // namespace tagflow::nodes
