// Tests of nodes/inference/policy_bank.hpp (and the StackedMlp under it): stacked policies answer
// exactly as each policy's own network would, the answers do not depend on which policies share a
// server, weights reach only their policy, TorchScript files (ours and Python's) are served, and
// bad requests or files are refused by name.
#include "nodes/inference/policy_bank.hpp"

#include <ATen/core/Tensor.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/from_blob.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

#include "nodes/multi_agent/agent_input.hpp"
#include "nodes/node_params.hpp"
#include "rl/learning/policy_network.hpp"
#include "rl/learning/stacked_mlp.hpp"
#include "rl/learning/torchscript_policy.hpp"
#include "tests/support/python_torch.hpp"

namespace tagflow::nodes {
namespace {

namespace fs = std::filesystem;

/// TrafficJunction4-v1 facts with `policies` policies of `hidden`: per agent (4) or one shared.
cluster::MultiAgentConfig tj4(bool per_agent, const std::string& hidden = "16") {
  cluster::MultiAgentConfig m;
  m.env = "TrafficJunction4-v1";
  m.num_agents = 4;
  m.observation_size = 324;
  m.num_actions = 2;
  const int count = per_agent ? 4 : 1;
  for (int p = 0; p < count; ++p) {
    cluster::PolicyConfig policy;
    policy.name = "car_" + std::to_string(p);
    policy.hidden = hidden;
    policy.agent_id_input = !per_agent;
    policy.agents = per_agent ? std::vector<int>{p} : std::vector<int>{0, 1, 2, 3};
    m.policies.push_back(policy);
  }
  m.agent_policy = per_agent ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{0, 0, 0, 0};
  return m;
}

/// One request with every agent whose policy is in `policies`, observations from `seed`.
AgentObservationsMessage request(const cluster::MultiAgentConfig& m,
                                 const std::vector<int>& policies, int seed) {
  AgentObservationsMessage r;
  r.observation_size = static_cast<std::uint32_t>(m.observation_size);
  for (int a = 0; a < m.num_agents; ++a) {
    const int p = m.agent_policy[static_cast<std::size_t>(a)];
    if (std::find(policies.begin(), policies.end(), p) == policies.end()) continue;
    r.agents.push_back(static_cast<std::uint32_t>(a));
    r.policies.push_back(static_cast<std::uint32_t>(p));
    for (int i = 0; i < m.observation_size; ++i) {
      r.observations.push_back(
          static_cast<float>(((a + 1) * 7919 + i * 31 + seed * 17) % 97) / 48.0F - 1.0F);
    }
  }
  return r;
}

/// A server hosting TrafficJunction4-v1's four per-agent policies (seed 21).
PolicyBankConfig four_per_agent() {
  PolicyBankConfig c;
  c.agents = tj4(true);
  c.hosted = {0, 1, 2, 3};
  c.seed = 21;
  return c;
}

/// What policy p's own network (PolicyNetwork with the bank's initial weights) chooses for row j.
std::int64_t own_choice(const PolicyBankConfig& c, const AgentObservationsMessage& r,
                        std::size_t j) {
  const int p = static_cast<int>(r.policies[j]);
  const learning::PolicyNetwork net(c.network(p), c.seed + static_cast<std::uint64_t>(p));
  std::vector<float> input(static_cast<std::size_t>(c.agents.input_size(p)));
  write_agent_input(c.agents, p, static_cast<int>(r.agents[j]),
                    r.observations.data() + j * r.observation_size, input.data());
  return net.act_one(input.data());
}

TEST(StackedMlp, EachSlotScoresAsItsOwnNetwork) {
  const learning::MlpSpec spec{5, {8}, 3};
  learning::StackedMlp stacked(spec, 3, 2, /*seed=*/4);
  stacked.load(1, learning::init_mlp_parameters(spec, 9));
  std::vector<float> inputs(3 * 2 * 5);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    inputs[i] = 0.1F * static_cast<float>(i % 11) - 0.5F;
  const std::vector<float> scores = stacked.scores(inputs.data());
  for (std::size_t slot = 0; slot < 3; ++slot) {
    const learning::PolicyNetwork own(spec, slot == 1 ? 9 : 4);
    std::vector<float> expected(2 * 3);
    own.scores(inputs.data() + slot * 10, 2, expected.data());
    for (std::size_t k = 0; k < expected.size(); ++k) {
      EXPECT_NEAR(scores[slot * 6 + k], expected[k], 1e-5F) << slot << " " << k;
    }
  }
  EXPECT_THROW(stacked.load(3, learning::init_mlp_parameters(spec, 1)), std::invalid_argument);
  EXPECT_THROW(stacked.load(0, std::vector<float>(3)), std::invalid_argument);
}

// Layers of fewer than 400 multiply-adds (a 64 → 2 output layer of up to three rows, a 16 → 7 one)
// are summed in StackedMlp's own loop: bit for bit ATen's baddbmm of the same hidden layer.
TEST(StackedMlp, SmallLayersGiveTheBitsOfAtensBatchedProduct) {
  for (const auto& [h, o] : {std::pair<int, int>{64, 2}, std::pair<int, int>{16, 7}}) {
    const learning::MlpSpec two{6, {h}, o};
    const learning::MlpSpec one{6, {}, h};  // the first layer alone, before its ReLU
    const auto hidden_size = static_cast<std::size_t>(h);
    const auto out = static_cast<std::size_t>(o);
    const std::size_t first_size = 6 * hidden_size + hidden_size;
    for (const std::int64_t rows : {1, 3}) {
      learning::StackedMlp stacked(two, 3, rows);
      learning::StackedMlp hidden_layer(one, 3, rows);
      std::vector<float> w1(3 * hidden_size * out);  // per slot [in, out], as baddbmm takes it
      std::vector<float> b1(3 * out);
      for (std::size_t slot = 0; slot < 3; ++slot) {
        const std::vector<float> p = learning::init_mlp_parameters(two, 11 + slot);
        stacked.load(slot, p);
        hidden_layer.load(slot, std::vector<float>(p.begin(), p.begin() + first_size));
        for (std::size_t j = 0; j < out; ++j) {
          for (std::size_t i = 0; i < hidden_size; ++i) {
            w1[(slot * hidden_size + i) * out + j] = p[first_size + j * hidden_size + i];
          }
          b1[slot * out + j] = p[first_size + out * hidden_size + j];
        }
      }
      std::vector<float> inputs(static_cast<std::size_t>(3 * rows * 6));
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        inputs[i] = static_cast<float>((i * 37) % 23) / 7.0F - 1.5F;
      }
      std::vector<float> hidden = hidden_layer.scores(inputs.data());
      for (float& x : hidden) x = std::max(x, 0.0F);
      const at::Tensor expected = at::baddbmm(at::from_blob(b1.data(), {3, 1, o}),
                                              at::from_blob(hidden.data(), {3, rows, h}),
                                              at::from_blob(w1.data(), {3, h, o}));
      const std::vector<float> scores = stacked.scores(inputs.data());
      ASSERT_EQ(scores.size(), static_cast<std::size_t>(expected.numel()));
      const float* want = expected.data_ptr<float>();
      for (std::size_t k = 0; k < scores.size(); ++k) {
        EXPECT_EQ(std::memcmp(&scores[k], &want[k], sizeof(float)), 0)
            << h << " -> " << o << ", rows " << rows << ", score " << k << ": " << scores[k]
            << " against " << want[k];
      }
    }
  }
}

TEST(StackedMlp, MostlyZeroWideRowsScoreAsTheDenseNetworkAndEachRowAloneDecidesItsBits) {
  // TrafficJunction10-v1's shape: 1,350 inputs of which a few dozen are set.
  const learning::MlpSpec spec{1350, {64}, 2};
  learning::StackedMlp three(spec, 3, 2, /*seed=*/6);
  three.load(1, learning::init_mlp_parameters(spec, 8));
  std::vector<float> inputs(3 * 2 * 1350, 0.0F);
  for (std::size_t row = 0; row < 6; ++row) {
    for (std::size_t k = 0; k < 30; ++k) {
      inputs[row * 1350 + (row * 37 + k * 43) % 1350] = 0.25F + 0.05F * static_cast<float>(k % 7);
    }
  }
  inputs[5 * 1350 + 1349] = -0.0F;  // a negative zero is skipped like any zero
  const std::vector<float> scores = three.scores(inputs.data());
  for (std::size_t slot = 0; slot < 3; ++slot) {
    const learning::PolicyNetwork own(spec, slot == 1 ? 8 : 6);
    std::vector<float> expected(2 * 2);
    own.scores(inputs.data() + slot * 2 * 1350, 2, expected.data());
    for (std::size_t k = 0; k < expected.size(); ++k) {
      EXPECT_NEAR(scores[slot * 4 + k], expected[k], 1e-5F) << slot << " " << k;
    }
  }
  // The same policy alone, in a stack of one: the same bits for its rows (a digest must not
  // depend on which policies share a server).
  learning::StackedMlp alone(spec, 1, 2);
  alone.load(0, learning::init_mlp_parameters(spec, 8));
  const std::vector<float> own_scores = alone.scores(inputs.data() + 2 * 1350);
  for (std::size_t k = 0; k < own_scores.size(); ++k) EXPECT_EQ(own_scores[k], scores[4 + k]) << k;
}

/// `rows` mostly-zero rows of `width` floats: about 30 set per row, from `seed`; -0.0 in some.
std::vector<float> one_hot_rows(std::size_t rows, std::size_t width, int seed) {
  std::vector<float> x(rows * width, 0.0F);
  for (std::size_t row = 0; row < rows; ++row) {
    for (std::size_t k = 0; k < 30; ++k) {
      const std::size_t at = (row * 37 + k * 43 + static_cast<std::size_t>(seed) * 11) % width;
      x[row * width + at] = k % 9 == 4 ? -0.0F : 0.25F + 0.1F * static_cast<float>((k + row) % 7);
    }
  }
  return x;
}

TEST(StackedMlp, ReadFromAFramesNonZeroFloatsEachSlotActsAsOnItsDenseRow) {
  const learning::MlpSpec spec{1350, {64}, 5};  // TrafficJunction10-v1's row, five actions
  learning::StackedMlp stacked(spec, 3, 1, /*seed=*/6);
  stacked.load(1, learning::init_mlp_parameters(spec, 8));
  for (int seed = 0; seed < 20; ++seed) {
    // Five rows in one frame; the stack reads rows 1-3 (the frame's first row is another's).
    AgentObservationsMessage m{
        0, 1350, {0, 1, 2, 3, 4}, {0, 0, 0, 0, 0}, one_hot_rows(5, 1350, seed)};
    const Bytes frame = encode(m);
    const std::optional<SparseFloats> nonzero = sparse_observations(frame.data(), frame.size());
    ASSERT_TRUE(nonzero.has_value());
    std::vector<std::int64_t> from_rows(3), from_frame(3);
    stacked.act(m.observations.data() + 1350, 1, from_rows.data());
    stacked.act(*nonzero, 1350, from_frame.data());
    EXPECT_EQ(from_frame, from_rows) << "seed " << seed;
  }
}

TEST(PolicyBank, StackedPoliciesAnswerAsEachPolicyAloneWouldWhateverTheyShareAServerWith) {
  PolicyBankConfig all = four_per_agent();
  PolicyBank bank(all);
  EXPECT_EQ(bank.stacked_groups(), 1U);
  EXPECT_EQ(bank.unstacked(), 0U);
  PolicyBankConfig half = all;
  half.hosted = {2, 3};
  PolicyBank other(half);
  for (int seed = 0; seed < 5; ++seed) {
    const AgentObservationsMessage r = request(all.agents, {0, 1, 2, 3}, seed);
    const std::vector<AgentActionsMessage> answers = bank.serve({r});
    ASSERT_EQ(answers.size(), 1U);
    ASSERT_EQ(answers[0].rows(), 4U);
    for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(answers[0].actions[j], own_choice(all, r, j));
    const AgentObservationsMessage r2 = request(all.agents, {2, 3}, seed);
    const AgentActionsMessage a2 = other.serve({r2}).at(0);
    EXPECT_EQ(a2.actions[0], answers[0].actions[2]);
    EXPECT_EQ(a2.actions[1], answers[0].actions[3]);
  }
  EXPECT_EQ(bank.stacked_passes(), 5U);  // one batched product per tag, not one per policy
}

TEST(PolicyBank, RowsReadInPlaceCopiedOrPaddedGiveEachAgentTheSameAction) {
  PolicyBankConfig c = four_per_agent();
  PolicyBank bank(c);
  for (int seed = 0; seed < 5; ++seed) {
    // Agents in slot order: the pass reads the request where it lies.
    const AgentObservationsMessage in_order = request(c.agents, {0, 1, 2, 3}, seed);
    // The same rows backwards: copied into the stacked input.
    AgentObservationsMessage reversed;
    reversed.observation_size = in_order.observation_size;
    for (std::size_t j = in_order.rows(); j-- > 0;) {
      reversed.agents.push_back(in_order.agents[j]);
      reversed.policies.push_back(in_order.policies[j]);
      const float* row = in_order.observations.data() + j * in_order.observation_size;
      reversed.observations.insert(reversed.observations.end(), row,
                                   row + in_order.observation_size);
    }
    // Agent 2 missing: its slot is padding.
    const AgentObservationsMessage gap = request(c.agents, {0, 1, 3}, seed);
    const AgentActionsMessage a = bank.serve({in_order}).at(0);
    const AgentActionsMessage b = bank.serve({reversed}).at(0);
    const AgentActionsMessage g = bank.serve({gap}).at(0);
    for (std::size_t j = 0; j < 4; ++j) {
      EXPECT_EQ(a.actions[j], own_choice(c, in_order, j)) << "seed " << seed << ", row " << j;
      EXPECT_EQ(b.actions[3 - j], a.actions[j]) << "seed " << seed << ", agent " << j;
    }
    ASSERT_EQ(g.rows(), 3U);
    EXPECT_EQ(g.actions, (std::vector<std::int64_t>{a.actions[0], a.actions[1], a.actions[3]}));
  }
}

TEST(PolicyBank, ASparseFramesNonZeroFloatsGiveTheAnswersOfItsRows) {
  PolicyBankConfig c = four_per_agent();
  PolicyBank bank(c);
  for (int seed = 0; seed < 10; ++seed) {
    AgentObservationsMessage in_order = request(c.agents, {0, 1, 2, 3}, seed);
    in_order.observations = one_hot_rows(4, 324, seed);
    AgentObservationsMessage reversed = in_order;  // not in slot order: copied, frame unused
    std::reverse(reversed.agents.begin(), reversed.agents.end());
    std::reverse(reversed.policies.begin(), reversed.policies.end());
    for (std::size_t j = 0; j < 2; ++j) {
      std::swap_ranges(reversed.observations.begin() + static_cast<std::ptrdiff_t>(j * 324),
                       reversed.observations.begin() + static_cast<std::ptrdiff_t>((j + 1) * 324),
                       reversed.observations.begin() + static_cast<std::ptrdiff_t>((3 - j) * 324));
    }
    // One request per pass: its rows are the stack's input, in place or (reversed) copied.
    for (const AgentObservationsMessage* r : {&in_order, &reversed}) {
      const Bytes frame = encode(*r);
      const std::vector<std::optional<SparseFloats>> sparse = {
          sparse_observations(frame.data(), frame.size())};
      ASSERT_TRUE(sparse[0].has_value());
      const std::uint64_t read_before = bank.passes_from_frames();
      const AgentActionsMessage dense = bank.serve({r}).at(0);
      EXPECT_EQ(bank.passes_from_frames(), read_before);
      const AgentActionsMessage from_frame = bank.serve({r}, nullptr, &sparse).at(0);
      EXPECT_EQ(bank.passes_from_frames(), read_before + (r == &in_order ? 1 : 0));
      EXPECT_EQ(from_frame.actions, dense.actions) << "seed " << seed;
      for (std::size_t j = 0; j < 4; ++j) {
        EXPECT_EQ(from_frame.actions[j], own_choice(c, *r, j)) << "seed " << seed << ", row " << j;
      }
    }
  }
  // One view per request, or none.
  const AgentObservationsMessage r = request(c.agents, {0, 1, 2, 3}, 0);
  const std::vector<std::optional<SparseFloats>> none_for_two = {std::nullopt, std::nullopt};
  EXPECT_THROW((void)bank.serve({&r}, nullptr, &none_for_two), std::invalid_argument);
}

TEST(PolicyBank, WithRowsPerPassManyRequestsOfAPolicyAreOnePassWithTheSameAnswers) {
  PolicyBankConfig fixed = four_per_agent();
  PolicyBankConfig wide = fixed;
  wide.rows_per_pass = 64;
  PolicyBank one_row(fixed);
  PolicyBank many_rows(wide);
  std::vector<AgentObservationsMessage> requests;  // 13 clients asking for every agent
  for (int seed = 0; seed < 13; ++seed)
    requests.push_back(request(fixed.agents, {0, 1, 2, 3}, seed));
  const std::vector<AgentActionsMessage> expected = one_row.serve(requests);
  const std::vector<AgentActionsMessage> got = many_rows.serve(requests);
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    EXPECT_EQ(got[k].actions, expected[k].actions) << "request " << k;
    for (std::size_t j = 0; j < got[k].rows(); ++j) {
      EXPECT_EQ(got[k].actions[j], own_choice(fixed, requests[k], j));
    }
  }
  EXPECT_EQ(one_row.stacked_passes(), 13U);   // one row of each policy per pass
  EXPECT_EQ(many_rows.stacked_passes(), 1U);  // 13 rows of each policy (16 with padding)
  wide.rows_per_pass = 4;                     // at most 4 rows of a policy per pass
  PolicyBank capped(wide);
  EXPECT_EQ(capped.serve(requests).size(), 13U);
  EXPECT_EQ(capped.stacked_passes(), 4U);
}

TEST(PolicyBank, ASharedPolicySeesEachAgentsIndex) {
  PolicyBankConfig c;
  c.agents = tj4(false);
  c.hosted = {0};
  c.seed = 2;
  PolicyBank bank(c);
  const AgentObservationsMessage r = request(c.agents, {0}, 3);
  const AgentActionsMessage a = bank.serve({r}).at(0);
  for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(a.actions[j], own_choice(c, r, j));

  // Every agent with the same observation, in rows out of agent order: only the agent's index
  // (the one-hot after the observation, written here by hand) tells the rows apart, and it must
  // be the agent's, not the row's. The observation is one under which the agents' greedy actions
  // are not all the same, so an index dropped or taken from the row changes some answer.
  const auto size = static_cast<std::size_t>(c.agents.observation_size);
  const std::size_t agents = 4;
  const learning::PolicyNetwork net(c.network(0), c.seed);
  const std::vector<std::uint32_t> order = {2, 0, 3, 1};
  for (int seed = 0; seed < 200; ++seed) {
    std::vector<float> observation(size);
    for (std::size_t i = 0; i < size; ++i) {
      observation[i] =
          static_cast<float>((i * 31 + static_cast<std::size_t>(seed) * 17) % 97) / 48.0F - 1.0F;
    }
    std::vector<std::int64_t> by_agent(agents);
    for (std::size_t agent = 0; agent < agents; ++agent) {
      std::vector<float> input(observation);
      input.resize(size + agents, 0.0F);
      input[size + agent] = 1.0F;
      by_agent[agent] = net.act_one(input.data());
    }
    if (std::count(by_agent.begin(), by_agent.end(), by_agent[0]) ==
        static_cast<std::ptrdiff_t>(agents)) {
      continue;  // the index changes no action here: try another observation
    }
    AgentObservationsMessage same;
    same.observation_size = static_cast<std::uint32_t>(size);
    for (const std::uint32_t agent : order) {
      same.agents.push_back(agent);
      same.policies.push_back(0);
      same.observations.insert(same.observations.end(), observation.begin(), observation.end());
    }
    const AgentActionsMessage answer = bank.serve({same}).at(0);
    ASSERT_EQ(answer.actions.size(), agents);
    for (std::size_t j = 0; j < agents; ++j) {
      EXPECT_EQ(answer.actions[j], by_agent[order[j]]) << "row " << j << ", agent " << order[j];
    }
    return;
  }
  FAIL() << "no observation of 200 makes the agents' greedy actions differ";
}

TEST(PolicyBank, WeightsReachOnlyTheirPolicyAndCarryTheirVersion) {
  PolicyBankConfig c;
  c.agents = tj4(true);
  c.hosted = {0, 1};
  PolicyBank bank(c);
  const learning::MlpSpec spec = c.network(1);
  WeightsMessage w;
  w.version = 5;
  w.values = learning::init_mlp_parameters(spec, 77);
  bank.on_weights(1, w);
  EXPECT_EQ(bank.version(1), 5U);
  EXPECT_EQ(bank.version(0), 0U);
  const AgentObservationsMessage r = request(c.agents, {0, 1}, 1);
  const AgentActionsMessage a = bank.serve({r}).at(0);
  EXPECT_EQ(a.versions, (std::vector<std::uint64_t>{0, 5}));
  const learning::PolicyNetwork loaded(spec, 77);
  std::vector<float> input(324);
  write_agent_input(c.agents, 1, 1, r.observations.data() + 324, input.data());
  EXPECT_EQ(a.actions[1], loaded.act_one(input.data()));
  EXPECT_THROW(bank.on_weights(3, w), std::invalid_argument);  // not hosted here
  w.version = 4;                                               // older: ignored
  w.values = learning::init_mlp_parameters(spec, 1);
  bank.on_weights(1, w);
  EXPECT_EQ(bank.version(1), 5U);
  // Policy 1's learner linked again (restarted, counting from 1): its next weights load, and
  // after them older or equal versions are ignored again; policy 0 is untouched.
  // The restarted learner's weights: the first seed whose greedy action differs for this row.
  std::uint64_t seed = 1;
  while (seed < 64 && learning::PolicyNetwork(spec, seed).act_one(input.data()) ==
                          loaded.act_one(input.data())) {
    ++seed;
  }
  ASSERT_LT(seed, 64U) << "every seed chooses alike for this row";
  const learning::PolicyNetwork restarted(spec, seed);
  bank.on_new_weights_source(1);
  w.version = 1;
  w.values = learning::init_mlp_parameters(spec, seed);
  bank.on_weights(1, w);
  EXPECT_EQ(bank.version(1), 1U);
  EXPECT_EQ(bank.serve({r}).at(0).actions[1], restarted.act_one(input.data()));
  w.values = learning::init_mlp_parameters(spec, 77);
  bank.on_weights(1, w);
  EXPECT_EQ(bank.serve({r}).at(0).actions[1], restarted.act_one(input.data()));
  EXPECT_EQ(bank.version(0), 0U);
}

TEST(PolicyBank, BadRequestsAreRefusedAndTheOthersAnswered) {
  PolicyBankConfig c;
  c.agents = tj4(true);
  c.hosted = {0, 1};
  PolicyBank bank(c);
  const AgentObservationsMessage good = request(c.agents, {0, 1}, 0);
  AgentObservationsMessage narrow = good;
  narrow.observation_size = 100;
  narrow.observations.resize(200);
  const AgentObservationsMessage elsewhere = request(c.agents, {2}, 0);
  AgentObservationsMessage mislabelled = good;
  mislabelled.policies[0] = 1;
  std::vector<std::size_t> answered;
  const auto answers = bank.serve({narrow, good, elsewhere, mislabelled}, &answered);
  EXPECT_EQ(answered, (std::vector<std::size_t>{1}));
  EXPECT_EQ(answers.size(), 1U);
  EXPECT_EQ(bank.rejected(), 3U);
  EXPECT_NE(bank.last_rejection().find("agent 0"), std::string::npos) << bank.last_rejection();
}

TEST(PolicyBank, AnswersWrittenOverLentMessagesAreServesAnswersWhateverTheyHeld) {
  const PolicyBankConfig c = four_per_agent();
  PolicyBank bank(c);
  const AgentObservationsMessage bad = [&] {
    AgentObservationsMessage r = request(c.agents, {0, 1}, 3);
    r.policies[0] = 3;  // refused: not agent 0's policy
    return r;
  }();
  const AgentObservationsMessage a = request(c.agents, {0, 1}, 5);
  const AgentObservationsMessage b = request(c.agents, {2, 3}, 6);
  const std::vector<const AgentObservationsMessage*> requests = {&bad, &a, &b};
  std::vector<std::size_t> expected_answered;
  const std::vector<AgentActionsMessage> expected = bank.serve(requests, &expected_answered);
  // Three lent messages holding another call's rows (more than the two answers need).
  std::vector<AgentActionsMessage> lent(3);
  for (AgentActionsMessage& m : lent) {
    m.source = 7;
    m.agents = {9, 9, 9, 9, 9};
    m.policies = {1, 1, 1, 1, 1};
    m.versions = {8, 8, 8, 8, 8};
    m.actions = {1, 1, 1, 1, 1};
  }
  const std::uint32_t* first_storage = lent[0].agents.data();
  std::vector<std::size_t> answered;
  bank.serve_into(requests, lent, &answered);
  EXPECT_EQ(answered, expected_answered);
  ASSERT_EQ(lent.size(), expected.size());
  for (std::size_t i = 0; i < lent.size(); ++i) {
    EXPECT_EQ(lent[i].source, expected[i].source) << i;
    EXPECT_EQ(lent[i].agents, expected[i].agents) << i;
    EXPECT_EQ(lent[i].policies, expected[i].policies) << i;
    EXPECT_EQ(lent[i].versions, expected[i].versions) << i;
    EXPECT_EQ(lent[i].actions, expected[i].actions) << i;
  }
  EXPECT_EQ(lent[0].agents.data(), first_storage);  // written over, not allocated anew
}

TEST(PolicyBank, ExportedFilesAreStackedAndMisfitFilesRefusedByName) {
  const fs::path dir = fs::temp_directory_path() / "tagflow_policy_bank_test";
  fs::create_directories(dir);
  PolicyBankConfig c;
  c.agents = tj4(true);
  c.hosted = {0, 1};
  const std::vector<float> trained = learning::init_mlp_parameters(c.network(0), 123);
  learning::export_torchscript(c.network(0), trained, (dir / "car_0.pt").string());
  c.agents.policies[0].torchscript = (dir / "car_0.pt").string();
  PolicyBank bank(c);
  EXPECT_EQ(bank.unstacked(), 0U);
  const AgentObservationsMessage r = request(c.agents, {0, 1}, 4);
  const AgentActionsMessage a = bank.serve({r}).at(0);
  EXPECT_EQ(a.actions[0],
            learning::PolicyNetwork(c.network(0), 123).act_one(r.observations.data()));
  WeightsMessage w;
  w.version = 3;
  w.values = trained;
  bank.on_weights(0, w);  // a file's policy ignores weights
  EXPECT_EQ(bank.weights_ignored(), 1U);

  // A file for another env width.
  learning::export_torchscript({10, {16}, 2}, learning::init_mlp_parameters({10, {16}, 2}, 1),
                               (dir / "narrow.pt").string());
  c.agents.policies[1].torchscript = (dir / "narrow.pt").string();
  try {
    PolicyBank refused(c);
    ADD_FAILURE() << "a file of the wrong width was accepted";
  } catch (const ParamError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("policies.car_1.torchscript: "), std::string::npos) << what;
    // LibTorch's traceback cut to its last line, which gives the file's width (10).
    EXPECT_NE(what.find("does not run on inputs of the policy's width "), std::string::npos)
        << what;
    EXPECT_NE(what.find("mat1 and mat2 shapes cannot be multiplied"), std::string::npos) << what;
    EXPECT_NE(what.find(" and 10x16)"), std::string::npos) << what;
    EXPECT_EQ(what.find("Traceback"), std::string::npos) << what;
  }
  fs::remove_all(dir);
}

TEST(PolicyBank, APythonSavedSequentialIsStackedWhenItMatches) {
  const std::string python = tagflow::testing::python_with_torch();
  if (python.empty()) {
    GTEST_SKIP() << "python3 cannot import torch (install Debian's python3-torch to run this)";
  }
  const fs::path dir = fs::temp_directory_path() / "tagflow_policy_bank_python";
  fs::create_directories(dir);
  const fs::path script = dir / "save.py";
  std::ofstream(script) << "import sys, torch\ntorch.manual_seed(1)\n"
                           "m = torch.nn.Sequential(torch.nn.Linear(324, 16), torch.nn.ReLU(), "
                           "torch.nn.Linear(16, 2))\ntorch.jit.script(m).save(sys.argv[1])\n"
                           "t = torch.nn.Sequential(torch.nn.Linear(324, 16), torch.nn.Tanh(), "
                           "torch.nn.Linear(16, 2))\ntorch.jit.script(t).save(sys.argv[2])\n";
  const std::string command = python + " " + script.string() + " " + (dir / "relu.pt").string() +
                              " " + (dir / "tanh.pt").string();
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  PolicyBankConfig c;
  c.agents = tj4(true);
  c.hosted = {0, 1};
  c.agents.policies[0].torchscript = (dir / "relu.pt").string();
  c.agents.policies[1].torchscript = (dir / "tanh.pt").string();
  PolicyBank bank(c);
  // The ReLU stack joins the stacked product; the tanh one runs as its own module.
  EXPECT_EQ(bank.unstacked(), 1U);
  const AgentObservationsMessage r = request(c.agents, {0, 1}, 2);
  const AgentActionsMessage a = bank.serve({r}).at(0);
  learning::TorchScriptPolicy relu((dir / "relu.pt").string()), tanh((dir / "tanh.pt").string());
  EXPECT_EQ(a.actions[0], relu.act(r.observations.data(), 1, 324).at(0));
  EXPECT_EQ(a.actions[1], tanh.act(r.observations.data() + 324, 1, 324).at(0));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tagflow::nodes
