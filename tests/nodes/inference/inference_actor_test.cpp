// The inference actor's held batch (InferenceServer's queue) driven by scoped actors in two
// samplers' roles: a request waits while another sampler may still ask, everyone waiting serves
// at once, the deadline serves a lone request, a departed sampler's request is dropped, a request
// of another width is refused.
#include "nodes/inference/inference_actor.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "actors/actor_system_setup.hpp"

namespace tagflow::nodes {
namespace {

ObservationBatchMessage request(std::uint32_t source, std::uint32_t width, std::size_t rows) {
  ObservationBatchMessage r;
  r.source = source;
  r.observation_size = width;
  r.observations.assign(rows * width, 0.25F);
  return r;
}

class InferenceActorTest : public ::testing::Test {
 protected:
  InferenceActorTest() : system_config_(config()), system_(*system_config_) {}
  static std::unique_ptr<caf::actor_system_config> config() {
    auto c = actors::make_actor_system_config({false, 2});
    add_node_message_types(*c);
    return c;
  }
  InferenceActor spawn(std::chrono::nanoseconds max_wait) {
    InferenceConfig config;
    config.network = {4, {16}, 2};
    config.max_wait = max_wait;
    return spawn_inference_actor(system_, config, {"inference", report_});
  }
  /// The sampler offers its observations and takes the first credit.
  static void join(caf::scoped_actor& sampler, const InferenceActor& inference,
                   const std::string& name) {
    sampler->send(inference, actors::Offer{"observations", name});
    sampler->receive([](const actors::Credit& c) { EXPECT_EQ(c.port, "observations"); },
                     caf::after(std::chrono::seconds(10)) >> [] { FAIL() << "no credit"; });
  }
  /// The next answer within `wait`, or nullopt.
  static std::optional<ActionBatchMessage> answer(caf::scoped_actor& sampler,
                                                  std::chrono::milliseconds wait) {
    std::optional<ActionBatchMessage> got;
    bool credit = false;
    while (!got || !credit) {
      bool timed_out = false;
      sampler->receive([&](const ActionBatchMessage& a) { got = a; },
                       [&](const actors::Credit&) { credit = true; },
                       caf::after(wait) >> [&] { timed_out = true; });
      if (timed_out) break;
    }
    return got;
  }
  std::unique_ptr<caf::actor_system_config> system_config_;
  caf::actor_system system_;
  std::shared_ptr<ReplicaReport> report_ =
      std::make_shared<ReplicaReport>("inference", "inference");
};

TEST_F(InferenceActorTest, ARequestWaitsForTheOtherSamplerThenBothAreServedTogether) {
  auto inference = spawn(std::chrono::seconds(30));  // the deadline never comes in this test
  caf::scoped_actor a{system_}, b{system_};
  join(a, inference, "sampler-0");
  join(b, inference, "sampler-1");
  a->send(inference, request(0, 4, 3));
  EXPECT_FALSE(answer(a, std::chrono::milliseconds(200))) << "served before sampler-1 asked";
  b->send(inference, request(1, 4, 2));
  const auto first = answer(a, std::chrono::seconds(10));
  const auto second = answer(b, std::chrono::seconds(10));
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->actions.size(), 3U);
  EXPECT_EQ(second->source, 1U);
  EXPECT_EQ(report_->count.load(), 5);
  a->send(inference, actors::StopRun{""});
}

TEST_F(InferenceActorTest, TheDeadlineServesALoneRequest) {
  auto inference = spawn(std::chrono::milliseconds(20));
  caf::scoped_actor a{system_}, b{system_};
  join(a, inference, "sampler-0");
  join(b, inference, "sampler-1");
  a->send(inference, request(0, 4, 1));
  EXPECT_TRUE(answer(a, std::chrono::seconds(10)));
  a->send(inference, actors::StopRun{""});
}

TEST_F(InferenceActorTest, ADepartedSamplersRequestIsDroppedAndOneOfAnotherWidthRefused) {
  auto inference = spawn(std::chrono::seconds(30));
  caf::scoped_actor a{system_}, b{system_};
  join(a, inference, "sampler-0");
  join(b, inference, "sampler-1");
  b->send(inference, request(1, 4, 7));
  b->send(inference, actors::Leave{"sampler-1"});
  // Messages of different senders are not ordered: wait until the actor forgot sampler-1.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (report_->peers.load() != 1 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(report_->peers.load(), 1);
  a->send(inference, request(0, 3, 2));  // a CartPole-sized network cannot take width 3
  a->send(inference, request(0, 4, 2));  // the only sampler left: served at once
  const auto got = answer(a, std::chrono::seconds(10));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->actions.size(), 2U);
  EXPECT_EQ(report_->count.load(), 2) << "the departed sampler's 7 rows were served";
  a->send(inference, actors::StopRun{""});
}

}  // namespace
}  // namespace tagflow::nodes
