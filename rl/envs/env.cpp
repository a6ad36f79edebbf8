#include "rl/envs/env.hpp"

#include <cmath>

namespace tagflow::envs {

void Env::reset(std::optional<std::uint64_t> seed, Span<float> observation) {
  check_observation(DType::kFloat32, observation.size());
  do_reset(seed, observation.data());
}

void Env::reset(std::optional<std::uint64_t> seed, Span<std::uint8_t> observation) {
  check_observation(DType::kUInt8, observation.size());
  do_reset(seed, observation.data());
}

StepResult Env::step(const Action& action, Span<float> observation) {
  check_observation(DType::kFloat32, observation.size());
  return do_step(action, observation.data());
}

StepResult Env::step(const Action& action, Span<std::uint8_t> observation) {
  check_observation(DType::kUInt8, observation.size());
  return do_step(action, observation.data());
}

void Env::set_state(const std::vector<double>& state) {
  const std::size_t expected = this->state().size();
  if (expected == 0) throw std::logic_error(spec().id + " has no settable state");
  if (state.size() != expected) {
    throw std::invalid_argument(spec().id + ": state needs " + std::to_string(expected) +
                                " values, got " + std::to_string(state.size()));
  }
  set_state_impl(state);
  needs_reset_ = false;
}

void Env::save(StateWriter& out) const {
  const std::vector<double> values = state();
  if (values.empty()) throw std::logic_error(spec().id + " cannot be checkpointed (no state)");
  out.f64_vector(values);
  out.generator(rng_);
  out.i64(elapsed_steps_);
  out.boolean(needs_reset_);
}

void Env::load(StateReader& in) {
  const std::vector<double> values = in.f64_vector();
  if (values.size() != state().size()) in.fail(spec().id + " state");
  set_state_impl(values);
  in.generator(rng_);
  elapsed_steps_ = static_cast<int>(in.i64());
  needs_reset_ = in.boolean();
}

void Env::observe(Span<float> observation) const {
  check_observation(DType::kFloat32, observation.size());
  observe_impl(observation.data());
}

void Env::check_observation(DType dtype, std::size_t size) const {
  const Space& space = spec().observation_space;
  if (space.dtype != dtype || space.size() != size) {
    throw std::invalid_argument(spec().id + ": observation buffer must hold " +
                                std::to_string(space.size()) + " " + dtype_name(space.dtype) +
                                " elements, got " + std::to_string(size) + " " + dtype_name(dtype));
  }
}

void Env::check_action(const Action& action) const {
  const Space& space = spec().action_space;
  if (space.kind == Space::Kind::kDiscrete) {
    if (action.index < 0 || action.index >= space.n) {
      throw std::invalid_argument(spec().id + ": action " + std::to_string(action.index) +
                                  " is outside " + space.to_string());
    }
    return;
  }
  if (action.values.size() != space.size()) {
    throw std::invalid_argument(spec().id + ": action needs " + std::to_string(space.size()) +
                                " values, got " + std::to_string(action.values.size()));
  }
  for (float v : action.values) {
    if (std::isnan(v)) throw std::invalid_argument(spec().id + ": action value is NaN");
  }
}

void Env::do_reset(std::optional<std::uint64_t> seed, void* observation) {
  if (seed) rng_.seed(*seed);
  reset_impl(observation);
  elapsed_steps_ = 0;
  needs_reset_ = false;
}

StepResult Env::do_step(const Action& action, void* observation) {
  check_action(action);
  if (needs_reset_) {
    throw std::logic_error(spec().id + ": step called before reset or after the episode ended");
  }
  StepResult result = step_impl(action, observation);
  ++elapsed_steps_;
  const int limit = spec().max_episode_steps;
  if (limit > 0 && elapsed_steps_ >= limit) result.truncated = true;
  if (result.terminated || result.truncated) needs_reset_ = true;
  return result;
}

}  // namespace tagflow::envs
