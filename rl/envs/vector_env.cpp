#include "rl/envs/vector_env.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "rl/envs/env_batch.hpp"
#include "rl/envs/registry.hpp"
#include "rl/envs/step_workers.hpp"

namespace tagflow::envs {

VectorEnv::VectorEnv(const std::string& id, const VectorEnvOptions& options) : options_(options) {
  if (options_.num_envs == 0) throw std::invalid_argument("VectorEnv needs at least one env");
  batch_ = make_env_batch(id, options_.num_envs);
  init();
}

VectorEnv::VectorEnv(const std::function<std::unique_ptr<Env>()>& factory,
                     const VectorEnvOptions& options)
    : options_(options) {
  if (options_.num_envs == 0) throw std::invalid_argument("VectorEnv needs at least one env");
  batch_ = make_generic_batch(factory, options_.num_envs);
  init();
}

VectorEnv::~VectorEnv() = default;

void VectorEnv::init() {
  const std::size_t n = options_.num_envs;
  const std::size_t obs_bytes = spec().observation_space.bytes();
  observations_.assign(n * obs_bytes, 0);
  if (options_.autoreset == AutoresetMode::kSameStep) final_observations_.assign(n * obs_bytes, 0);
  rewards_.assign(n, 0.0F);
  terminated_.assign(n, 0);
  truncated_.assign(n, 0);
  episode_steps_.assign(n, 0);
  needs_reset_.assign(n, 0);
  const std::size_t threads = options_.num_threads == 0 ? 1 : options_.num_threads;
  workers_ = std::make_unique<StepWorkers>(threads < n ? threads : n);
}

const EnvSpec& VectorEnv::spec() const noexcept { return batch_->spec(); }

void VectorEnv::run(bool reset_phase, const BatchRequest& request) {
  workers_->run(options_.num_envs, [&](std::size_t begin, std::size_t end) {
    if (reset_phase) {
      batch_->reset_range(request, begin, end);
    } else {
      batch_->step_range(request, begin, end);
    }
  });
}

BatchRequest VectorEnv::request() {
  BatchRequest r;
  r.out.observations = observations_.data();
  r.out.final_observations = final_observations_.empty() ? nullptr : final_observations_.data();
  r.out.rewards = rewards_.data();
  r.out.terminated = terminated_.data();
  r.out.truncated = truncated_.data();
  r.out.episode_steps = episode_steps_.data();
  r.out.needs_reset = needs_reset_.data();
  return r;
}

void VectorEnv::reset(bool reseed) {
  BatchRequest r = request();
  if (reseed || !was_reset_) r.base_seed = options_.seed;
  run(true, r);
  std::fill(rewards_.begin(), rewards_.end(), 0.0F);
  std::fill(terminated_.begin(), terminated_.end(), 0);
  std::fill(truncated_.begin(), truncated_.end(), 0);
  was_reset_ = true;
}

void VectorEnv::step(Span<const std::int64_t> actions) {
  const Space& space = spec().action_space;
  if (space.kind != Space::Kind::kDiscrete) {
    throw std::invalid_argument(spec().id + ": action space " + space.to_string() +
                                " needs float actions");
  }
  if (actions.size() != num_envs()) {
    throw std::invalid_argument(spec().id + ": step needs " + std::to_string(num_envs()) +
                                " actions, got " + std::to_string(actions.size()));
  }
  for (std::size_t i = 0; i < actions.size(); ++i) {
    if (actions[i] < 0 || actions[i] >= space.n) {
      throw std::invalid_argument(spec().id + ": action " + std::to_string(actions[i]) +
                                  " of env " + std::to_string(i) + " is outside " +
                                  space.to_string());
    }
  }
  if (!was_reset_) throw std::logic_error("VectorEnv::step called before reset");
  BatchRequest r = request();
  r.discrete_actions = actions.data();
  run(false, r);
}

void VectorEnv::step(Span<const float> actions) {
  const Space& space = spec().action_space;
  if (space.kind != Space::Kind::kBox) {
    throw std::invalid_argument(spec().id + ": action space " + space.to_string() +
                                " needs integer actions");
  }
  const std::size_t dims = space.size();
  if (actions.size() != num_envs() * dims) {
    throw std::invalid_argument(spec().id + ": step needs " + std::to_string(num_envs() * dims) +
                                " action values, got " + std::to_string(actions.size()));
  }
  for (float v : actions) {
    if (std::isnan(v)) throw std::invalid_argument(spec().id + ": an action value is NaN");
  }
  if (!was_reset_) throw std::logic_error("VectorEnv::step called before reset");
  BatchRequest r = request();
  r.box_actions = actions.data();
  r.action_dims = dims;
  run(false, r);
}

namespace {

template <typename T>
Span<const T> typed_view(const std::vector<std::uint8_t>& bytes, const EnvSpec& spec, DType want) {
  if (spec.observation_space.dtype != want) {
    throw std::logic_error(spec.id + ": observations are " +
                           dtype_name(spec.observation_space.dtype) + ", not " + dtype_name(want));
  }
  if (bytes.empty()) throw std::logic_error(spec.id + ": final observations need kSameStep");
  return Span<const T>(reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T));
}

}  // namespace

Span<const float> VectorEnv::observations() const {
  return typed_view<float>(observations_, spec(), DType::kFloat32);
}
Span<const std::uint8_t> VectorEnv::observations_u8() const {
  return typed_view<std::uint8_t>(observations_, spec(), DType::kUInt8);
}
Span<const float> VectorEnv::final_observations() const {
  return typed_view<float>(final_observations_, spec(), DType::kFloat32);
}
Span<const std::uint8_t> VectorEnv::final_observations_u8() const {
  return typed_view<std::uint8_t>(final_observations_, spec(), DType::kUInt8);
}
Span<const float> VectorEnv::rewards() const noexcept { return {rewards_.data(), rewards_.size()}; }
Span<const std::uint8_t> VectorEnv::terminated() const noexcept {
  return {terminated_.data(), terminated_.size()};
}
Span<const std::uint8_t> VectorEnv::truncated() const noexcept {
  return {truncated_.data(), truncated_.size()};
}
Span<const std::int32_t> VectorEnv::episode_steps() const noexcept {
  return {episode_steps_.data(), episode_steps_.size()};
}

void VectorEnv::save(StateWriter& out) const {
  out.string(spec().id);
  out.u64(batch_->size());
  for (std::size_t i = 0; i < batch_->size(); ++i) batch_->env(i).save(out);
  out.boolean(was_reset_);
  out.pod_vector(observations_);
  out.pod_vector(final_observations_);
  out.pod_vector(rewards_);
  out.pod_vector(terminated_);
  out.pod_vector(truncated_);
  out.pod_vector(episode_steps_);
  out.pod_vector(needs_reset_);
}

void VectorEnv::load(StateReader& in) {
  if (in.string() != spec().id) in.fail("envs of id " + spec().id);
  if (in.u64() != batch_->size()) in.fail(std::to_string(batch_->size()) + " envs");
  for (std::size_t i = 0; i < batch_->size(); ++i) batch_->env(i).load(in);
  was_reset_ = in.boolean();
  // Copied into the buffers, which keep their addresses (the accessors' views stay valid).
  const auto same_size = [&in](auto& into, const auto& loaded, const char* what) {
    if (loaded.size() != into.size()) in.fail(what);
    std::copy(loaded.begin(), loaded.end(), into.begin());
  };
  same_size(observations_, in.pod_vector<std::uint8_t>(), "observations");
  same_size(final_observations_, in.pod_vector<std::uint8_t>(), "final observations");
  same_size(rewards_, in.pod_vector<float>(), "rewards");
  same_size(terminated_, in.pod_vector<std::uint8_t>(), "terminated flags");
  same_size(truncated_, in.pod_vector<std::uint8_t>(), "truncated flags");
  same_size(episode_steps_, in.pod_vector<std::int32_t>(), "episode steps");
  same_size(needs_reset_, in.pod_vector<std::uint8_t>(), "reset flags");
}

}  // namespace tagflow::envs
