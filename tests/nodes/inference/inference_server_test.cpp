#include "nodes/inference/inference_server.hpp"

#include <gtest/gtest.h>

#include "nodes/sampler/mlp_forward.hpp"
#include "rl/learning/mlp_spec.hpp"

namespace tagflow::nodes {
namespace {

InferenceConfig config(std::size_t max_batch) {
  const NodeParams p(
      "inference",
      {{"max_batch", std::to_string(max_batch)}, {"hidden", "8"}, {"max_wait", "1ms"}});
  return InferenceConfig::from_params(p, 4, 4, 3);
}

ObservationBatchMessage request(std::uint32_t source, std::size_t rows, float offset) {
  ObservationBatchMessage m;
  m.source = source;
  m.observation_size = 4;
  for (std::size_t i = 0; i < rows * 4; ++i) {
    m.observations.push_back(offset + 0.37F * static_cast<float>(i % 7) - 1.0F);
  }
  return m;
}

TEST(InferenceServer, AnswersEachRequestInOrderWithItsSource) {
  InferenceServer server(config(4));
  const std::vector<ObservationBatchMessage> requests{request(0, 3, 0.0F), request(1, 5, 0.5F)};
  const auto answers = server.serve(requests);
  ASSERT_EQ(answers.size(), 2U);
  EXPECT_EQ(answers[0].source, 0U);
  EXPECT_EQ(answers[0].actions.size(), 3U);
  EXPECT_EQ(answers[1].source, 1U);
  EXPECT_EQ(answers[1].actions.size(), 5U);
  EXPECT_EQ(server.forward_passes(), 2U);  // 8 rows in passes of at most 4
  EXPECT_EQ(server.rows_served(), 8U);
}

TEST(InferenceServer, ActionsAreTheGreedyActionsOfTheLatestWeights) {
  InferenceServer server(config(64));
  WeightsMessage w;
  w.version = 12;
  const learning::MlpSpec spec{4, {8}, 3};
  w.values = learning::init_mlp_parameters(spec, 99);
  server.on_weights(w);
  EXPECT_EQ(server.weights_version(), 12U);
  MlpForward reference({4, 8, 3});
  reference.load(w.values);
  const ObservationBatchMessage r = request(2, 16, 0.25F);
  const auto answers = server.serve({r});
  std::vector<std::int64_t> expected(16);
  reference.greedy(r.observations.data(), 16, expected.data());
  EXPECT_EQ(answers[0].actions, expected);
  EXPECT_EQ(answers[0].weights_version, 12U);
  // Batching does not change the answers.
  InferenceServer small(config(3));
  small.on_weights(w);
  EXPECT_EQ(small.serve({r})[0].actions, expected);
}

TEST(InferenceServer, OlderWeightsAreIgnoredAndBadInputsRejected) {
  InferenceServer server(config(8));
  const learning::MlpSpec spec{4, {8}, 3};
  server.on_weights({5, learning::init_mlp_parameters(spec, 1)});
  server.on_weights({4, learning::init_mlp_parameters(spec, 2)});
  EXPECT_EQ(server.weights_version(), 5U);
  // The actions are still version 5's, on rows where the two sets of weights disagree.
  MlpForward newer({4, 8, 3});
  MlpForward older({4, 8, 3});
  newer.load(learning::init_mlp_parameters(spec, 1));
  older.load(learning::init_mlp_parameters(spec, 2));
  const ObservationBatchMessage rows = request(1, 32, 0.1F);
  std::vector<std::int64_t> by_newer(32), by_older(32);
  newer.greedy(rows.observations.data(), 32, by_newer.data());
  older.greedy(rows.observations.data(), 32, by_older.data());
  ASSERT_NE(by_newer, by_older) << "the two weights choose alike on these rows";
  EXPECT_EQ(server.serve({rows})[0].actions, by_newer);
  // A learner that linked again (restarted, counting from 1) is loaded from its first weights
  // on; after those, older versions are ignored again.
  server.on_new_weights_source();
  server.on_weights({1, learning::init_mlp_parameters(spec, 2)});
  EXPECT_EQ(server.weights_version(), 1U);
  EXPECT_EQ(server.serve({rows})[0].actions, by_older);
  server.on_weights({0, learning::init_mlp_parameters(spec, 1)});
  EXPECT_EQ(server.weights_version(), 1U);
  ObservationBatchMessage wrong = request(0, 2, 0.0F);
  wrong.observation_size = 2;
  EXPECT_THROW((void)server.serve({wrong}), std::invalid_argument);
  EXPECT_THROW(
      (void)InferenceConfig::from_params(NodeParams("inference", {{"max_wait", "soon"}}), 1, 4, 2),
      ParamError);
}

}  // namespace
}  // namespace tagflow::nodes
