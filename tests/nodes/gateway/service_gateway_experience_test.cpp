// ServiceGateway's experience logging (PROTOCOL.md §4.3) over real sockets, with the fake backend
// (agents 0 and 1: p0, agent 2: p1, agent 3 served elsewhere).
#include <chrono>
#include <set>

#include <gtest/gtest.h>
#include <msgpack.hpp>
#include <zmq.hpp>

#include "clients/cpp/gateway_client.hpp"
#include "monitoring/process_metrics.hpp"
#include "nodes/gateway/service_gateway.hpp"
#include "tests/nodes/gateway/fake_backend.hpp"
#include "tests/support/kind_families.hpp"

namespace tagflow::gateway {
namespace {

using clients::GatewayClient;
using testing::FakeBackend;

std::unique_ptr<ServiceGateway> start_gateway(GatewayConfig config,
                                              monitoring::ProcessMetrics* metrics = nullptr) {
  return std::make_unique<ServiceGateway>(std::move(config), std::make_unique<FakeBackend>(),
                                          metrics);
}

GatewayConfig logging(std::size_t max_rows) {
  GatewayConfig config;
  config.experience = std::make_shared<ExperienceQueue>(max_rows);
  return config;
}

std::size_t rows_of(const std::vector<std::pair<int, nodes::TransitionsMessage>>& taken,
                    int policy) {
  for (const auto& [p, m] : taken) {
    if (p == policy) return m.rows();
  }
  return 0;
}

TEST(ServiceGatewayExperienceTest, ALoggedEpisodeQueuesOneTransitionPerAgentStep) {
  monitoring::ProcessMetrics metrics({"inference-0", "inference", "reactor"},
                                     tagflow::test::families("inference"));
  GatewayConfig config = logging(1000);
  const auto queue = config.experience;
  const auto gateway = start_gateway(config, &metrics);
  GatewayClient client(gateway->endpoint());
  const auto started = client.episode_start(true);
  ASSERT_TRUE(started.ok) << started.reason;
  EXPECT_TRUE(started.log);
  const auto first =
      client.act({{0, {1, 1, 1}}, {1, {-1, -1, -1}}, {2, {1, 0, 0}}}, started.episode);
  ASSERT_TRUE(first.ok) << first.reason;
  EXPECT_EQ(first.logged, std::optional<std::uint64_t>(0));
  const auto second = client.act({{0, {2, 2, 2}}, {1, {2, 2, 2}}, {2, {2, 2, 2}}}, started.episode,
                                 {{0, 1.0}, {1, 2.0}, {2, 3.0}});
  ASSERT_TRUE(second.ok) << second.reason;
  EXPECT_EQ(second.logged, std::optional<std::uint64_t>(3));
  const auto ended = client.episode_end(started.episode, {{2, 0.5}}, {{0, true}});
  ASSERT_TRUE(ended.ok) << ended.reason;
  EXPECT_EQ(ended.logged, 6U);
  EXPECT_EQ(ended.steps, 2U);
  EXPECT_EQ(gateway->transitions_logged(), 6U);

  const auto taken = queue->take();
  EXPECT_EQ(rows_of(taken, 0), 4U);
  EXPECT_EQ(rows_of(taken, 1), 2U);
  for (const auto& [policy, m] : taken) {
    EXPECT_TRUE(nodes::consistent(m));
    if (policy != 1) continue;
    // Agent 2: (1 0 0, action 1, reward 3, 2 2 2) then the end: (2 2 2, action 1, 0.5, terminal).
    EXPECT_EQ(m.observations, (std::vector<float>{1, 0, 0, 2, 2, 2}));
    EXPECT_EQ(m.next_observations, (std::vector<float>{2, 2, 2, 2, 2, 2}));
    EXPECT_EQ(m.actions, (std::vector<std::int64_t>{1, 1}));
    EXPECT_EQ(m.rewards, (std::vector<float>{3.0F, 0.5F}));
    EXPECT_EQ(m.terminated, (std::vector<std::uint8_t>{0, 1}));
  }
  const std::string text = metrics.text();
  EXPECT_NE(text.find("tagflow_gateway_transitions_total{kind=\"inference\",mode=\"reactor\","
                      "node=\"inference-0\",outcome=\"logged\",policy=\"p0\"} 4"),
            std::string::npos)
      << text;

  // An unlogged episode queues nothing.
  const auto plain = client.episode_start();
  ASSERT_TRUE(plain.ok);
  EXPECT_FALSE(plain.log);
  const auto act = client.act({{0, {1, 1, 1}}}, plain.episode);
  EXPECT_FALSE(act.logged);
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}}, plain.episode, {{0, 1.0}}).ok);
  EXPECT_EQ(client.episode_end(plain.episode).logged, 0U);
  EXPECT_TRUE(queue->take().empty());
}

TEST(ServiceGatewayExperienceTest, WrongUseIsRefusedWithAReason) {
  {
    const auto gateway = start_gateway(GatewayConfig{});  // no replay linked
    GatewayClient client(gateway->endpoint());
    const auto refused = client.episode_start(true);
    EXPECT_EQ(refused.error, "no_replay");
    EXPECT_NE(refused.reason.find("experience"), std::string::npos) << refused.reason;
    EXPECT_TRUE(client.episode_start().ok);
  }
  GatewayConfig config = logging(1000);
  const auto queue = config.experience;
  const auto gateway = start_gateway(config);
  GatewayClient client(gateway->endpoint());
  const auto episode = client.episode_start(true).episode;
  // Rewards for an agent that has no step open: before any act, and for one not in the step.
  auto reply = client.act({{0, {1, 1, 1}}}, episode, {{0, 1.0}});
  EXPECT_EQ(reply.error, "not_in_step");
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}}, episode).ok);
  reply = client.act({{0, {1, 1, 1}}}, episode, {{2, 1.0}});
  EXPECT_EQ(reply.error, "not_in_step");
  EXPECT_NE(reply.reason.find("agent 2"), std::string::npos) << reply.reason;
  EXPECT_EQ(client.episode_end(episode, {}, {{1, true}}).error, "not_in_step");
  // The refusals changed nothing: the step of agent 0 is still open.
  const auto ended = client.episode_end(episode, {{0, 2.0}});
  ASSERT_TRUE(ended.ok);
  EXPECT_EQ(ended.logged, 1U);
  const auto taken = queue->take();
  ASSERT_EQ(rows_of(taken, 0), 1U);
  EXPECT_EQ(taken.front().second.rewards, (std::vector<float>{2.0F}));
}

TEST(ServiceGatewayExperienceTest, TransitionsBeyondTheQueuesBoundAreDroppedAndCounted) {
  monitoring::ProcessMetrics metrics({"inference-0", "inference", "reactor"},
                                     tagflow::test::families("inference"));
  const auto gateway = start_gateway(logging(2), &metrics);
  GatewayClient client(gateway->endpoint());
  const auto episode = client.episode_start(true).episode;
  ASSERT_TRUE(client.act({{0, {1, 1, 1}}, {1, {1, 1, 1}}, {2, {1, 1, 1}}}, episode).ok);
  const auto ended = client.episode_end(episode);
  ASSERT_TRUE(ended.ok) << ended.reason;
  // p0's two rows fit, p1's row is beyond the bound of 2.
  EXPECT_EQ(ended.logged, 2U);
  EXPECT_EQ(gateway->transitions_logged(), 2U);
  EXPECT_EQ(gateway->transitions_dropped(), 1U);
  EXPECT_NE(metrics.text().find("outcome=\"dropped\",policy=\"p1\"} 1"), std::string::npos);
}

// PROTOCOL.md §4.3: a logged agent whose policy has no replay plays on; its transitions are
// dropped and counted (outcome no_replay), `logged` leaves them out, and hello says which
// policies have a replay.
TEST(ServiceGatewayExperienceTest, TransitionsOfAPolicyWithoutAReplayAreDroppedAndCounted) {
  monitoring::ProcessMetrics metrics({"inference-0", "inference", "reactor"},
                                     tagflow::test::families("inference"));
  GatewayConfig config = logging(1000);
  config.replayed_policies = std::set<int>{0};  // p1 (agent 2) has no replay
  const auto queue = config.experience;
  const auto gateway = start_gateway(config, &metrics);
  GatewayClient client(gateway->endpoint());
  const auto episode = client.episode_start(true).episode;
  ASSERT_TRUE(client.act({{0, {1, 1, 1}}, {2, {1, 1, 1}}}, episode).ok);
  const auto second = client.act({{0, {2, 2, 2}}, {2, {2, 2, 2}}}, episode, {{0, 1.0}, {2, 1.0}});
  ASSERT_TRUE(second.ok) << second.reason;
  EXPECT_EQ(second.logged, std::optional<std::uint64_t>(1));
  const auto ended = client.episode_end(episode, {{2, 1.0}});
  ASSERT_TRUE(ended.ok) << ended.reason;
  EXPECT_EQ(ended.logged, 2U);
  EXPECT_EQ(gateway->transitions_logged(), 2U);
  EXPECT_EQ(gateway->transitions_without_replay(), 2U);
  const auto taken = queue->take();
  EXPECT_EQ(rows_of(taken, 0), 2U);
  EXPECT_EQ(rows_of(taken, 1), 0U);
  EXPECT_NE(metrics.text().find("outcome=\"no_replay\",policy=\"p1\"} 2"), std::string::npos)
      << metrics.text();
  msgpack::object_handle h;
  const std::vector<std::uint8_t> hello_frame = {0x82, 0xa2, 'o', 'p',  0xa5, 'h', 'e',
                                                 'l',  'l',  'o', 0xa1, 'v',  0x01};
  const std::vector<std::uint8_t> raw = client.exchange_raw(hello_frame);
  h = msgpack::unpack(reinterpret_cast<const char*>(raw.data()), raw.size());
  const auto policies = h.get().as<std::map<std::string, msgpack::object>>().at("policies");
  const auto by_name = policies.as<std::map<std::string, std::map<std::string, msgpack::object>>>();
  EXPECT_TRUE(by_name.at("p0").at("replay").as<bool>());
  EXPECT_FALSE(by_name.at("p1").at("replay").as<bool>());
}

// PROTOCOL.md §5: `busy` for an act of a logged episode read while another act of it is read and
// not yet answered. Here the first waits in the queue (max_wait: nothing is due until p0 has
// max_batch rows), so the second is read while it is unanswered.
TEST(ServiceGatewayExperienceTest, AnActOfALoggedEpisodeReadWhileItsLastIsUnansweredIsBusy) {
  GatewayConfig config = logging(1000);
  config.max_wait = std::chrono::hours(1);
  config.max_batch = 2;
  const auto gateway = start_gateway(config);
  GatewayClient client(gateway->endpoint());
  const auto episode = client.episode_start(true).episode;
  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(gateway->endpoint());
  dealer.send(zmq::buffer(GatewayClient::act_request(1, {{0, {1, 1, 1}}}, episode)));
  dealer.send(zmq::buffer(GatewayClient::act_request(2, {{0, {1, 1, 1}}}, episode)));
  const auto reply_of = [&dealer] {
    zmq::message_t frame;
    EXPECT_TRUE(dealer.recv(frame));
    const auto h = msgpack::unpack(static_cast<const char*>(frame.data()), frame.size());
    const auto m = h.get().as<std::map<std::string, msgpack::object>>();
    std::string outcome = m.at("ok").as<bool>() ? "ok" : m.at("error").as<std::string>();
    if (m.count("busy") != 0) outcome += ":" + m.at("busy").as<std::string>();
    return std::make_pair(m.at("id").as<int>(), outcome);
  };
  EXPECT_EQ(reply_of(), std::make_pair(2, std::string("busy:episode")));
  // Two rows of p0 from another client fill its batch: the queued act is due and answered.
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}, {1, {1, 1, 1}}}).ok);
  EXPECT_EQ(reply_of(), std::make_pair(1, std::string("ok")));
  EXPECT_TRUE(client.episode_end(episode).ok);
}

}  // namespace
}  // namespace tagflow::gateway
