// The learner actor driven by scoped actors in the replay's and a sampler's roles: batches under
// credit, priorities to the replay that took them, weights only as the sampler's credit allows,
// a batch of another network's width refused without ending the actor.
#include "nodes/learner/learner_actor.hpp"

#include <gtest/gtest.h>

#include "actors/actor_system_setup.hpp"

namespace tagflow::nodes {
namespace {

SampleBatchMessage batch(std::uint32_t width, std::size_t rows, std::uint64_t first_key) {
  SampleBatchMessage b;
  b.observation_size = width;
  for (std::size_t i = 0; i < rows; ++i) {
    b.keys.push_back(first_key + i);
    for (std::uint32_t k = 0; k < width; ++k) {
      b.observations.push_back(0.1F * static_cast<float>(i + k));
      b.next_observations.push_back(0.1F * static_cast<float>(i + k + 1));
    }
    b.actions.push_back(static_cast<std::int64_t>(i % 2));
    b.rewards.push_back(1.0F);
    b.terminated.push_back(0);
    b.importance_weights.push_back(1.0F);
    b.weights_versions.push_back(0);
  }
  return b;
}

TEST(LearnerActor, UpdatesPerBatchAndSendsWhatItsPeersGaveCreditFor) {
  auto system_config = actors::make_actor_system_config({false, 2});
  add_node_message_types(*system_config);
  caf::actor_system system(*system_config);
  LearnerConfig config;
  config.dqn.network = {4, {16}, 2};
  config.dqn.seed = 3;
  auto report = std::make_shared<ReplicaReport>("learner", "learner");
  auto learner =
      spawn_learner_actor(system, config, {"learner", std::nullopt, nullptr, report, nullptr, ""});
  const auto timeout = std::chrono::seconds(10);
  {
    caf::scoped_actor replay{system};
    caf::scoped_actor sampler{system};
    // The host links priorities to the replay: the learner offers, the replay grants credit.
    caf::anon_send(learner, actors::connect_atom::value, std::string("priorities"),
                   std::string("replay"), caf::actor_cast<caf::actor>(replay));
    replay->receive([](const actors::Offer& o) { EXPECT_EQ(o.port, "priorities"); },
                    caf::after(timeout) >> [] { FAIL() << "no offer"; });
    replay->send(learner, actors::Credit{"priorities", 4, "replay"});
    replay->send(learner, actors::Offer{"batches", "replay"});
    replay->receive([](const actors::Credit& c) { EXPECT_EQ(c.port, "batches"); },
                    caf::after(timeout) >> [] { FAIL() << "no batch credit"; });
    // A sampler subscribes to weights with one credit: it gets the initial weights.
    sampler->send(learner, actors::Credit{"weights", 1, "sampler-0"});
    sampler->receive([](const WeightsMessage& w) { EXPECT_EQ(w.version, 0U); },
                     caf::after(timeout) >> [] { FAIL() << "no weights"; });
    // A batch of another width is refused; the actor goes on.
    replay->send(learner, batch(3, 8, 0));
    replay->send(learner, batch(4, 8, 100));
    std::size_t priorities = 0;
    for (int answers = 0; answers < 3; ++answers) {  // two batch credits and one priority update
      replay->receive([](const actors::Credit& c) { EXPECT_EQ(c.port, "batches"); },
                      [&](const PriorityUpdateMessage& p) {
                        priorities += p.keys.size();
                        EXPECT_EQ(p.keys.front(), 100U);
                      },
                      caf::after(timeout) >> [] { FAIL() << "no answer"; });
    }
    EXPECT_EQ(priorities, 8U);
    // The sampler's credit was spent: version 1 waits for the next credit.
    sampler->send(learner, actors::Credit{"weights", 1, "sampler-0"});
    sampler->receive([](const WeightsMessage& w) { EXPECT_EQ(w.version, 1U); },
                     caf::after(timeout) >> [] { FAIL() << "no new weights"; });
    sampler->send(learner, actors::StopRun{""});
  }
  system.await_all_actors_done();
  EXPECT_EQ(report->count.load(), 1);
  std::lock_guard<std::mutex> lock(report->mutex);
  ASSERT_TRUE(report->final_weights.has_value());
  EXPECT_EQ(report->final_weights->version, 1U);
}

}  // namespace
}  // namespace tagflow::nodes
