#include "nodes/learner/learner_params.hpp"

#include <string>

namespace tagflow::nodes {

LearnerParams LearnerParams::read(const NodeParams& params) {
  params.check_known({"algo", "hidden", "learning_rate", "gamma", "target_update", "double_dqn",
                      "max_grad_norm", "negative_td_weight", "publish_every", "eval_every",
                      "eval_episodes", "eval_max_steps"});
  const std::string algo = params.get_string("algo", "dqn");
  if (algo != "dqn" && algo != "vdn") {
    params.fail("algo", "expected dqn or vdn (value decomposition), got '" + algo + "'");
  }
  LearnerParams p;
  p.value_decomposition = algo == "vdn";
  p.hidden = params.get_sizes("hidden", p.hidden);
  p.learning_rate = params.get_double("learning_rate", p.learning_rate, 1e-9, 1.0);
  p.gamma = params.get_double("gamma", p.gamma, 0.0, 1.0);
  p.target_update = params.get_int("target_update", p.target_update, 1);
  p.double_dqn = params.get_bool("double_dqn", p.double_dqn);
  p.max_grad_norm = params.get_double("max_grad_norm", p.max_grad_norm, 0.0, 1e9);
  p.negative_td_weight = params.get_double("negative_td_weight", p.negative_td_weight, 1e-6, 1.0);
  p.publish_every = params.get_int("publish_every", p.publish_every, 1);
  p.eval_every = params.get_int("eval_every", p.eval_every, 1);
  const std::int64_t episodes = params.get_int("eval_episodes", p.eval_episodes, 1);
  if (episodes > 1000000) params.fail("eval_episodes", "at most 1000000 episodes per evaluation");
  p.eval_episodes = static_cast<int>(episodes);
  p.eval_max_steps = params.get_int("eval_max_steps", p.eval_max_steps, 0);
  return p;
}

}  // namespace tagflow::nodes
