// Tests of nodes/node_metrics.hpp: each kind's families through ProcessMetrics::text().
#include "nodes/node_metrics.hpp"
#include "tests/support/kind_families.hpp"

#include <gtest/gtest.h>

namespace tagflow::nodes {
namespace {

using monitoring::ProcessMetrics;

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(NodeMetrics, SamplerCountsStepsEpisodesAndTheMeanOfTheLastHundredReturns) {
  ProcessMetrics process({"sampler-0", "sampler", "reactor"}, tagflow::test::families("sampler"));
  NodeMetrics metrics(process);
  metrics.add_env_steps(8);
  metrics.add_env_steps(8);
  std::vector<double> returns(150, 10.0);
  for (std::size_t i = 100; i < 150; ++i) returns[i] = 20.0;
  metrics.add_episodes(returns);  // the window holds 50 × 10 and 50 × 20
  metrics.set_weights_version(7);
  const std::string text = process.text();
  EXPECT_TRUE(has_line(
      text, R"(tagflow_env_steps_total{kind="sampler",mode="reactor",node="sampler-0"} 16)"))
      << text;
  EXPECT_TRUE(has_line(
      text, R"(tagflow_episodes_total{kind="sampler",mode="reactor",node="sampler-0"} 150)"))
      << text;
  EXPECT_TRUE(has_line(
      text, R"(tagflow_episode_return_mean{kind="sampler",mode="reactor",node="sampler-0"} 15)"))
      << text;
  EXPECT_TRUE(has_line(
      text, R"(tagflow_weights_version{kind="sampler",mode="reactor",node="sampler-0"} 7)"))
      << text;
}

TEST(NodeMetrics, ReplayLearnerAndInferenceUpdateTheirFamilies) {
  ProcessMetrics replay_process({"replay", "replay", "reactor"}, tagflow::test::families("replay"));
  NodeMetrics replay(replay_process);
  replay.add_replay_inserted(16);
  replay.add_replay_sampled(64);
  replay.add_replay_priority_updates(64);
  replay.set_replay_size(16, 0);
  const std::string r = replay_process.text();
  EXPECT_NE(
      r.find(
          R"(tagflow_replay_transitions_inserted_total{kind="replay",mode="reactor",node="replay",table="main"} 16)"),
      std::string::npos)
      << r;
  EXPECT_NE(
      r.find(
          R"(tagflow_replay_transitions_sampled_total{kind="replay",mode="reactor",node="replay",table="main"} 64)"),
      std::string::npos)
      << r;

  ProcessMetrics learner_process({"learner", "learner", "reactor"},
                                 tagflow::test::families("learner"));
  NodeMetrics learner(learner_process);
  learner.add_learner_update(0.5, 0.002);
  learner.add_learner_update(0.25, 0.003);
  const std::string l = learner_process.text();
  EXPECT_NE(
      l.find(R"(tagflow_learner_updates_total{kind="learner",mode="reactor",node="learner"} 2)"),
      std::string::npos)
      << l;
  EXPECT_NE(l.find(R"(tagflow_learner_loss{kind="learner",mode="reactor",node="learner"} 0.25)"),
            std::string::npos)
      << l;
  EXPECT_NE(
      l.find(
          R"(tagflow_learner_update_duration_seconds_count{kind="learner",mode="reactor",node="learner"} 2)"),
      std::string::npos)
      << l;

  ProcessMetrics inference_process({"inference", "inference", "reactor"},
                                   tagflow::test::families("inference"));
  NodeMetrics inference(inference_process);
  inference.add_inference_batch(16, 0.001);
  const std::string i = inference_process.text();
  EXPECT_NE(
      i.find(
          R"(tagflow_inference_requests_total{kind="inference",mode="reactor",node="inference"} 16)"),
      std::string::npos)
      << i;
  EXPECT_NE(
      i.find(
          R"(tagflow_inference_batch_size_count{kind="inference",mode="reactor",node="inference"} 1)"),
      std::string::npos)
      << i;
}

TEST(NodeMetrics, AMethodOfAnotherKindIsAProgrammerError) {
  ProcessMetrics process({"replay", "replay", "reactor"}, tagflow::test::families("replay"));
  NodeMetrics replay(process);
  EXPECT_THROW(replay.add_env_steps(1), std::logic_error);
  EXPECT_THROW(replay.set_weights_version(1), std::logic_error);
}

}  // namespace
}  // namespace tagflow::nodes
