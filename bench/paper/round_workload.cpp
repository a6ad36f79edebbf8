#include "bench/paper/round_workload.hpp"

#include <cstring>
#include <stdexcept>

#include "rl/envs/registry.hpp"

namespace tagflow::bench::paper {
namespace {

class GymWorker : public RoundWorker {
 public:
  GymWorker(const RoundWorkload& workload, std::size_t index)
      : env_(envs::make_env(workload.env)), index_(index) {
    const envs::EnvSpec& spec = env_->spec();
    pixels_ = spec.observation_space.dtype == envs::DType::kUInt8;
    discrete_ = spec.action_space.kind == envs::Space::Kind::kDiscrete;
    observation_size_ = spec.observation_space.size();
    // Seed + index, one generator per env (EnvPool's convention).
    std::vector<std::uint8_t> scratch(spec.observation_space.bytes());
    reset_into(workload.seed + index, scratch.data());
  }

  transport::Payload respond(const transport::Payload& request) override {
    if (request.size < (index_ + 1) * sizeof(float)) {
      throw std::runtime_error("paper bench: an action request too short for env " +
                               std::to_string(index_));
    }
    float action = 0.0F;
    std::memcpy(&action, request.bytes() + index_ * sizeof(float), sizeof(float));
    // The observation is written straight into the answer's own buffer: nothing is copied later.
    std::vector<std::uint8_t> buffer(observation_size_ * (pixels_ ? 1 : sizeof(float)));
    if (done_) {
      reset_into(std::nullopt, buffer.data());  // auto-reset: the step after the end resets
    } else {
      const envs::Action a = discrete_ ? envs::Action::discrete(static_cast<std::int64_t>(action))
                                       : envs::Action::box(envs::Span<const float>(&action, 1));
      const envs::StepResult result =
          pixels_ ? env_->step(a, envs::Span<std::uint8_t>(buffer.data(), buffer.size()))
                  : env_->step(a, envs::Span<float>(reinterpret_cast<float*>(buffer.data()),
                                                    observation_size_));
      done_ = result.terminated || result.truncated;
    }
    return transport::Payload::owning(std::move(buffer));
  }

 private:
  void reset_into(std::optional<std::uint64_t> seed, std::uint8_t* buffer) {
    if (pixels_) {
      env_->reset(seed, envs::Span<std::uint8_t>(buffer, observation_size_));
    } else {
      env_->reset(seed, envs::Span<float>(reinterpret_cast<float*>(buffer), observation_size_));
    }
    done_ = false;
  }

  std::unique_ptr<envs::Env> env_;
  std::size_t index_;
  std::size_t observation_size_ = 0;
  bool pixels_ = false;
  bool discrete_ = true;
  bool done_ = false;
};

class ArrayWorker : public RoundWorker {
 public:
  transport::Payload respond(const transport::Payload& request) override { return request; }
};

/// ε-greedy Blackjack rollouts with the broadcast weights.
class QWorker : public RoundWorker {
 public:
  static constexpr int kStepsPerRound = 100;
  static constexpr double kEpsilon = 0.1;

  QWorker(const RoundWorkload& workload, std::size_t index)
      : env_(envs::make_env("Blackjack-v1")), rng_(workload.seed * 7919 + index) {
    env_->reset(workload.seed + index, envs::Span<float>(state_.data(), 3));
  }

  transport::Payload respond(const transport::Payload& request) override {
    if (request.size != sizeof(net_.parameters)) {
      throw std::runtime_error("paper bench: Q-network weights of the wrong size");
    }
    std::memcpy(net_.parameters.data(), request.data, request.size);
    std::vector<std::uint8_t> buffer(kStepsPerRound * sizeof(Experience));
    std::uniform_real_distribution<double> coin(0.0, 1.0);
    for (int t = 0; t < kStepsPerRound; ++t) {
      Experience e{};
      e.state = state_;
      const std::int64_t action =
          coin(rng_) < kEpsilon ? static_cast<std::int64_t>(coin(rng_) < 0.5) : net_.greedy(state_);
      const envs::StepResult r =
          env_->step(envs::Action::discrete(action), envs::Span<float>(state_.data(), 3));
      e.action = static_cast<float>(action);
      e.reward = r.reward;
      e.next_state = state_;
      e.done = r.terminated || r.truncated ? 1.0F : 0.0F;
      if (e.done > 0.0F) env_->reset(std::nullopt, envs::Span<float>(state_.data(), 3));
      std::memcpy(buffer.data() + t * sizeof(Experience), &e, sizeof(Experience));
    }
    return transport::Payload::owning(std::move(buffer));
  }

 private:
  std::unique_ptr<envs::Env> env_;
  std::mt19937_64 rng_;
  QNetwork net_;
  std::array<float, 3> state_{};
};

std::string value_after(const std::vector<std::string>& args, std::size_t& i) {
  if (i + 1 >= args.size())
    throw std::invalid_argument("paper bench: " + args[i] + " needs a value");
  return args[++i];
}

}  // namespace

std::vector<std::string> RoundWorkload::to_args() const {
  return {"--kind",          kind,
          "--env",           env.empty() ? "-" : env,
          "--workers",       std::to_string(workers),
          "--bytes",         std::to_string(bytes),
          "--seed",          std::to_string(seed),
          "--rounds",        std::to_string(rounds),
          "--minibatch",     std::to_string(minibatch),
          "--sample-replay", sample_replay ? "1" : "0"};
}

RoundWorkload parse_round_workload(const std::vector<std::string>& args, std::size_t first) {
  RoundWorkload w;
  for (std::size_t i = first; i < args.size(); ++i) {
    const std::string& key = args[i];
    if (key == "--kind") {
      w.kind = value_after(args, i);
    } else if (key == "--env") {
      w.env = value_after(args, i);
      if (w.env == "-") w.env.clear();
    } else if (key == "--workers") {
      w.workers = std::stoul(value_after(args, i));
    } else if (key == "--bytes") {
      w.bytes = std::stoul(value_after(args, i));
    } else if (key == "--seed") {
      w.seed = std::stoull(value_after(args, i));
    } else if (key == "--rounds") {
      w.rounds = std::stoi(value_after(args, i));
    } else if (key == "--minibatch") {
      w.minibatch = std::stoul(value_after(args, i));
    } else if (key == "--sample-replay") {
      w.sample_replay = value_after(args, i) == "1";
    }
  }
  return w;
}

std::unique_ptr<RoundWorker> make_round_worker(const RoundWorkload& workload, std::size_t index) {
  if (workload.kind == "gym") return std::make_unique<GymWorker>(workload, index);
  if (workload.kind == "array") return std::make_unique<ArrayWorker>();
  if (workload.kind == "qlearning") return std::make_unique<QWorker>(workload, index);
  throw std::invalid_argument("paper bench: unknown round workload kind '" + workload.kind + "'");
}

RoundDriver::RoundDriver(const RoundWorkload& workload) : workload_(workload), rng_(workload.seed) {
  if (workload.kind == "qlearning") {
    learner_ = std::make_unique<QLearner>(workload.seed, 0.01F, 0.99F);
    replay_ = std::make_unique<QReplay>(20000);
    answer_bytes_ = QWorker::kStepsPerRound * sizeof(Experience);
    return;
  }
  if (workload.kind == "array") {
    const std::size_t count = workload.bytes / sizeof(double);
    std::vector<std::uint8_t> bytes(count * sizeof(double));
    for (std::size_t i = 0; i < count; ++i) {
      const double value = i % 4099 == 0 ? static_cast<double>(i) : 1.5;
      std::memcpy(bytes.data() + i * sizeof(double), &value, sizeof(double));
    }
    array_ = transport::Payload::owning(std::move(bytes));
    answer_bytes_ = array_.size;
    return;
  }
  const auto env = envs::make_env(workload.env);
  const envs::EnvSpec& spec = env->spec();
  discrete_ = spec.action_space.kind == envs::Space::Kind::kDiscrete;
  action_n_ = spec.action_space.n;
  if (!discrete_) {
    action_low_ = spec.action_space.low.at(0);
    action_high_ = spec.action_space.high.at(0);
  }
  pixels_ = spec.observation_space.dtype == envs::DType::kUInt8;
  answer_bytes_ = spec.observation_space.bytes();
}

transport::Payload RoundDriver::next_request() {
  if (workload_.kind == "array") return array_;
  if (learner_ != nullptr) {
    const auto& p = learner_->online().parameters;
    return transport::Payload::copy_of(p.data(), sizeof(p));
  }
  std::vector<float> actions(workload_.workers);
  for (float& a : actions) {
    if (discrete_) {
      // The Atari-sized workload, like the paper's, picks among the first two actions only.
      const std::int64_t n = pixels_ ? 2 : action_n_;
      a = static_cast<float>(std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng_));
    } else {
      a = std::uniform_real_distribution<float>(action_low_, action_high_)(rng_);
    }
  }
  std::string bytes(actions.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), actions.data(), bytes.size());
  return transport::Payload::owning(std::move(bytes));
}

void RoundDriver::gather(std::size_t worker, const transport::Payload& answer) {
  if (answer.size != answer_bytes_) {
    throw std::runtime_error("paper bench: worker " + std::to_string(worker) + " answered " +
                             std::to_string(answer.size) + " bytes, expected " +
                             std::to_string(answer_bytes_));
  }
  ++answers_;
  if (learner_ != nullptr) {
    for (std::size_t t = 0; t < QWorker::kStepsPerRound; ++t) {
      Experience e{};
      std::memcpy(&e, answer.bytes() + t * sizeof(Experience), sizeof(Experience));
      replay_->add(e);
    }
    if (answers_ % workload_.workers != 0) return;
    // The round's answers are all in: one learner step, a target sync every 10 rounds.
    ++rounds_gathered_;
    if (replay_->size() >= workload_.minibatch) {
      checksum_ +=
          learner_->update(workload_.sample_replay ? replay_->sample(workload_.minibatch, rng_)
                                                   : replay_->first(workload_.minibatch));
    }
    if (rounds_gathered_ % 10 == 0) learner_->sync_target();
    return;
  }
  if (workload_.kind == "array" || pixels_) {
    checksum_ += answer.bytes()[answer.size / 2];
  } else {
    float first = 0.0F;
    std::memcpy(&first, answer.data, sizeof(float));
    checksum_ += static_cast<double>(first);
  }
  if (print_to != nullptr && workload_.kind == "gym") {
    std::fprintf(print_to, "env %zu:", worker);
    if (pixels_) {
      std::fprintf(print_to, " frame of %zu bytes", answer.size);
    } else {
      for (std::size_t i = 0; i < answer.size / sizeof(float); ++i) {
        float v = 0.0F;
        std::memcpy(&v, answer.bytes() + i * sizeof(float), sizeof(float));
        std::fprintf(print_to, " %g", static_cast<double>(v));
      }
    }
    std::fputc('\n', print_to);
  }
}

}  // namespace tagflow::bench::paper
