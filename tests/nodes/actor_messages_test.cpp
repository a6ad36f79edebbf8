// Every type of both type-ID blocks — the control messages (actors/message_types.hpp) and the
// node data messages (nodes/actor_messages.hpp) — crosses between two actor systems over CAF's
// middleman on 127.0.0.1 and comes back equal.
#include "nodes/actor_messages.hpp"

#include <gtest/gtest.h>

#include <caf/io/middleman.hpp>

#include "actors/actor_system_setup.hpp"

namespace tagflow::actors {
namespace {

// Sends every message back to its sender (CAF's reflect handler).
class EchoActor : public caf::event_based_actor {
 public:
  explicit EchoActor(caf::actor_config& config) : caf::event_based_actor(config) {
    set_default_handler(caf::reflect);
  }
  caf::behavior make_behavior() override {
    return {[](caf::exit_msg&) {}};
  }
};

std::unique_ptr<caf::actor_system_config> with_node_types(
    std::unique_ptr<caf::actor_system_config> config) {
  nodes::add_node_message_types(*config);
  return config;
}

class TwoSystems : public ::testing::Test {
 protected:
  TwoSystems()
      : server_config_(with_node_types(make_actor_system_config({true, 2}))),
        client_config_(with_node_types(make_actor_system_config({true, 2}))),
        server_(*server_config_),
        client_(*client_config_) {}

  void SetUp() override {
    echo_ = server_.spawn<EchoActor>();
    auto port = server_.middleman().publish(echo_, 0, "127.0.0.1");
    ASSERT_TRUE(port) << server_.render(port.error());
    auto remote = client_.middleman().remote_actor("127.0.0.1", *port);
    ASSERT_TRUE(remote) << client_.render(remote.error());
    remote_ = *remote;
  }
  void TearDown() override { caf::anon_send_exit(echo_, caf::exit_reason::user_shutdown); }

  template <class T>
  T round_trip(const T& value) {
    caf::scoped_actor self{client_};
    T back{};
    bool answered = false;
    self->request(remote_, std::chrono::seconds(10), value)
        .receive([&](T& x) { back = std::move(x), answered = true; },
                 [&](const caf::error& e) { ADD_FAILURE() << client_.render(e); });
    EXPECT_TRUE(answered);
    ++types_seen_;
    return back;
  }

  std::unique_ptr<caf::actor_system_config> server_config_, client_config_;
  caf::actor_system server_, client_;
  caf::actor echo_, remote_;
  std::size_t types_seen_ = 0;
};

TEST_F(TwoSystems, EveryRegisteredMessageTypeRoundTripsOverTcpLoopback) {
  nodes::TransitionsMessage t;
  t.observation_size = 2;
  t.observations = {1.f, 2.f, 3.f, 4.f};
  t.actions = {0, 1};
  t.rewards = {1.f, -0.5f};
  t.terminated = {0, 1};
  t.next_observations = {5.f, 6.f, 7.f, 8.f};
  const auto t2 = round_trip(t);
  EXPECT_EQ(t2.observation_size, 2U);
  EXPECT_EQ(t2.observations, t.observations);
  EXPECT_EQ(t2.actions, t.actions);
  EXPECT_EQ(t2.rewards, t.rewards);
  EXPECT_EQ(t2.terminated, t.terminated);
  EXPECT_EQ(t2.next_observations, t.next_observations);

  nodes::SampleBatchMessage b;
  b.observation_size = 1;
  b.keys = {7, 1ULL << 40};
  b.observations = {0.25f, 0.5f};
  b.actions = {1, -3};
  b.rewards = {2.f, 3.f};
  b.terminated = {1, 0};
  b.next_observations = {0.75f, 1.f};
  b.importance_weights = {0.9f, 1.f};
  b.weights_versions = {12, 1ULL << 33};
  const auto b2 = round_trip(b);
  EXPECT_EQ(b2.observation_size, 1U);
  EXPECT_EQ(b2.keys, b.keys);
  EXPECT_EQ(b2.observations, b.observations);
  EXPECT_EQ(b2.actions, b.actions);
  EXPECT_EQ(b2.rewards, b.rewards);
  EXPECT_EQ(b2.terminated, b.terminated);
  EXPECT_EQ(b2.next_observations, b.next_observations);
  EXPECT_EQ(b2.importance_weights, b.importance_weights);
  EXPECT_EQ(b2.weights_versions, b.weights_versions);

  nodes::PriorityUpdateMessage p{{3, 4, 5}, {0.1f, 0.2f, 0.3f}};
  const auto p2 = round_trip(p);
  EXPECT_EQ(p2.keys, p.keys);
  EXPECT_EQ(p2.priorities, p.priorities);

  nodes::WeightsMessage w{42, std::vector<float>(4610, 0.125f)};
  w.values[17] = -3.5f;
  const auto w2 = round_trip(w);
  EXPECT_EQ(w2.version, 42U);
  EXPECT_EQ(w2.values, w.values);

  nodes::ObservationBatchMessage o{3, 4, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f}};
  const auto o2 = round_trip(o);
  EXPECT_EQ(o2.source, 3U);
  EXPECT_EQ(o2.observation_size, 4U);
  EXPECT_EQ(o2.observations, o.observations);

  nodes::ActionBatchMessage a{5, 99, {0, 1, 1, 0}};
  const auto a2 = round_trip(a);
  EXPECT_EQ(a2.source, 5U);
  EXPECT_EQ(a2.weights_version, 99U);
  EXPECT_EQ(a2.actions, a.actions);

  nodes::AgentObservationsMessage mo{1, 2, {0, 3}, {0, 2}, {1.f, 2.f, 3.f, 4.f}};
  const auto mo2 = round_trip(mo);
  EXPECT_EQ(mo2.source, 1U);
  EXPECT_EQ(mo2.observation_size, 2U);
  EXPECT_EQ(mo2.agents, mo.agents);
  EXPECT_EQ(mo2.policies, mo.policies);
  EXPECT_EQ(mo2.observations, mo.observations);

  nodes::AgentActionsMessage ma{1, {0, 3}, {0, 2}, {7, 1ULL << 35}, {1, 0}};
  const auto ma2 = round_trip(ma);
  EXPECT_EQ(ma2.agents, ma.agents);
  EXPECT_EQ(ma2.policies, ma.policies);
  EXPECT_EQ(ma2.versions, ma.versions);
  EXPECT_EQ(ma2.actions, ma.actions);

  const auto offer = round_trip(Offer{"transitions", "sampler-3"});
  EXPECT_EQ(offer.port, "transitions");
  EXPECT_EQ(offer.from, "sampler-3");
  const auto credit = round_trip(Credit{"batches", 7, "learner"});
  EXPECT_EQ(credit.port, "batches");
  EXPECT_EQ(credit.amount, 7U);
  EXPECT_EQ(credit.from, "learner");
  EXPECT_EQ(round_trip(Leave{"sampler-9"}).from, "sampler-9");
  EXPECT_EQ(round_trip(StopRun{"target_return"}).reason, "target_return");

  EXPECT_EQ(types_seen_, kControlMessageTypeCount + nodes::kNodeMessageTypeCount)
      << "a registered type has no round trip here";
}

TEST_F(TwoSystems, PixelMessagesRoundTripWithTheirUint8Frames) {
  nodes::TransitionsMessage t;
  t.observation_size = 3;
  t.observation_type = nodes::ObservationType::kUInt8;
  t.observations_u8 = {0, 128, 255};
  t.next_observations_u8 = {1, 2, 3};
  t.actions = {2};
  t.rewards = {1.f};
  t.terminated = {0};
  const auto t2 = round_trip(t);
  EXPECT_EQ(t2.observation_type, nodes::ObservationType::kUInt8);
  EXPECT_EQ(t2.observations_u8, t.observations_u8);
  EXPECT_EQ(t2.next_observations_u8, t.next_observations_u8);

  nodes::SampleBatchMessage b;
  b.observation_size = 2;
  b.observation_type = nodes::ObservationType::kUInt8;
  b.keys = {9};
  b.observations_u8 = {7, 8};
  b.next_observations_u8 = {9, 10};
  const auto b2 = round_trip(b);
  EXPECT_EQ(b2.observation_type, nodes::ObservationType::kUInt8);
  EXPECT_EQ(b2.observations_u8, b.observations_u8);
  EXPECT_EQ(b2.next_observations_u8, b.next_observations_u8);

  nodes::ObservationBatchMessage o;
  o.source = 1;
  o.observation_size = 2;
  o.observation_type = nodes::ObservationType::kUInt8;
  o.observations_u8 = {11, 12, 13, 14};
  const auto o2 = round_trip(o);
  EXPECT_EQ(o2.observation_type, nodes::ObservationType::kUInt8);
  EXPECT_EQ(o2.observations_u8, o.observations_u8);
  EXPECT_EQ(o2.rows(), 2U);
}

TEST_F(TwoSystems, EmptyMessagesRoundTrip) {
  const auto t = round_trip(nodes::TransitionsMessage{});
  EXPECT_EQ(t.rows(), 0U);
  const auto w = round_trip(nodes::WeightsMessage{});
  EXPECT_TRUE(w.values.empty());
}

}  // namespace
}  // namespace tagflow::actors
