// MultiAgentServer: the multi-agent node's logic — one multi-agent env (TrafficJunction4-v1, ...)
// stepped one joint step at a time with the greedy actions of its agents' policies, which
// inference servers choose (each server gets only the agents of the policies it hosts). No
// threads, no sockets, no clock: a binding calls it.
//
// One joint step: observations(policies) for each server → on_actions(answer) for each answer →
// once every agent has an action, step(): ε-greedy over the greedy actions (per agent, from the
// node's own seeded generator), one env step, and the transitions of each policy (one row per
// agent of that policy that was not yet done; observations as the policy sees them,
// agent_input.hpp). A policy whose learner is `algo: vdn` gets one joint row per step instead:
// its agents' inputs and alive flags, the joint action code and the sum of their rewards
// (append_joint_transition). An episode ends when every agent is done; the env resets at once.
//
// Evaluation: every `eval_every` joint steps (0: only at the end), and once more when the node's
// step limit is reached (finish()), the node plays `eval_episodes` greedy episodes on a second
// env with the evaluation seeds (eval_seed + k for episode k) — training pauses meanwhile and no
// transitions are made. A random policy plays the same seeds once at start: random_return() and
// random_collisions() are its figures, mean_return() and collisions_per_episode() those of the
// last evaluation. Returns are team returns: the sum of every agent's rewards over the episode.
//
// Errors: ParamError for a bad param (naming it); std::invalid_argument for an env that is not
// multi-agent. Answers naming an agent the node did not ask for, or a policy that is not the
// agent's, are refused (on_actions() returns false with a reason) and change nothing.
// Everything depends only on the seeds and the sequence of calls. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nodes/cluster/cluster_config.hpp"
#include "nodes/messages.hpp"
#include "nodes/node_params.hpp"
#include "rl/envs/multi_agent_env.hpp"

namespace tagflow::nodes {

struct MultiAgentNodeConfig {
  cluster::MultiAgentConfig agents;  // the env, the policies and which agent each serves
  double epsilon_start = 1.0;
  double epsilon_end = 0.0;
  std::int64_t epsilon_decay_steps = 20000;  // joint steps
  std::int64_t eval_every = 0;               // joint steps between evaluations; 0: at the end only
  int eval_episodes = 20;                    // 0: no evaluation (and no random baseline)
  std::uint64_t seed = 0;
  std::uint64_t eval_seed = 0;  // the same in every placement and mode
  std::uint32_t index = 0;      // replica index: tags its requests
  /// Each agent's observation is the env's, then the episode's elapsed fraction (joint steps so
  /// far / the env's max_episode_steps): agents.observation_size is then one float wider
  /// (policy_config.cpp). The env is unchanged; its time-dependent costs (TrafficJunction's
  /// −0.01·τ) become visible to the policies, so waiting stops looking free.
  bool time_input = false;
  /// Every reward in the transitions is multiplied by this (> 0): the learners' scale. Returns,
  /// evaluations and the random baseline stay in the env's units.
  double reward_scale = 1.0;
  /// The chance that a training episode is played greedily (ε = 0 for every agent), drawn at
  /// each training episode's start from the node's generator (0: never, and no draw).
  /// Deterministic policies can stall: when every car brakes, nothing changes but the clock,
  /// and the same greedy actions follow. ε-greedy training breaks such stalls at random, so
  /// their cost is never seen; greedy training episodes show it to the learners.
  double greedy_episodes = 0.0;
  /// Evaluation episodes act ε-greedily with this ε (default 0: greedy), drawn from a generator
  /// seeded by the evaluation seed alone, so every evaluation sees the same noise. DQN's own
  /// evaluations use 0.05: a deterministic policy that stalls stays stalled.
  double eval_epsilon = 0.0;
  /// Every agent's transitions carry the team's reward (the sum of every agent's rewards that
  /// step) instead of its own; a vdn policy's joint rows carry its agents' sum either way.
  bool team_reward = false;

  /// Reads params env, epsilon_start, epsilon_end, epsilon_decay_steps, eval_every,
  /// eval_episodes, eval_epsilon, time_input, reward_scale, greedy_episodes, team_reward (the env
  /// and policies come from the cluster file's `agents`).
  static MultiAgentNodeConfig from_params(const NodeParams& params,
                                          const cluster::MultiAgentConfig& agents,
                                          std::uint64_t seed, std::uint64_t eval_seed,
                                          std::uint32_t index);
};

/// The figures of one set of episodes.
struct EpisodeFigures {
  double mean_return = 0.0;
  double collisions_per_episode = 0.0;
  double mean_length = 0.0;
  int episodes = 0;
  /// The share of episodes that ended without a collision (TrafficJunction's success rate).
  double success_rate = 0.0;
  /// An evaluation's: the training joint steps before it, and whether it was the final one (played
  /// at the step limit; a run stopped otherwise, by `seconds` or a signal, has none).
  std::int64_t joint_steps = 0;
  bool final_one = false;
};

class MultiAgentServer {
 public:
  explicit MultiAgentServer(const MultiAgentNodeConfig& config);

  /// The current observation of every agent whose policy is in `policies` (ascending indices).
  [[nodiscard]] AgentObservationsMessage observations(const std::vector<int>& policies) const;
  /// The same, written into `out` (whose vectors keep their capacity: a writer reusing one
  /// message allocates nothing per step).
  void observations(const std::vector<int>& policies, AgentObservationsMessage& out) const;
  /// Takes the greedy actions of `answer`. False (and nothing taken) when it names an agent out of
  /// range, a policy that is not the agent's, or an action out of the env's range; *why says which.
  bool on_actions(const AgentActionsMessage& answer, std::string* why);
  /// True once every agent has a greedy action for the current joint step.
  [[nodiscard]] bool ready() const { return pending_ == 0; }
  /// One joint step with the greedy actions taken (ready() must hold; std::logic_error if not).
  /// The transitions of each policy, indexed by policy (empty while evaluating, and when
  /// `transitions` is false: a node whose transitions go nowhere, e.g. a serving cluster).
  std::vector<TransitionsMessage> step(bool transitions = true);
  /// The step limit was reached: play the final evaluation, then finished() holds.
  void finish();
  /// True once finish() was called and the final evaluation is over.
  [[nodiscard]] bool finished() const { return finishing_ && !evaluating_; }
  [[nodiscard]] bool evaluating() const { return evaluating_; }
  /// True when the next joint step is the first of an episode (training or evaluation): the
  /// active env was just reset.
  [[nodiscard]] bool episode_starting() const { return active().length == 0; }

  [[nodiscard]] const MultiAgentNodeConfig& config() const { return config_; }
  [[nodiscard]] int num_agents() const { return config_.agents.num_agents; }
  [[nodiscard]] std::int64_t joint_steps() const { return joint_steps_; }
  [[nodiscard]] std::int64_t episodes() const { return episodes_; }
  [[nodiscard]] std::int64_t collisions() const { return collisions_; }
  /// The current ε: 0 while evaluating and in a greedy training episode.
  [[nodiscard]] double epsilon() const;
  /// Training episodes finished since the last call: returns, lengths and collisions.
  struct Finished {
    std::vector<double> returns;
    std::vector<std::int64_t> lengths;
    std::vector<std::int64_t> collisions;
  };
  [[nodiscard]] Finished take_finished();
  /// Mean return of every evaluation so far, in order.
  [[nodiscard]] const std::vector<double>& evaluations() const { return evaluations_; }
  /// The lowest weights version among those that chose the agents' last actions (0 before any).
  [[nodiscard]] std::uint64_t weights_version() const;
  /// The last evaluation (zeros before the first).
  [[nodiscard]] const EpisodeFigures& last_evaluation() const { return last_evaluation_; }
  /// The random policy on the evaluation seeds.
  [[nodiscard]] const EpisodeFigures& random_baseline() const { return random_; }

 private:
  // One env and its running episode (training, or the evaluation's).
  struct Run {
    std::unique_ptr<envs::MultiAgentEnv> env;
    std::vector<float> observations;  // agent-major
    std::vector<std::uint8_t> dones;
    double episode_return = 0.0;
    std::int64_t length = 0, collisions = 0;
  };
  [[nodiscard]] const Run& active() const { return evaluating_ ? eval_ : train_; }
  Run& active() { return evaluating_ ? eval_ : train_; }
  void start_evaluation();
  /// Where the env writes observations meant for `out`: `out` itself, or env_rows_ with
  /// time_input, which with_time() then widens into `out`.
  [[nodiscard]] envs::Span<float> env_rows(std::vector<float>& out);
  void with_time(std::int64_t length, std::vector<float>& out) const;
  void reset_for_answers();
  /// Each agent's action: epsilon-greedy over its greedy answer.
  void choose_actions();
  /// The transitions of the joint step just taken in `run`, one message per policy.
  [[nodiscard]] std::vector<TransitionsMessage> step_transitions(const Run& run) const;
  /// `run`'s episode ended: its figures counted, then the next episode (or the evaluation's end).
  void end_episode(Run& run);
  void append_transition(TransitionsMessage& out, int policy, int agent, const float* next,
                         bool terminated) const;
  /// The joint transition of a policy whose learner is vdn (PolicyConfig::joint_transitions):
  /// one row for its agents (the layout of rl/learning/dqn_learner.hpp), unless every one of
  /// them was done before the step.
  void append_joint_transition(TransitionsMessage& out, int policy, const Run& run,
                               bool time_limit) const;
  EpisodeFigures play_random();
  /// A training episode starts: draws whether it is played greedily (greedy_episodes).
  void draw_greedy_episode();

  MultiAgentNodeConfig config_;
  Run train_, eval_;
  std::size_t observation_size_ = 0;  // per agent, as the policies see it
  std::size_t env_width_ = 0;         // per agent, as the env writes it
  std::vector<float> env_rows_;       // the env's last observations
  std::mt19937_64 rng_;
  std::mt19937_64 eval_rng_;  // evaluation noise (eval_epsilon), reseeded at each evaluation
  std::vector<float> next_observations_, rewards_;
  std::vector<std::uint8_t> next_dones_;
  std::vector<std::int64_t> greedy_, actions_;
  std::vector<std::uint64_t> versions_;  // per agent: the weights that chose its greedy action
  std::vector<bool> answered_;
  bool greedy_episode_ = false;  // the running training episode is played with ε = 0
  int pending_ = 0;
  std::int64_t joint_steps_ = 0, episodes_ = 0, collisions_ = 0;
  Finished finished_;
  // Evaluation.
  bool evaluating_ = false, finishing_ = false;
  std::int64_t next_eval_ = 0;
  int eval_episode_ = 0;
  double eval_return_sum_ = 0.0, eval_collision_sum_ = 0.0, eval_length_sum_ = 0.0;
  int eval_successes_ = 0;
  std::vector<double> evaluations_;
  EpisodeFigures last_evaluation_, random_;
};

}  // namespace tagflow::nodes
