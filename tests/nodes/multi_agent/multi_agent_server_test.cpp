// Tests of nodes/multi_agent/multi_agent_server.hpp: each server is asked only for its agents,
// answers are checked before they count, a joint step makes one transition per agent in its
// policy's message, and the evaluation beside random play is reproducible.
#include "nodes/multi_agent/multi_agent_server.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "nodes/cluster/cluster_config.hpp"
#include "rl/envs/registry.hpp"

namespace tagflow::nodes {
namespace {

/// A TrafficJunction4-v1 file's agents with `policies` (the file's policies and agents keys).
cluster::MultiAgentConfig tj4_with(const std::string& policies) {
  const cluster::ClusterConfig c = cluster::parse_cluster_config(
      "cluster: m\n" + policies +
          "nodes:\n  junction: {kind: multi_agent, data_port: 7000, params: {env: "
          "TrafficJunction4-v1}}\n  inference: {kind: inference, data_port: 7100}\n"
          "connections:\n  - {from: junction.observations, to: inference.observations}\n"
          "  - {from: inference.actions, to: junction.actions, after: 0}\nstop: {env_steps: 10}\n",
      "m.yaml");
  return c.multi_agent;
}

cluster::MultiAgentConfig groups_of_tj4() {
  return tj4_with(
      "policies:\n  north: {}\n  south: {}\nagents: {0: north, 1: north, \"*\": south}\n");
}

/// One policy per agent (per_agent: true): car_0 ... car_3.
cluster::MultiAgentConfig one_policy_per_car() {
  return tj4_with("policies:\n  car: {per_agent: true}\n");
}

MultiAgentNodeConfig config(int eval_episodes = 0) {
  MultiAgentNodeConfig c;
  c.agents = groups_of_tj4();
  c.epsilon_start = c.epsilon_end = 0.0;
  c.eval_episodes = eval_episodes;
  c.seed = 3;
  c.eval_seed = 99;
  return c;
}

/// Every agent's answer: action `action`, from the policy the file gives it.
AgentActionsMessage answer_all(const MultiAgentServer& server, std::int64_t action) {
  AgentActionsMessage a;
  for (int agent = 0; agent < server.num_agents(); ++agent) {
    a.agents.push_back(static_cast<std::uint32_t>(agent));
    a.policies.push_back(static_cast<std::uint32_t>(
        server.config().agents.agent_policy[static_cast<std::size_t>(agent)]));
    a.versions.push_back(7);
    a.actions.push_back(action);
  }
  return a;
}

/// A second TrafficJunction4-v1 stepped with the same actions as a server: what each joint
/// step's transitions must hold. obs/dones are before the step, next/next_dones after it.
struct ReferenceEnv {
  static constexpr std::size_t kAgents = 4, kWidth = 324;
  explicit ReferenceEnv(std::uint64_t seed) { env->reset(seed, envs::Span<float>(obs)); }

  envs::MultiAgentStepInfo step(const std::vector<std::int64_t>& actions) {
    ++length;
    return env->step(envs::Span<const std::int64_t>(actions), envs::Span<float>(next),
                     envs::Span<float>(rewards), envs::Span<std::uint8_t>(next_dones));
  }
  /// After the checks: the step's results become the current state (a new episode when done).
  void advance(const envs::MultiAgentStepInfo& info) {
    obs.swap(next);
    dones = next_dones;
    if (!info.episode_done) return;
    env->reset(std::nullopt, envs::Span<float>(obs));
    std::fill(dones.begin(), dones.end(), 0);
    length = 0;
    ++episodes;
  }

  std::unique_ptr<envs::MultiAgentEnv> env = envs::make_multi_agent_env("TrafficJunction4-v1");
  std::vector<float> obs = std::vector<float>(kAgents * kWidth);
  std::vector<float> next = std::vector<float>(kAgents * kWidth);
  std::vector<float> rewards = std::vector<float>(kAgents);
  std::vector<std::uint8_t> dones = std::vector<std::uint8_t>(kAgents, 0);
  std::vector<std::uint8_t> next_dones = std::vector<std::uint8_t>(kAgents);
  int length = 0, episodes = 0;
};

TEST(MultiAgentServer, EachServerIsAskedOnlyForTheAgentsOfItsPolicies) {
  const MultiAgentServer server(config());
  const AgentObservationsMessage north = server.observations({0});
  EXPECT_EQ(north.agents, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(north.policies, (std::vector<std::uint32_t>{0, 0}));
  EXPECT_EQ(north.observations.size(), 2U * 324U);
  EXPECT_EQ(server.observations({1}).agents, (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(server.observations({0, 1}).rows(), 4U);
}

TEST(MultiAgentServer, ObservationsWrittenIntoAnOldMessageReplaceAllOfIt) {
  const MultiAgentServer server(config());
  AgentObservationsMessage reused = server.observations({0, 1});  // four rows, to be overwritten
  reused.source = 9;
  server.observations({1}, reused);
  const AgentObservationsMessage fresh = server.observations({1});
  EXPECT_EQ(reused.source, fresh.source);
  EXPECT_EQ(reused.observation_size, fresh.observation_size);
  EXPECT_EQ(reused.agents, fresh.agents);
  EXPECT_EQ(reused.policies, fresh.policies);
  EXPECT_EQ(reused.observations, fresh.observations);
  EXPECT_EQ(encode(reused), encode(fresh));
}

TEST(MultiAgentServer, AnswersForTheWrongAgentOrPolicyAreRefusedAndChangeNothing) {
  MultiAgentServer server(config());
  std::string why;
  AgentActionsMessage wrong = answer_all(server, 0);
  wrong.policies[2] = 0;  // agent 2 belongs to south
  EXPECT_FALSE(server.on_actions(wrong, &why));
  EXPECT_NE(why.find("agent 2"), std::string::npos) << why;
  AgentActionsMessage unknown = answer_all(server, 0);
  unknown.agents[0] = 9;
  EXPECT_FALSE(server.on_actions(unknown, &why));
  AgentActionsMessage out_of_range = answer_all(server, 0);
  out_of_range.actions[1] = 5;
  EXPECT_FALSE(server.on_actions(out_of_range, &why));
  EXPECT_FALSE(server.ready());
  EXPECT_THROW((void)server.step(), std::logic_error);
}

TEST(MultiAgentServer, AJointStepNeedsEveryAgentAndMakesOneRowPerAgentInItsPolicy) {
  MultiAgentServer server(config());
  AgentActionsMessage all = answer_all(server, 1);
  AgentActionsMessage north = all, south = all;
  north.agents.resize(2), north.policies.resize(2), north.versions.resize(2),
      north.actions.resize(2);
  south.agents.erase(south.agents.begin(), south.agents.begin() + 2);
  south.policies.erase(south.policies.begin(), south.policies.begin() + 2);
  south.versions.erase(south.versions.begin(), south.versions.begin() + 2);
  south.actions.erase(south.actions.begin(), south.actions.begin() + 2);
  EXPECT_EQ(server.weights_version(), 0U);          // no answer yet
  south.versions.assign(south.versions.size(), 5);  // the south policy's server lags
  ASSERT_TRUE(server.on_actions(north, nullptr));
  EXPECT_FALSE(server.ready());
  ASSERT_TRUE(server.on_actions(south, nullptr));
  ASSERT_TRUE(server.ready());
  // The lowest version among those that chose the agents' actions (tagflow_weights_version).
  EXPECT_EQ(server.weights_version(), 5U);
  const std::vector<TransitionsMessage> rows = server.step();
  ASSERT_EQ(rows.size(), 2U);
  for (const TransitionsMessage& m : rows) {
    EXPECT_EQ(m.rows(), 2U);
    EXPECT_EQ(m.observation_size, 324U + 4U);  // a group's policy sees the agent index
    EXPECT_EQ(m.actions, (std::vector<std::int64_t>{1, 1}));
  }
  EXPECT_EQ(rows[0].weights_version, 7U);  // each policy's rows: its own weights' version
  EXPECT_EQ(rows[1].weights_version, 5U);
  // The agent feature: the one-hot of agents 0 and 1 after their observations.
  EXPECT_EQ(rows[0].observations[324], 1.0F);
  EXPECT_EQ(rows[0].observations[328 + 325], 1.0F);
  EXPECT_EQ(server.joint_steps(), 1);
  EXPECT_FALSE(server.ready());  // the next step waits for new answers
}

// Agent i's observation row, action, reward and done flag reach policy i's transitions and no
// other's, step after step and across an episode's end, as an env of the same seed stepped with
// the same actions reports them; agents done before a step make no row, and the time limit is
// no terminal state.
TEST(MultiAgentServer, EachAgentsOwnRowActionRewardAndDoneReachItsPolicysTransitions) {
  MultiAgentNodeConfig c = config();
  c.agents = one_policy_per_car();
  ASSERT_EQ(c.agents.policies.size(), 4U);
  MultiAgentServer server(c);
  constexpr std::size_t kAgents = ReferenceEnv::kAgents, kWidth = ReferenceEnv::kWidth;
  ReferenceEnv ref(c.seed);
  const std::vector<float>& obs = ref.obs;
  std::vector<std::int64_t> actions(kAgents);
  int done_rows_skipped = 0, terminal_rows = 0;
  for (int step = 0; step < 260; ++step) {
    for (std::size_t a = 0; a < kAgents; ++a) {
      const AgentObservationsMessage own = server.observations({static_cast<int>(a)});
      ASSERT_EQ(own.agents, (std::vector<std::uint32_t>{static_cast<std::uint32_t>(a)}));
      ASSERT_TRUE(std::equal(own.observations.begin(), own.observations.end(),
                             obs.begin() + static_cast<std::ptrdiff_t>(a * kWidth)));
      // Agent-specific actions: car a brakes on steps where (step + a) % (a + 2) == 0.
      actions[a] = (step + static_cast<int>(a)) % (static_cast<int>(a) + 2) == 0 ? 1 : 0;
      AgentActionsMessage answer;
      answer.agents = {static_cast<std::uint32_t>(a)};
      answer.policies = {static_cast<std::uint32_t>(a)};
      answer.versions = {static_cast<std::uint64_t>(a + 1)};
      answer.actions = {actions[a]};
      ASSERT_TRUE(server.on_actions(answer, nullptr));
    }
    const std::vector<TransitionsMessage> rows = server.step();
    const envs::MultiAgentStepInfo info = ref.step(actions);
    ASSERT_EQ(rows.size(), kAgents);
    for (std::size_t a = 0; a < kAgents; ++a) {
      const TransitionsMessage& m = rows[a];
      if (ref.dones[a] != 0) {
        EXPECT_EQ(m.rows(), 0U) << "agent " << a << " was done before step " << step;
        ++done_rows_skipped;
        continue;
      }
      ASSERT_EQ(m.rows(), 1U) << "agent " << a << " step " << step;
      EXPECT_EQ(m.weights_version, a + 1);
      EXPECT_EQ(m.actions[0], actions[a]);
      EXPECT_EQ(m.rewards[0], ref.rewards[a]) << "agent " << a << " step " << step;
      const bool terminal = ref.next_dones[a] != 0 && ref.length < 100;
      EXPECT_EQ(m.terminated[0], terminal ? 1 : 0) << "agent " << a << " step " << step;
      terminal_rows += terminal ? 1 : 0;
      EXPECT_EQ(std::memcmp(m.observations.data(), obs.data() + a * kWidth, kWidth * 4), 0);
      EXPECT_EQ(std::memcmp(m.next_observations.data(), ref.next.data() + a * kWidth, kWidth * 4),
                0);
    }
    ref.advance(info);
  }
  EXPECT_EQ(server.episodes(), ref.episodes);
  EXPECT_GE(ref.episodes, 2);
  EXPECT_GT(done_rows_skipped, 0);  // some car arrived before the others
  EXPECT_GT(terminal_rows, 0);
}

/// One policy for the four cars, trained by a vdn learner: its transitions are joint.
cluster::MultiAgentConfig one_policy_with_vdn() {
  const cluster::ClusterConfig c = cluster::parse_cluster_config(
      "cluster: m\npolicies:\n  car: {}\n"
      "nodes:\n  junction: {kind: multi_agent, data_port: 7000, params: {env: "
      "TrafficJunction4-v1}}\n  inference: {kind: inference, data_port: 7100}\n"
      "  replay: {kind: replay, data_port: 7200}\n"
      "  learner: {kind: learner, data_port: 7300, params: {algo: vdn}}\n"
      "connections:\n  - {from: junction.observations, to: inference.observations}\n"
      "  - {from: inference.actions, to: junction.actions, after: 0}\n"
      "  - {from: junction.transitions, to: replay.transitions}\n"
      "  - {from: replay.batches, to: learner.batches}\n"
      "  - {from: learner.weights, to: inference.weights, after: 0}\n"
      "stop: {env_steps: 10}\n",
      "m.yaml");
  return c.multi_agent;
}

// A vdn policy's message has one joint row per step: every car's input (its observation and
// one-hot index), alive flags before and after, the joint action code and the team reward.
TEST(MultiAgentServer, AVdnPolicyGetsOneJointRowOfItsAgentsPerStep) {
  MultiAgentNodeConfig c = config();
  c.agents = one_policy_with_vdn();
  ASSERT_TRUE(c.agents.policies.at(0).joint_transitions);
  MultiAgentServer server(c);
  constexpr std::size_t kAgents = ReferenceEnv::kAgents, kWidth = ReferenceEnv::kWidth;
  constexpr std::size_t kInput = kWidth + kAgents, kRow = kAgents * (kInput + 1);
  ReferenceEnv ref(c.seed);
  const std::vector<float>& obs = ref.obs;
  const std::vector<float>& next = ref.next;
  const std::vector<std::uint8_t>& dones = ref.dones;
  std::vector<std::int64_t> actions(kAgents);
  int partly_alive = 0, terminal_rows = 0;
  for (int step = 0; step < 260; ++step) {
    AgentActionsMessage answer = answer_all(server, 0);
    for (std::size_t a = 0; a < kAgents; ++a) {
      actions[a] = (step + static_cast<int>(a)) % (static_cast<int>(a) + 2) == 0 ? 1 : 0;
      answer.actions[a] = actions[a];
    }
    ASSERT_TRUE(server.on_actions(answer, nullptr));
    const std::vector<TransitionsMessage> rows = server.step();
    const envs::MultiAgentStepInfo info = ref.step(actions);
    ASSERT_EQ(rows.size(), 1U);
    const TransitionsMessage& m = rows[0];
    ASSERT_EQ(m.observation_size, kRow);
    ASSERT_EQ(m.rows(), 1U) << "step " << step;
    std::int64_t code = 0;
    float team = 0.0F;
    bool all_ended = true;
    int alive_now = 0;
    for (std::size_t a = 0; a < kAgents; ++a) {
      code += actions[a] << a;
      team += ref.rewards[a];
      const bool ended = dones[a] != 0 || (ref.next_dones[a] != 0 && ref.length < 100);
      all_ended = all_ended && ended;
      alive_now += dones[a] == 0 ? 1 : 0;
      EXPECT_EQ(
          std::memcmp(m.observations.data() + a * kInput, obs.data() + a * kWidth, kWidth * 4), 0);
      EXPECT_EQ(std::memcmp(m.next_observations.data() + a * kInput, next.data() + a * kWidth,
                            kWidth * 4),
                0);
      for (std::size_t b = 0; b < kAgents; ++b) {
        EXPECT_EQ(m.observations[a * kInput + kWidth + b], a == b ? 1.0F : 0.0F);
      }
      EXPECT_EQ(m.observations[kAgents * kInput + a], dones[a] == 0 ? 1.0F : 0.0F);
      EXPECT_EQ(m.next_observations[kAgents * kInput + a], ended ? 0.0F : 1.0F)
          << "agent " << a << " step " << step;
    }
    EXPECT_EQ(m.actions[0], code);
    EXPECT_FLOAT_EQ(m.rewards[0], team);
    EXPECT_EQ(m.terminated[0], all_ended ? 1 : 0) << "step " << step;
    EXPECT_EQ(m.weights_version, 7U);
    partly_alive += alive_now > 0 && alive_now < 4 ? 1 : 0;
    terminal_rows += all_ended ? 1 : 0;
    ref.advance(info);
  }
  EXPECT_GE(ref.episodes, 2);
  EXPECT_GT(partly_alive, 0);  // some car arrived before the others
  EXPECT_GT(terminal_rows, 0);
}

// greedy_episodes: 1 plays every training episode with ε = 0 (the greedy answers are the actions
// taken) while 0 leaves ε-greedy alone; reward_scale multiplies the transitions' rewards only;
// team_reward gives every row the sum of the step's rewards.
TEST(MultiAgentServer, GreedyEpisodesTakeTheGreedyActionsAndRewardScaleScalesTransitions) {
  MultiAgentNodeConfig c = config();
  c.epsilon_start = c.epsilon_end = 1.0;
  c.greedy_episodes = 1.0;
  MultiAgentServer greedy(c);
  c.team_reward = true;
  MultiAgentServer team(c);
  c.team_reward = false;
  c.reward_scale = 10.0;
  MultiAgentServer scaled(c);
  c.greedy_episodes = 0.0;
  MultiAgentServer exploring(c);
  EXPECT_EQ(greedy.epsilon(), 0.0);
  EXPECT_EQ(exploring.epsilon(), 1.0);
  int explored = 0, rows = 0;
  for (int step = 0; step < 300; ++step) {
    const std::int64_t action = step % 3 == 0 ? 1 : 0;
    for (MultiAgentServer* s : {&greedy, &team, &scaled, &exploring}) {
      ASSERT_TRUE(s->on_actions(answer_all(*s, action), nullptr));
    }
    const std::vector<TransitionsMessage> plain = greedy.step();
    const std::vector<TransitionsMessage> times_ten = scaled.step();
    const std::vector<TransitionsMessage> shared = team.step();
    float sum = 0.0F;
    for (const TransitionsMessage& m : plain) {
      for (const float r : m.rewards) sum += r;
    }
    for (const TransitionsMessage& m : shared) {
      for (const float r : m.rewards) EXPECT_FLOAT_EQ(r, sum) << "step " << step;
    }
    for (const TransitionsMessage& m : exploring.step()) {
      for (const std::int64_t a : m.actions) explored += a != action ? 1 : 0;
    }
    ASSERT_EQ(plain.size(), times_ten.size());
    for (std::size_t p = 0; p < plain.size(); ++p) {
      ASSERT_EQ(plain[p].rows(), times_ten[p].rows());
      for (std::size_t i = 0; i < plain[p].rows(); ++i) {
        EXPECT_EQ(plain[p].actions[i], action) << "step " << step;
        EXPECT_FLOAT_EQ(times_ten[p].rewards[i], 10.0F * plain[p].rewards[i]);
        ++rows;
      }
    }
  }
  EXPECT_GT(rows, 300);
  EXPECT_GT(explored, 50);  // ε = 1 without greedy episodes: about half the actions differ
  EXPECT_EQ(greedy.take_finished().returns, scaled.take_finished().returns);  // env units
}

// time_input: each agent's row is the env's observation, then the episode's elapsed fraction,
// in requests and transitions alike.
TEST(MultiAgentServer, TimeInputAppendsTheElapsedFractionToEveryAgentsRow) {
  MultiAgentNodeConfig c = config();
  c.agents = one_policy_per_car();
  c.agents.observation_size = 325;
  c.time_input = true;
  MultiAgentServer server(c);
  const auto reference = envs::make_multi_agent_env("TrafficJunction4-v1");
  std::vector<float> env_obs(4 * 324), rewards(4);
  std::vector<std::uint8_t> dones(4);
  reference->reset(c.seed, envs::Span<float>(env_obs));
  const std::vector<std::int64_t> gas(4, 0);
  for (int step = 0; step < 3; ++step) {
    const AgentObservationsMessage all = server.observations({0, 1, 2, 3});
    ASSERT_EQ(all.observation_size, 325U);
    for (std::size_t a = 0; a < 4; ++a) {
      EXPECT_TRUE(std::equal(env_obs.begin() + static_cast<std::ptrdiff_t>(a * 324),
                             env_obs.begin() + static_cast<std::ptrdiff_t>(a * 324 + 324),
                             all.observations.begin() + static_cast<std::ptrdiff_t>(a * 325)));
      EXPECT_FLOAT_EQ(all.observations[a * 325 + 324], static_cast<float>(step) / 100.0F);
    }
    ASSERT_TRUE(server.on_actions(answer_all(server, 0), nullptr));
    const std::vector<TransitionsMessage> rows = server.step();
    (void)reference->step(envs::Span<const std::int64_t>(gas), envs::Span<float>(env_obs),
                          envs::Span<float>(rewards), envs::Span<std::uint8_t>(dones));
    ASSERT_EQ(rows[1].observation_size, 325U);
    EXPECT_FLOAT_EQ(rows[1].observations[324], static_cast<float>(step) / 100.0F);
    EXPECT_FLOAT_EQ(rows[1].next_observations[324], static_cast<float>(step + 1) / 100.0F);
    EXPECT_EQ(rows[1].rewards[0], rewards[1]);
  }
  // The width must match the file's: a node without time_input refuses policies that expect it.
  c.time_input = false;
  EXPECT_THROW(MultiAgentServer{c}, std::invalid_argument);
}

TEST(MultiAgentServer, TheFinalEvaluationPlaysTheRandomPolicysSeedsGreedily) {
  const auto play = [] {
    MultiAgentServer server(config(2));
    server.finish();
    EXPECT_TRUE(server.evaluating());
    int steps = 0;
    while (!server.finished()) {
      EXPECT_TRUE(server.on_actions(answer_all(server, 1), nullptr));  // always brake
      EXPECT_TRUE(server.step().empty());  // no transitions while evaluating
      ++steps;
    }
    EXPECT_EQ(server.joint_steps(), 0);
    EXPECT_EQ(steps, 2 * 100);  // TrafficJunction episodes last max_steps
    return std::make_pair(server.last_evaluation(), server.random_baseline());
  };
  const auto [greedy, random] = play();
  EXPECT_EQ(greedy.episodes, 2);
  EXPECT_EQ(greedy.collisions_per_episode, 0.0);  // nobody moves, nobody collides
  EXPECT_LT(greedy.mean_return, 0.0);
  EXPECT_NE(random.mean_return, 0.0);
  const auto [again, random_again] = play();
  EXPECT_EQ(again.mean_return, greedy.mean_return);
  EXPECT_EQ(random_again.mean_return, random.mean_return);
}

// eval_epsilon: evaluation episodes act ε-greedily, with noise drawn from the evaluation seed
// alone, so two nodes with other training seeds evaluate alike, and the greedy stall (every car
// braking until the step limit) is broken.
TEST(MultiAgentServer, EvaluationEpsilonDrawsItsNoiseFromTheEvaluationSeedAlone) {
  const auto evaluate = [](double eval_epsilon, std::uint64_t seed) {
    MultiAgentNodeConfig c = config(2);
    c.eval_epsilon = eval_epsilon;
    c.seed = seed;
    MultiAgentServer server(c);
    server.finish();
    while (!server.finished()) {
      EXPECT_TRUE(server.on_actions(answer_all(server, 1), nullptr));  // always brake
      EXPECT_TRUE(server.step().empty());
    }
    return server.last_evaluation();
  };
  const EpisodeFigures greedy = evaluate(0.0, 3);
  const EpisodeFigures noisy = evaluate(0.5, 3);
  const EpisodeFigures other_seed = evaluate(0.5, 4);
  EXPECT_EQ(greedy.collisions_per_episode, 0.0);
  EXPECT_NE(noisy.mean_return, greedy.mean_return);  // cars moved
  EXPECT_EQ(noisy.mean_return, other_seed.mean_return);
  EXPECT_EQ(noisy.collisions_per_episode, other_seed.collisions_per_episode);
}

}  // namespace
}  // namespace tagflow::nodes
