// Helpers shared by the rl/learning tests: seeded synthetic batches and scratch directories.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

#include "rl/learning/dqn_learner.hpp"

namespace tagflow::learning::testing {

/// A batch of `size` transitions with observations and rewards drawn from `seed`; rewards are a
/// fixed function of the observation and action, so a network can fit them.
inline TransitionBatch synthetic_batch(int observation_size, int actions, std::int64_t size,
                                       std::uint64_t seed, float discount) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<float> normal(0.0F, 1.0F);
  TransitionBatch batch;
  batch.size = size;
  for (std::int64_t i = 0; i < size * observation_size; ++i) {
    batch.observations.push_back(normal(engine));
    batch.next_observations.push_back(normal(engine));
  }
  for (std::int64_t i = 0; i < size; ++i) {
    const std::int64_t action =
        static_cast<std::int64_t>(engine() % static_cast<unsigned>(actions));
    batch.actions.push_back(action);
    const float x = batch.observations[static_cast<std::size_t>(i * observation_size)];
    batch.rewards.push_back(action == 0 ? x : -0.5F * x + 1.0F);
    batch.discounts.push_back(discount);
  }
  return batch;
}

/// A fresh empty directory under the system temp dir, removed by the destructor.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("tagflow_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tagflow::learning::testing
