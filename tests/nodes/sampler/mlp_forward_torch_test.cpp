// The sampler's plain C++ forward pass against LibTorch on the same flat weights.
#include <gtest/gtest.h>

#include <random>

#include "nodes/sampler/mlp_forward.hpp"
#include "rl/learning/dqn_learner.hpp"

namespace tagflow::nodes {
namespace {

TEST(MlpForwardTorch, EqualsDqnLearnerQValuesOnTheSameWeights) {
  learning::DqnConfig config;
  config.network = {4, {64, 64}, 2};
  config.seed = 11;
  learning::DqnLearner learner(config);
  // A few updates so the weights are not just the initialization.
  std::mt19937_64 rng(3);
  std::normal_distribution<float> normal(0.0F, 1.0F);
  learning::TransitionBatch batch;
  batch.size = 32;
  for (int i = 0; i < 32; ++i) {
    for (int j = 0; j < 4; ++j) {
      batch.observations.push_back(normal(rng));
      batch.next_observations.push_back(normal(rng));
    }
    batch.actions.push_back(i % 2);
    batch.rewards.push_back(1.0F);
    batch.discounts.push_back(0.99F);
  }
  for (int k = 0; k < 5; ++k) (void)learner.update(batch);

  MlpForward mlp({4, 64, 64, 2});
  mlp.load(learner.weights().values);
  std::vector<float> obs(256 * 4);
  for (float& x : obs) x = normal(rng);
  std::vector<float> torch_q(256 * 2);
  std::vector<float> plain_q(256 * 2);
  learner.q_values(obs.data(), 256, torch_q.data());
  mlp.forward(obs.data(), 256, plain_q.data());
  int same_argmax = 0;
  for (int row = 0; row < 256; ++row) {
    for (int a = 0; a < 2; ++a) {
      const float t = torch_q[static_cast<std::size_t>(row * 2 + a)];
      EXPECT_NEAR(plain_q[static_cast<std::size_t>(row * 2 + a)], t,
                  1e-5F * std::max(1.0F, std::abs(t)));
    }
    std::int64_t greedy = -1;
    mlp.greedy(obs.data() + row * 4, 1, &greedy);
    same_argmax += greedy == learner.greedy_action(obs.data() + row * 4) ? 1 : 0;
  }
  EXPECT_EQ(same_argmax, 256);
}

}  // namespace
}  // namespace tagflow::nodes
