// `tagflow bench envs`: environment steps per second, single env and vector env, against a plain
// loop that inlines CartPole's dynamics with no interface at all (the ceiling).
//
// Figures are env-steps per second on one core unless the name says threads; for PixelPong one
// step is one 210×160×3 frame (NoFrameskip) or four frames (Atari preprocessing); for
// TrafficJunction one step is one joint step of every agent.
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/benchmarks.hpp"
#include "bench/timing.hpp"
#include "rl/envs/cartpole.hpp"
#include "rl/envs/registry.hpp"
#include "rl/envs/vector_env.hpp"

namespace tagflow::bench {
namespace {

using envs::Action;
using envs::VectorEnv;
using envs::VectorEnvOptions;

constexpr std::size_t kActionCycle = 4096;  // pre-drawn actions, reused cyclically

/// CartPole with everything inlined: the dynamics, termination and a reset drawn from a cheap
/// generator. No interface, no validation, no time limit bookkeeping beyond a counter.
struct PlainCartPole {
  double x = 0, x_dot = 0, theta = 0, theta_dot = 0;
  int steps = 0;
  std::mt19937_64 rng{1};

  void reset() {
    auto u = [&] { return -0.05 + 0.1 * static_cast<double>(rng() >> 11) * 0x1.0p-53; };
    x = u();
    x_dot = u();
    theta = u();
    theta_dot = u();
    steps = 0;
  }
  float step(int action, float* obs) {
    using C = envs::CartPole;
    const double force = action == 1 ? C::kForceMag : -C::kForceMag;
    const double c = std::cos(theta);
    const double s = std::sin(theta);
    const double temp = (force + C::kPoleMassLength * theta_dot * theta_dot * s) / C::kTotalMass;
    const double theta_acc = (C::kGravity * s - c * temp) /
                             (C::kLength * (4.0 / 3.0 - C::kMassPole * c * c / C::kTotalMass));
    const double x_acc = temp - C::kPoleMassLength * theta_acc * c / C::kTotalMass;
    x += C::kTau * x_dot;
    x_dot += C::kTau * x_acc;
    theta += C::kTau * theta_dot;
    theta_dot += C::kTau * theta_acc;
    obs[0] = static_cast<float>(x);
    obs[1] = static_cast<float>(x_dot);
    obs[2] = static_cast<float>(theta);
    obs[3] = static_cast<float>(theta_dot);
    ++steps;
    if (x < -C::kXThreshold || x > C::kXThreshold || theta < -C::kThetaThreshold ||
        theta > C::kThetaThreshold || steps >= C::kMaxEpisodeSteps) {
      reset();
    }
    return 1.0F;
  }
};

std::vector<std::int64_t> random_discrete(std::int64_t n, std::size_t count) {
  std::mt19937_64 rng(7);
  std::vector<std::int64_t> out(count);
  for (auto& a : out) a = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n));
  return out;
}

std::vector<float> random_box(float low, float high, std::size_t count) {
  std::mt19937_64 rng(7);
  std::vector<float> out(count);
  for (auto& a : out) {
    a = low + (high - low) * static_cast<float>(static_cast<double>(rng() >> 40) * 0x1.0p-24);
  }
  return out;
}

/// Env-steps per second of a VectorEnv of `n` copies of `id`, stepping `batches` batches per
/// timed call with random actions.
double vector_steps_per_second(const std::string& id, std::size_t n, std::size_t threads,
                               const TimingOptions& timing) {
  VectorEnvOptions options;
  options.num_envs = n;
  options.seed = 1;
  options.num_threads = threads;
  VectorEnv venv(id, options);
  venv.reset();
  const envs::Space& action_space = venv.spec().action_space;
  const std::size_t per_env =
      action_space.kind == envs::Space::Kind::kBox ? action_space.size() : 1;
  const std::size_t rows = std::max<std::size_t>(kActionCycle / n, 1) + 1;
  const std::size_t batches = std::max<std::size_t>(1, 1024 / n);
  std::vector<std::int64_t> discrete;
  std::vector<float> box;
  if (action_space.kind == envs::Space::Kind::kDiscrete) {
    discrete = random_discrete(action_space.n, rows * n);
  } else {
    box = random_box(action_space.low[0], action_space.high[0], rows * n * per_env);
  }
  std::size_t row = 0;
  const double seconds = seconds_per_call(
      [&] {
        for (std::size_t b = 0; b < batches; ++b) {
          row = (row + 1) % rows;
          if (!discrete.empty()) {
            venv.step(envs::Span<const std::int64_t>(discrete.data() + row * n, n));
          } else {
            venv.step(envs::Span<const float>(box.data() + row * n * per_env, n * per_env));
          }
        }
        do_not_optimize(venv.rewards().data());
      },
      timing);
  return static_cast<double>(batches * n) / seconds;
}

/// Steps per second of one env through the Env interface (reset by hand when an episode ends).
double single_steps_per_second(const std::string& id, const TimingOptions& timing) {
  const std::unique_ptr<envs::Env> env = envs::make_env(id);
  std::vector<float> obs(env->spec().observation_space.size());
  env->reset(1, obs);
  const std::vector<std::int64_t> actions =
      random_discrete(env->spec().action_space.n, kActionCycle);
  std::size_t t = 0;
  constexpr int kSteps = 1024;
  const double seconds = seconds_per_call(
      [&] {
        for (int i = 0; i < kSteps; ++i) {
          t = (t + 1) % kActionCycle;
          const envs::StepResult r = env->step(Action::discrete(actions[t]), obs);
          if (r.terminated || r.truncated) env->reset(std::nullopt, obs);
        }
        do_not_optimize(obs.data());
      },
      timing);
  return kSteps / seconds;
}

double plain_steps_per_second(const TimingOptions& timing) {
  PlainCartPole env;
  env.reset();
  float obs[4];
  const std::vector<std::int64_t> actions = random_discrete(2, kActionCycle);
  std::size_t t = 0;
  constexpr int kSteps = 1024;
  const double seconds = seconds_per_call(
      [&] {
        for (int i = 0; i < kSteps; ++i) {
          t = (t + 1) % kActionCycle;
          do_not_optimize(env.step(static_cast<int>(actions[t]), obs));
        }
        do_not_optimize(obs);
      },
      timing);
  return kSteps / seconds;
}

double multi_agent_steps_per_second(const std::string& id, const TimingOptions& timing) {
  const std::unique_ptr<envs::MultiAgentEnv> env = envs::make_multi_agent_env(id);
  const auto n = static_cast<std::size_t>(env->spec().num_agents);
  std::vector<float> obs(n * env->spec().observation_space.size());
  std::vector<float> rewards(n);
  std::vector<std::uint8_t> dones(n);
  env->reset(1, obs);
  const std::vector<std::int64_t> actions = random_discrete(2, kActionCycle * n);
  std::size_t t = 0;
  constexpr int kSteps = 64;
  const double seconds = seconds_per_call(
      [&] {
        for (int i = 0; i < kSteps; ++i) {
          t = (t + 1) % kActionCycle;
          const envs::MultiAgentStepInfo info = env->step(
              envs::Span<const std::int64_t>(actions.data() + t * n, n), obs, rewards, dones);
          if (info.episode_done) env->reset(std::nullopt, obs);
        }
        do_not_optimize(obs.data());
      },
      timing);
  return kSteps / seconds;
}

}  // namespace

BenchReport run_envs_bench(const BenchOptions& options) {
  const TimingOptions timing{options.quick ? 0.01 : 0.25, options.quick ? 1 : 3};
  BenchReport report("envs");
  const double mega = 1e6;
  report.add("cartpole_plain_loop", plain_steps_per_second(timing) / mega, "M steps/s");
  report.add("cartpole_single_env", single_steps_per_second("CartPole-v1", timing) / mega,
             "M steps/s");
  for (std::size_t n : {1, 16, 1024}) {
    report.add("cartpole_vector_" + std::to_string(n),
               vector_steps_per_second("CartPole-v1", n, 1, timing) / mega, "M steps/s");
  }
  report.add("cartpole_vector_1024_2threads",
             vector_steps_per_second("CartPole-v1", 1024, 2, timing) / mega, "M steps/s");
  for (const char* id : {"MountainCar-v0", "Acrobot-v1", "Pendulum-v1", "Blackjack-v1"}) {
    report.add(std::string(id) + "_vector_64", vector_steps_per_second(id, 64, 1, timing) / mega,
               "M steps/s");
  }
  const double kilo = 1e3;
  report.add("PixelPongNoFrameskip_vector_16",
             vector_steps_per_second("PixelPongNoFrameskip-v0", 16, 1, timing) / kilo,
             "k frames/s");
  report.add("PixelPong_atari_vector_16",
             vector_steps_per_second("PixelPong-v0", 16, 1, timing) / kilo, "k steps/s");
  report.add("TrafficJunction4_joint",
             multi_agent_steps_per_second("TrafficJunction4-v1", timing) / kilo, "k steps/s");
  report.add("TrafficJunction10_joint",
             multi_agent_steps_per_second("TrafficJunction10-v1", timing) / kilo, "k steps/s");
  report.add_ratio("cartpole_vector_1024/plain_loop", "cartpole_vector_1024",
                   "cartpole_plain_loop");
  report.add_ratio("cartpole_single_env/plain_loop", "cartpole_single_env", "cartpole_plain_loop");
  report.add_ratio("cartpole_vector_1/plain_loop", "cartpole_vector_1", "cartpole_plain_loop");
  report.add_ratio("cartpole_2threads/1thread", "cartpole_vector_1024_2threads",
                   "cartpole_vector_1024");
  return report;
}

}  // namespace tagflow::bench
