// Test helper: set a classic-control env's state, step once, compare with a known transition.
#pragma once

#include <vector>

#include <gtest/gtest.h>

#include "rl/envs/env.hpp"

namespace tagflow::envs::testing {

struct KnownTransition {
  std::vector<double> state;
  Action action;
  std::vector<double> next_state;
  double reward;
  bool terminated;
};

/// Steps `env` once from `t.state` and checks the next state to 1e-9 and the reward to 1e-5.
inline void expect_transition(Env& env, const KnownTransition& t) {
  env.set_state(t.state);
  std::vector<float> obs(env.spec().observation_space.size());
  const StepResult r = env.step(t.action, obs);
  const std::vector<double> got = env.state();
  ASSERT_EQ(got.size(), t.next_state.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], t.next_state[i], 1e-9) << "state element " << i;
  }
  EXPECT_NEAR(r.reward, t.reward, 1e-5);
  EXPECT_EQ(r.terminated, t.terminated);
  EXPECT_FALSE(r.truncated);
  std::vector<float> observed(obs.size());
  env.observe(observed);
  EXPECT_EQ(observed, obs);
}

}  // namespace tagflow::envs::testing
