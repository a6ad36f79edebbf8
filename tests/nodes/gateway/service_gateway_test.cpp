#include "nodes/gateway/service_gateway.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <msgpack.hpp>
#include <zmq.hpp>

#include "clients/cpp/gateway_client.hpp"
#include "monitoring/process_metrics.hpp"
#include "tests/nodes/gateway/fake_backend.hpp"
#include "tests/support/failed_handshake.hpp"
#include "tests/support/kind_families.hpp"
#include "tests/support/raw_zmtp_peer.hpp"
#include "transport/curve_keys.hpp"

namespace tagflow::gateway {
namespace {

using clients::GatewayClient;
using testing::FakeBackend;

std::unique_ptr<ServiceGateway> start(GatewayConfig config = {},
                                      std::shared_ptr<FakeBackend::Shared> shared = nullptr,
                                      monitoring::ProcessMetrics* metrics = nullptr) {
  auto backend = shared ? std::make_unique<FakeBackend>(shared) : std::make_unique<FakeBackend>();
  return std::make_unique<ServiceGateway>(std::move(config), std::move(backend), metrics);
}

std::map<std::string, msgpack::object> fields(const std::vector<std::uint8_t>& frame,
                                              msgpack::object_handle& keep) {
  keep = msgpack::unpack(reinterpret_cast<const char*>(frame.data()), frame.size());
  return keep.get().as<std::map<std::string, msgpack::object>>();
}

/// The next reply frame on `socket` as a map (empty when none came); `keep` holds its objects.
std::map<std::string, msgpack::object> next_reply(zmq::socket_t& socket,
                                                  msgpack::object_handle& keep) {
  zmq::message_t reply;
  if (!socket.recv(reply)) return {};
  const auto* data = static_cast<const std::uint8_t*>(reply.data());
  return fields({data, data + reply.size()}, keep);
}

TEST(ServiceGatewayTest, HelloListsTheAgentsAndPoliciesServedHere) {
  const auto gateway = start();
  GatewayClient client(gateway->endpoint());
  const auto hello = client.hello();
  ASSERT_TRUE(hello.ok) << hello.reason;
  EXPECT_EQ(hello.server, "inference-0");
  EXPECT_EQ(hello.v, 1U);
  EXPECT_EQ(hello.observation_size, 3U);
  EXPECT_TRUE(hello.time_input);
  EXPECT_EQ(hello.max_episode_steps, 50U);
  EXPECT_EQ(hello.agents, (std::map<std::uint32_t, std::string>{{0, "p0"}, {1, "p0"}, {2, "p1"}}));
  EXPECT_EQ(hello.versions.size(), 2U);
}

// The C++ client keeps what a `version` refusal says the gateway speaks (a gateway scripted here:
// the real one speaks the client's version).
TEST(ServiceGatewayTest, TheClientKeepsTheVersionsAVersionRefusalNames) {
  zmq::context_t context;
  zmq::socket_t router(context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  router.bind("tcp://127.0.0.1:*");
  const std::string endpoint = router.get(zmq::sockopt::last_endpoint);
  std::thread gateway([&] {
    zmq::message_t identity, request;
    if (!router.recv(identity) || !router.recv(request)) return;
    msgpack::sbuffer b;
    msgpack::packer<msgpack::sbuffer> p(b);
    p.pack_map(6);
    p.pack("op");
    p.pack("hello");
    p.pack("ok");
    p.pack(false);
    p.pack("id");
    p.pack_nil();
    p.pack("error");
    p.pack("version");
    p.pack("reason");
    p.pack("this gateway speaks versions 2 and 3");
    p.pack("versions");
    p.pack(std::vector<std::uint32_t>{2, 3});
    router.send(identity, zmq::send_flags::sndmore);
    router.send(zmq::buffer(b.data(), b.size()), zmq::send_flags::none);
  });
  GatewayClient client(endpoint);
  const auto hello = client.hello();
  gateway.join();
  EXPECT_FALSE(hello.ok);
  EXPECT_EQ(hello.error, "version");
  EXPECT_EQ(hello.accepted_versions, (std::vector<std::uint32_t>{2, 3}));
}

TEST(ServiceGatewayTest, ActAnswersEveryAgentWithItsPolicyAndVersion) {
  const auto gateway = start();
  gateway->offer_weights(1, nodes::WeightsMessage{4, {}});
  GatewayClient client(gateway->endpoint());
  const auto reply = client.act({{0, {1, 1, 1}}, {1, {-1, -1, -1}}, {2, {0, 0, 1}}});
  ASSERT_TRUE(reply.ok) << reply.error << ": " << reply.reason;
  EXPECT_EQ(reply.actions, (std::map<std::uint32_t, std::int64_t>{{0, 1}, {1, 0}, {2, 1}}));
  EXPECT_EQ(reply.policies.at(2), "p1");
  EXPECT_EQ(reply.versions.at(2), 4U);
  EXPECT_EQ(reply.versions.at(0), 0U);
  EXPECT_EQ(gateway->rows_answered(), 3U);
}

// A gateway on an IPv6 address (`gateway_bind: "::1"`, or "::" for every interface: PROTOCOL.md
// §1) sets ZMQ_IPV6 itself, and the client sets it for a bracketed endpoint; "::" answers IPv4
// clients as well. A host name with only IPv4 addresses leaves the client on IPv4.
TEST(ServiceGatewayTest, AnIpv6GatewayAnswersClientsAtItsBracketedEndpoint) {
  GatewayConfig loopback;
  loopback.endpoint = "tcp://[::1]:0";
  const auto gateway = start(loopback);
  ASSERT_EQ(gateway->endpoint().rfind("tcp://[::1]:", 0), 0U) << gateway->endpoint();
  GatewayClient client(gateway->endpoint());
  const auto reply = client.act({{0, {1, 1, 1}}, {2, {0, 0, 1}}});
  ASSERT_TRUE(reply.ok) << reply.error << ": " << reply.reason;
  EXPECT_EQ(reply.actions, (std::map<std::uint32_t, std::int64_t>{{0, 1}, {2, 1}}));

  GatewayConfig every;
  every.endpoint = "tcp://[::]:0";
  const auto dual = start(every);
  const std::string port = std::to_string(dual->port());
  for (const std::string& endpoint :
       {"tcp://[::1]:" + port, "tcp://127.0.0.1:" + port, "tcp://localhost:" + port}) {
    GatewayClient other(endpoint);
    const auto hello = other.hello();
    EXPECT_TRUE(hello.ok) << endpoint << ": " << hello.reason;
  }
}

TEST(ServiceGatewayTest, RefusesWithAReasonAndKeepsServing) {
  monitoring::ProcessMetrics metrics({"inference-0", "inference", "reactor"},
                                     tagflow::test::families("inference"));
  const auto gateway = start({}, nullptr, &metrics);
  GatewayClient client(gateway->endpoint());
  auto reply = client.act({{3, {1, 1, 1}}});
  EXPECT_EQ(reply.error, "not_served");
  EXPECT_NE(reply.reason.find("other-0"), std::string::npos) << reply.reason;
  EXPECT_EQ(client.act({{7, {1, 1, 1}}}).error, "unknown_agent");
  EXPECT_EQ(client.act({{0, {1, 1}}}).error, "width");
  EXPECT_EQ(client.act({{0, {1, std::nanf(""), 1}}}).error, "nan");
  msgpack::object_handle h;
  const auto garbage = fields(client.exchange_raw({0xc1, 0x02}), h);
  EXPECT_EQ(garbage.at("error").as<std::string>(), "malformed");
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}}).ok);
  EXPECT_EQ(gateway->requests_refused(), 5U);
  const std::string text = metrics.text();
  EXPECT_NE(text.find("tagflow_gateway_errors_total{kind=\"inference\",mode=\"reactor\",node="
                      "\"inference-0\",policy=\"none\",reason=\"nan\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("tagflow_gateway_requests_total{kind=\"inference\",mode=\"reactor\",node="
                      "\"inference-0\",policy=\"p0\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("tagflow_gateway_batch_size_count"), std::string::npos);
}

TEST(ServiceGatewayTest, AReqClientAndAWrongVersionGetReplies) {
  const auto gateway = start();
  zmq::context_t context;
  zmq::socket_t req(context, zmq::socket_type::req);
  req.set(zmq::sockopt::linger, 0);
  req.connect(gateway->endpoint());
  msgpack::sbuffer full;  // {"op": "health", "v": 9, "id": 2}
  msgpack::packer<msgpack::sbuffer> q(full);
  q.pack_map(3);
  q.pack("op");
  q.pack("health");
  q.pack("v");
  q.pack(9);
  q.pack("id");
  q.pack(2);
  req.send(zmq::buffer(full.data(), full.size()));
  msgpack::object_handle h;
  const auto m = next_reply(req, h);
  ASSERT_FALSE(m.empty());
  EXPECT_EQ(m.at("error").as<std::string>(), "version");
  EXPECT_EQ(m.at("id").as<int>(), 2);
}

TEST(ServiceGatewayTest, EpisodesCountStepsAndSumRewards) {
  const auto gateway = start();
  GatewayClient client(gateway->endpoint());
  const auto started = client.episode_start();
  ASSERT_TRUE(started.ok);
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}}, started.episode).ok);
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}}, started.episode, {{0, 1.5}}).ok);
  const auto ended = client.episode_end(started.episode, {{0, 2.0}, {2, -1.0}});
  ASSERT_TRUE(ended.ok) << ended.reason;
  EXPECT_EQ(ended.steps, 2U);
  EXPECT_DOUBLE_EQ(ended.returns.at(0), 3.5);
  EXPECT_DOUBLE_EQ(ended.returns.at(2), -1.0);
  EXPECT_EQ(client.episode_end(started.episode).error, "unknown_episode");
  EXPECT_EQ(client.act({{0, {1, 1, 1}}}, 999).error, "unknown_episode");
}

// PROTOCOL.md §4, step 3: a gateway's episode ids count from 1 again after a restart, so each
// start has its own `instance`; a request that names the instance its episode was started on is
// refused by a restarted gateway rather than taken for that gateway's new episode of the same id.
// The C++ client sends the instance of every episode it started.
TEST(ServiceGatewayTest, ARestartedGatewayRefusesAnEpisodeOfItsPreviousInstance) {
  auto first = start();
  const std::string endpoint = first->endpoint();
  GatewayClient client(endpoint);
  const auto hello = client.hello();
  ASSERT_TRUE(hello.ok) << hello.reason;
  EXPECT_NE(hello.instance, 0U);
  EXPECT_EQ(client.health().instance, hello.instance);
  const auto started = client.episode_start();
  ASSERT_TRUE(started.ok) << started.reason;
  EXPECT_EQ(started.episode, 1U);
  EXPECT_EQ(started.instance, hello.instance);
  ASSERT_TRUE(client.act({{0, {1, 1, 1}}}, started.episode).ok);

  first.reset();  // the gateway restarts on the same endpoint
  GatewayConfig again;
  again.endpoint = endpoint;
  const auto second = start(again);
  GatewayClient other(endpoint);
  const auto reopened = other.episode_start();  // the new gateway's episode 1
  ASSERT_TRUE(reopened.ok) << reopened.reason;
  EXPECT_EQ(reopened.episode, started.episode);
  EXPECT_NE(reopened.instance, started.instance);

  const auto refused = client.act({{0, {1, 1, 1}}}, started.episode, {{0, 1.0}});
  EXPECT_EQ(refused.error, "unknown_episode");
  EXPECT_NE(refused.reason.find("or before this one restarted"), std::string::npos)
      << refused.reason;
  // A retry is refused the same way: the client still sends the instance after the refusal.
  EXPECT_EQ(client.act({{0, {1, 1, 1}}}, started.episode, {{0, 1.0}}).error, "unknown_episode");
  EXPECT_EQ(client.episode_end(started.episode).error, "unknown_episode");
  EXPECT_EQ(client.episode_end(started.episode).error, "unknown_episode");
  // Without the instance (a client that does not send it) the id names the new episode: what the
  // instance is for.
  msgpack::object_handle h;
  const auto taken = fields(
      client.exchange_raw(GatewayClient::act_request(90, {{0, {1, 1, 1}}}, started.episode)), h);
  EXPECT_TRUE(taken.at("ok").as<bool>());
  const auto ended = other.episode_end(reopened.episode);
  ASSERT_TRUE(ended.ok) << ended.reason;
  EXPECT_EQ(ended.steps, 1U);  // the request of the old episode, counted in the new one
  EXPECT_EQ(ended.instance, reopened.instance);
  // A wrong instance on episode_end is refused the same way.
  const auto next = other.episode_start();
  ASSERT_TRUE(next.ok);
  const auto wrong = fields(other.exchange_raw([&] {
    msgpack::sbuffer b;
    msgpack::packer<msgpack::sbuffer> p(b);
    p.pack_map(5);
    p.pack("op");
    p.pack("episode_end");
    p.pack("v");
    p.pack(1);
    p.pack("id");
    p.pack(91);
    p.pack("episode");
    p.pack(next.episode);
    p.pack("instance");
    p.pack(next.instance + 1);
    return std::vector<std::uint8_t>(b.data(), b.data() + b.size());
  }()),
                            h);
  EXPECT_EQ(wrong.at("error").as<std::string>(), "unknown_episode");
  EXPECT_TRUE(other.episode_end(next.episode).ok);
}

/// Sends `n` act requests on one DEALER without waiting, then reads `read` replies (all by
/// default): "ok", the error, or "busy:" and whose limit it was.
std::vector<std::string> pipeline(const std::string& endpoint, int n, int read = -1) {
  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(endpoint);
  for (int i = 0; i < n; ++i) {
    dealer.send(zmq::buffer(
        GatewayClient::act_request(static_cast<std::uint64_t>(i + 1), {{0, {1, 2, 3}}})));
  }
  std::vector<std::string> outcomes;
  for (int i = 0; i < (read < 0 ? n : read); ++i) {
    zmq::message_t reply;
    if (!dealer.recv(reply)) break;
    const auto h = msgpack::unpack(static_cast<const char*>(reply.data()), reply.size());
    const auto m = h.get().as<std::map<std::string, msgpack::object>>();
    std::string outcome = m.at("ok").as<bool>() ? "ok" : m.at("error").as<std::string>();
    if (m.count("busy") != 0) outcome += ":" + m.at("busy").as<std::string>();
    outcomes.push_back(outcome);
  }
  return outcomes;
}

TEST(ServiceGatewayTest, BeyondTheInFlightCapAClientIsToldBusy) {
  GatewayConfig config;
  config.max_in_flight = 3;
  config.max_wait = std::chrono::hours(1);  // nothing is due: the first three stay queued
  config.max_batch = 64;
  const auto gateway = start(config);
  const std::vector<std::string> outcomes = pipeline(gateway->endpoint(), 8, 5);
  EXPECT_EQ(outcomes, std::vector<std::string>(5, "busy:client"));
  EXPECT_EQ(gateway->busy_replies(), 5U);
}

TEST(ServiceGatewayTest, BeyondTheQueuesByteBudgetClientsAreToldBusy) {
  GatewayConfig config;
  config.max_in_flight = 100;
  config.max_queue_bytes = 2 * 3 * sizeof(float);  // two one-agent requests
  config.max_wait = std::chrono::hours(1);         // nothing is due: they stay queued
  const auto gateway = start(config);
  EXPECT_EQ(pipeline(gateway->endpoint(), 6, 4), std::vector<std::string>(4, "busy:gateway"));
}

TEST(ServiceGatewayTest, MaxWaitZeroServesALoneRequestAtOnceAndMaxBatchBoundsAPass) {
  GatewayConfig config;
  config.max_batch = 2;
  config.max_in_flight = 16;
  config.max_wait = std::chrono::hours(1);  // only full batches go before the deadline
  const auto gateway = start(config);
  // Four requests of one row of p0: two full batches of 2, served without waiting for max_wait.
  const std::vector<std::string> outcomes = pipeline(gateway->endpoint(), 4);
  EXPECT_EQ(std::count(outcomes.begin(), outcomes.end(), "ok"), 4);
  EXPECT_EQ(gateway->forward_passes(), 2U);
  const auto lone = start();  // max_wait 0
  GatewayClient client(lone->endpoint());
  EXPECT_TRUE(client.act({{2, {1, 1, 1}}}).ok);
}

/// Reads one reply from `dealer` within `timeout`; its fields, or an empty map when none came.
std::map<std::string, msgpack::object> next_reply(zmq::socket_t& dealer,
                                                  std::chrono::milliseconds timeout,
                                                  msgpack::object_handle& keep) {
  zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, timeout) == 0) return {};
  zmq::message_t reply;
  if (!dealer.recv(reply)) return {};
  keep = msgpack::unpack(static_cast<const char*>(reply.data()), reply.size());
  return keep.get().as<std::map<std::string, msgpack::object>>();
}

TEST(ServiceGatewayTest, EachPolicyBatchesWithItsOwnSettingsAndNeverDelaysAnother) {
  GatewayConfig config;  // max_wait 0 for every policy but p0
  config.max_in_flight = 16;
  config.policy_batching[0] = {2U, std::chrono::hours(1)};  // p0: waits for two rows
  const auto gateway = start(config);
  zmq::context_t context;
  zmq::socket_t waiting(context, zmq::socket_type::dealer);
  waiting.set(zmq::sockopt::linger, 0);
  waiting.connect(gateway->endpoint());
  // An act for p0, then a hello on the same connection: the hello's reply proves the act was
  // read (one connection is read in order), and it lists each policy's own settings.
  waiting.send(zmq::buffer(GatewayClient::act_request(1, {{0, {1, 2, 3}}})));
  msgpack::sbuffer hello_request;  // {"op": "hello", "v": 1, "id": 2}
  msgpack::packer<msgpack::sbuffer> q(hello_request);
  q.pack_map(3);
  q.pack("op");
  q.pack("hello");
  q.pack("v");
  q.pack(1);
  q.pack("id");
  q.pack(2);
  waiting.send(zmq::buffer(hello_request.data(), hello_request.size()));
  msgpack::object_handle h1;
  auto hello = next_reply(waiting, std::chrono::seconds(10), h1);
  ASSERT_EQ(hello.at("op").as<std::string>(), "hello");
  const auto policies = hello.at("policies").as<std::map<std::string, msgpack::object>>();
  const auto p0 = policies.at("p0").as<std::map<std::string, msgpack::object>>();
  const auto p1 = policies.at("p1").as<std::map<std::string, msgpack::object>>();
  EXPECT_EQ(p0.at("max_batch").as<std::uint32_t>(), 2U);
  EXPECT_EQ(p0.at("max_wait_us").as<std::uint64_t>(), 3600000000ULL);
  EXPECT_EQ(p1.at("max_batch").as<std::uint32_t>(), 64U);
  EXPECT_EQ(p1.at("max_wait_us").as<std::uint64_t>(), 0U);

  // p1 (max_wait 0) is served at once while p0's request waits for its batch.
  GatewayClient other(gateway->endpoint());
  const auto served = other.act({{2, {1, 1, 1}}});
  ASSERT_TRUE(served.ok) << served.error << ": " << served.reason;
  EXPECT_EQ(served.policies.at(2), "p1");
  msgpack::object_handle h2;
  EXPECT_TRUE(next_reply(waiting, std::chrono::milliseconds(200), h2).empty())
      << "p0's lone request was served before its batch was full or its max_wait passed";
  EXPECT_EQ(gateway->forward_passes(), 1U);

  // A second p0 row fills p0's batch: both requests are answered, in one forward pass.
  waiting.send(zmq::buffer(GatewayClient::act_request(3, {{1, {-1, -1, -1}}})));
  std::set<std::uint64_t> answered;
  for (int i = 0; i < 2; ++i) {
    msgpack::object_handle h;
    const auto reply = next_reply(waiting, std::chrono::seconds(10), h);
    ASSERT_FALSE(reply.empty()) << "p0's full batch was not served";
    EXPECT_TRUE(reply.at("ok").as<bool>());
    answered.insert(reply.at("id").as<std::uint64_t>());
  }
  EXPECT_EQ(answered, (std::set<std::uint64_t>{1, 3}));
  EXPECT_EQ(gateway->forward_passes(), 2U);
  // `rows` above a policy's own max_batch is refused for that policy (p1 would take it).
  msgpack::sbuffer wide;  // {"op": "act", "v": 1, "id": 4, "rows": 3, "obs": {0: 9 floats}}
  msgpack::packer<msgpack::sbuffer> w(wide);
  w.pack_map(5);
  w.pack("op");
  w.pack("act");
  w.pack("v");
  w.pack(1);
  w.pack("id");
  w.pack(4);
  w.pack("rows");
  w.pack(3);
  w.pack("obs");
  w.pack_map(1);
  w.pack(0);
  w.pack(std::vector<float>(9, 1.0F));
  waiting.send(zmq::buffer(wide.data(), wide.size()));
  msgpack::object_handle h3;
  const auto refused = next_reply(waiting, std::chrono::seconds(10), h3);
  ASSERT_FALSE(refused.empty());
  EXPECT_EQ(refused.at("error").as<std::string>(), "too_large");
  EXPECT_NE(refused.at("reason").as<std::string>().find("p0"), std::string::npos);
}

TEST(ServiceGatewayTest, AFailingPolicyGetsInternalErrorsAndTheNextPassWorks) {
  auto shared = std::make_shared<FakeBackend::Shared>();
  const auto gateway = start({}, shared);
  GatewayClient client(gateway->endpoint());
  shared->fail = true;
  EXPECT_EQ(client.act({{0, {1, 1, 1}}}).error, "internal");
  shared->fail = false;
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}}).ok);
}

// A pass that fails on one request's rows is served again one request at a time: only that
// request is refused, the other client of the pass gets its answer, and the failure is logged once.
TEST(ServiceGatewayTest, APassFailingOnOneRequestRefusesOnlyThatRequest) {
  auto shared = std::make_shared<FakeBackend::Shared>();
  shared->fail_on_13 = true;
  GatewayConfig config;
  config.policy_batching[0] = {2U, std::chrono::hours(1)};  // p0: one pass for two rows
  std::mutex lines_mutex;
  std::vector<std::string> lines;
  const auto gateway =
      std::make_unique<ServiceGateway>(std::move(config), std::make_unique<FakeBackend>(shared),
                                       nullptr, [&](const std::string& line) {
                                         const std::lock_guard<std::mutex> lock(lines_mutex);
                                         lines.push_back(line);
                                       });
  zmq::context_t context;
  zmq::socket_t poisoned(context, zmq::socket_type::dealer);
  zmq::socket_t healthy(context, zmq::socket_type::dealer);
  for (zmq::socket_t* socket : {&poisoned, &healthy}) {
    socket->set(zmq::sockopt::linger, 0);
    socket->connect(gateway->endpoint());
  }
  poisoned.send(zmq::buffer(GatewayClient::act_request(1, {{0, {13, 1, 1}}})));
  healthy.send(zmq::buffer(GatewayClient::act_request(2, {{1, {1, 1, 1}}})));
  msgpack::object_handle h1;
  msgpack::object_handle h2;
  const auto refused = next_reply(poisoned, std::chrono::seconds(10), h1);
  const auto answered = next_reply(healthy, std::chrono::seconds(10), h2);
  ASSERT_FALSE(refused.empty());
  ASSERT_FALSE(answered.empty());
  EXPECT_EQ(refused.at("error").as<std::string>(), "internal");
  EXPECT_NE(refused.at("reason").as<std::string>().find("failed on 13"), std::string::npos);
  ASSERT_TRUE(answered.at("ok").as<bool>());
  EXPECT_EQ(answered.at("id").as<std::uint64_t>(), 2U);
  // The batch of two, then each request alone.
  EXPECT_EQ(shared->passes.load(), 3U);
  EXPECT_EQ(gateway->rows_answered(), 1U);
  const std::lock_guard<std::mutex> lock(lines_mutex);
  const auto failure_lines = std::count_if(lines.begin(), lines.end(), [](const std::string& line) {
    return line.find("forward pass") != std::string::npos;
  });
  EXPECT_EQ(failure_lines, 1);
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& line) {
    return line.find("served one at a time: 1 of 2 answered") != std::string::npos;
  }));
}

TEST(ServiceGatewayTest, TooManyFramesAreDroppedAndAClientThatNeverReadsLosesOnlyItsReplies) {
  GatewayConfig config;
  config.max_reply_queue = 4;
  config.max_in_flight = 1000;
  const auto gateway = start(config);
  zmq::context_t context;
  zmq::socket_t junk(context, zmq::socket_type::dealer);
  junk.set(zmq::sockopt::linger, 0);
  junk.set(zmq::sockopt::rcvhwm, 1);  // a reader that takes nothing
  junk.connect(gateway->endpoint());
  for (int i = 0; i < 6; ++i) junk.send(zmq::str_buffer("x"), zmq::send_flags::sndmore);
  junk.send(zmq::str_buffer("x"));
  msgpack::sbuffer b;
  msgpack::packer<msgpack::sbuffer> p(b);
  p.pack_map(2);
  p.pack("op");
  p.pack("health");
  p.pack("v");
  p.pack(1);
  for (int i = 0; i < 20000; ++i) junk.send(zmq::buffer(b.data(), b.size()));
  GatewayClient client(gateway->endpoint());
  for (int i = 0; i < 5000 && gateway->replies_dropped() == 0; ++i) {
    EXPECT_TRUE(client.health().ok);
  }
  EXPECT_GT(gateway->replies_dropped(), 0U);
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}}).ok);
}

// Without CURVE the gateway's socket has a connection guard (transport/WIRE.md §3.1): a message
// that never ends is cut near two requests' worth (32 MiB), counted, and clients go on.
TEST(ServiceGatewayTest, AMessageWithoutEndIsCutAndCountedAndClientsGoOn) {
  monitoring::ProcessMetrics metrics({"inference-0", "inference", "reactor"},
                                     tagflow::test::families("inference"));
  const auto gateway = start({}, nullptr, &metrics);
  const std::string endpoint = gateway->endpoint();
  const auto port = static_cast<std::uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
  tagflow::testing::RawZmtpPeer intruder(port, "intruder");
  ASSERT_TRUE(intruder.connected());
  // 1 MiB frames with MORE, at most 1 GiB/s, up to 512 MiB.
  const tagflow::testing::EndlessMessage flood{std::size_t{1} << 20, std::chrono::milliseconds(1),
                                               512};
  const int frames = flood.send(intruder);
  EXPECT_LT(frames, flood.max_frames) << "never cut";
  EXPECT_LT(intruder.bytes_sent(), std::uint64_t{160} << 20);
  GatewayClient client(endpoint);
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}}).ok);  // the gateway counts the cut as it reads
  const auto counted = [&](const char* reason) {
    return metrics
        .counter(monitoring::Metric::transport_invalid_messages,
                 {{"peer", "(unidentified)"}, {"reason", reason}})
        .Value();
  };
  EXPECT_EQ(counted("incomplete_over_cap") + counted("over_process_budget"), 1.0);
}

/// A client's CURVE options: the gateway's public key and the client's own pair.
clients::ClientOptions curve_client(const transport::CurveKeyPair& server,
                                    const transport::CurveKeyPair& client) {
  clients::ClientOptions options;
  options.server_public_key = server.public_key;
  options.public_key = client.public_key;
  options.secret_key = client.secret_key;
  return options;
}

/// Six idle connections and `client` against a gateway that keeps three: `client` keeps talking
/// until the gateway counted four cuts of `too_many_connections` (it counts them as it reads),
/// then is still served.
void expect_four_idle_cut(monitoring::ProcessMetrics& metrics, GatewayClient& client) {
  const auto closed = [&] {
    return metrics
        .counter(monitoring::Metric::transport_invalid_messages,
                 {{"peer", "(unidentified)"}, {"reason", "too_many_connections"}})
        .Value();
  };
  for (int i = 0; i < 200 && closed() < 4.0; ++i) {
    EXPECT_TRUE(client.health().ok);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(closed(), 4.0);
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}}).ok);
}

// Without CURVE the gateway keeps at most `max_clients` connections: idle ones beyond it are
// closed, quietest first, counted, and a client that comes after them is served.
TEST(ServiceGatewayTest, IdleConnectionsBeyondMaxClientsAreClosedAndANewClientIsServed) {
  monitoring::ProcessMetrics metrics({"inference-0", "inference", "reactor"},
                                     tagflow::test::families("inference"));
  GatewayConfig config;
  config.max_clients = 3;
  const auto gateway = start(config, nullptr, &metrics);
  const std::string endpoint = gateway->endpoint();
  const auto port = static_cast<std::uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
  std::vector<std::unique_ptr<tagflow::testing::RawZmtpPeer>> idle;
  for (int i = 0; i < 6; ++i) {
    idle.push_back(
        std::make_unique<tagflow::testing::RawZmtpPeer>(port, "idle-" + std::to_string(i)));
    ASSERT_TRUE(idle.back()->connected()) << i;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  GatewayClient client(endpoint);
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}}).ok);
  expect_four_idle_cut(metrics, client);
}

// With CURVE an admitted client can still open connections and leave them idle: the gateway
// keeps at most `max_clients` connections, the quietest closed and counted.
TEST(ServiceGatewayTest, WithCurveIdleConnectionsBeyondMaxClientsAreClosed) {
  monitoring::ProcessMetrics metrics({"inference-0", "inference", "reactor"},
                                     tagflow::test::families("inference"));
  const transport::CurveKeyPair server = transport::generate_curve_key_pair();
  const transport::CurveKeyPair mine = transport::generate_curve_key_pair();
  GatewayConfig config;
  config.curve_secret_key = server.secret_key;
  config.allowed_client_keys = {mine.public_key};
  config.max_clients = 3;
  const auto gateway = start(config, nullptr, &metrics);
  zmq::context_t context;
  std::vector<zmq::socket_t> idle;
  for (int i = 0; i < 6; ++i) {
    zmq::socket_t& s = idle.emplace_back(context, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::reconnect_ivl, -1);  // once closed, it stays closed
    s.set(zmq::sockopt::curve_serverkey, server.public_key);
    s.set(zmq::sockopt::curve_publickey, mine.public_key);
    s.set(zmq::sockopt::curve_secretkey, mine.secret_key);
    s.connect(gateway->endpoint());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  GatewayClient client(gateway->endpoint(), curve_client(server, mine));
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}}).ok);
  expect_four_idle_cut(metrics, client);  // never the client that keeps talking
  EXPECT_EQ(gateway->rows_answered(), 2U);
}

/// A request map packed from `build`, which packs `entries` key/value pairs.
template <class Build>
std::vector<std::uint8_t> request(std::uint32_t entries, Build build) {
  msgpack::sbuffer b;
  msgpack::packer<msgpack::sbuffer> p(b);
  p.pack_map(entries);
  build(p);
  return {reinterpret_cast<const std::uint8_t*>(b.data()),
          reinterpret_cast<const std::uint8_t*>(b.data()) + b.size()};
}

/// The entries `op` and `v: 1` of a request.
void pack_op(msgpack::packer<msgpack::sbuffer>& p, const char* op) {
  p.pack("op");
  p.pack(op);
  p.pack("v");
  p.pack(1);
}

/// {op: act, v: 1, id: `id`, obs: {0: a bin of `bytes` bytes}}
std::vector<std::uint8_t> act_with_bin(std::uint64_t id, std::size_t bytes,
                                       std::optional<std::uint32_t> rows = std::nullopt) {
  return request(rows ? 5 : 4, [&](msgpack::packer<msgpack::sbuffer>& p) {
    pack_op(p, "act");
    p.pack("id");
    p.pack(id);
    if (rows) {
      p.pack("rows");
      p.pack(*rows);
    }
    p.pack("obs");
    p.pack_map(1);
    p.pack(0);
    const std::vector<char> zeros(bytes, 0);
    p.pack_bin(static_cast<std::uint32_t>(bytes));
    p.pack_bin_body(zeros.data(), static_cast<std::uint32_t>(bytes));
  });
}

// PROTOCOL.md §2.1 and §6: an act over a limit is refused as too_large with its own id and op (a
// client matching replies by id used to wait forever for a reply with id 0 and op hello).
TEST(ServiceGatewayTest, AnOversizedActGetsItsOwnIdAndOpBack) {
  const auto gateway = start();
  GatewayClient client(gateway->endpoint());
  msgpack::object_handle h;
  // The bin of one observation row beyond max_batch (64) rows of 3 floats.
  const auto bin = fields(client.exchange_raw(act_with_bin(77, (64 * 3 + 1) * 4)), h);
  EXPECT_EQ(bin.at("error").as<std::string>(), "too_large");
  EXPECT_EQ(bin.at("id").as<std::uint64_t>(), 77U);
  EXPECT_EQ(bin.at("op").as<std::string>(), "act");
  EXPECT_NE(bin.at("reason").as<std::string>().find("a bin of 772 bytes (at most 768)"),
            std::string::npos);
  // A string of 100 characters, after the id and op.
  const auto text = fields(client.exchange_raw(request(4,
                                                       [](auto& p) {
                                                         pack_op(p, "act");
                                                         p.pack("id");
                                                         p.pack(78);
                                                         p.pack("note");
                                                         p.pack(std::string(100, 'x'));
                                                       })),
                           h);
  EXPECT_EQ(text.at("error").as<std::string>(), "too_large");
  EXPECT_EQ(text.at("id").as<std::uint64_t>(), 78U);
  // A map of 20 entries (the env has 4 agents; maps hold at most 16), with id and op after it.
  const auto map = fields(client.exchange_raw(request(4,
                                                      [](auto& p) {
                                                        p.pack("obs");
                                                        p.pack_map(20);
                                                        for (int k = 0; k < 20; ++k) {
                                                          p.pack(k);
                                                          p.pack(0);
                                                        }
                                                        pack_op(p, "act");
                                                        p.pack("id");
                                                        p.pack(79);
                                                      })),
                          h);
  EXPECT_EQ(map.at("error").as<std::string>(), "too_large");
  EXPECT_EQ(map.at("id").as<std::uint64_t>(), 79U);
  EXPECT_EQ(map.at("op").as<std::string>(), "act");
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}}).ok);
}

// PROTOCOL.md §6: an id that cannot be read comes back as nil, and the reason says why; bytes
// that are no MessagePack map have neither id nor op.
TEST(ServiceGatewayTest, ARequestWhoseIdCannotBeReadGetsANilIdThatSaysSo) {
  const auto gateway = start();
  GatewayClient client(gateway->endpoint());
  msgpack::object_handle h;
  const auto bad_id = fields(client.exchange_raw(request(3,
                                                         [](auto& p) {
                                                           pack_op(p, "health");
                                                           p.pack("id");
                                                           p.pack("seven");
                                                         })),
                             h);
  EXPECT_EQ(bad_id.at("error").as<std::string>(), "malformed");
  EXPECT_TRUE(bad_id.at("id").is_nil());
  EXPECT_EQ(bad_id.at("op").as<std::string>(), "health");
  EXPECT_NE(bad_id.at("reason").as<std::string>().find("id is a string"), std::string::npos);
  const auto garbage = fields(client.exchange_raw({0xc1, 0x02}), h);
  EXPECT_EQ(garbage.at("error").as<std::string>(), "malformed");
  EXPECT_TRUE(garbage.at("id").is_nil());
  EXPECT_TRUE(garbage.at("op").is_nil());
  // A well-formed map without an id: id 0, as the document says.
  const auto no_id =
      fields(client.exchange_raw(request(2, [](auto& p) { pack_op(p, "health"); })), h);
  EXPECT_TRUE(no_id.at("ok").as<bool>());
  EXPECT_EQ(no_id.at("id").as<std::uint64_t>(), 0U);
}

// PROTOCOL.md §2: more than 3 frames from a client get a malformed reply (nil op and id), sent
// without an envelope to a DEALER.
TEST(ServiceGatewayTest, MoreThanThreeFramesGetAMalformedReplyWithANilIdAndOp) {
  const auto gateway = start();
  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(gateway->endpoint());
  for (int i = 0; i < 3; ++i) dealer.send(zmq::str_buffer("x"), zmq::send_flags::sndmore);
  dealer.send(zmq::str_buffer("x"));
  msgpack::object_handle h;
  const auto m = next_reply(dealer, h);
  ASSERT_FALSE(m.empty());
  EXPECT_EQ(m.at("error").as<std::string>(), "malformed");
  EXPECT_TRUE(m.at("id").is_nil());
  EXPECT_TRUE(m.at("op").is_nil());
  // A DEALER's own envelope frame comes back in front of the reply (PROTOCOL.md §2).
  dealer.send(zmq::str_buffer("envelope"), zmq::send_flags::sndmore);
  dealer.send(zmq::buffer(GatewayClient::act_request(5, {{0, {1, 1, 1}}})));
  zmq::message_t envelope;
  ASSERT_TRUE(dealer.recv(envelope));
  EXPECT_EQ(envelope.to_string(), "envelope");
  ASSERT_TRUE(envelope.more());
  EXPECT_EQ(next_reply(dealer, h).at("id").as<int>(), 5);
}

// PROTOCOL.md §2.1: hello reports every limit as a number, and the gateway keeps exactly those.
TEST(ServiceGatewayTest, HelloReportsEveryLimitAndTheGatewayKeepsThem) {
  const auto gateway = start();
  GatewayClient client(gateway->endpoint());
  const auto hello = client.hello();
  ASSERT_TRUE(hello.ok);
  const std::map<std::string, std::uint64_t> expected = {{"max_frame_bytes", 16U << 20},
                                                         {"max_frames", 3},
                                                         {"max_string_chars", 64},
                                                         {"max_map_entries", 16},
                                                         {"max_array_entries", 192},
                                                         {"max_bin_bytes", 768},
                                                         {"max_depth", 4},
                                                         {"max_rows", 64},
                                                         {"max_in_flight", 8},
                                                         {"max_queue", 1024},
                                                         {"max_queue_bytes", 256U << 20},
                                                         {"max_open_episodes", 1024},
                                                         {"max_clients", 4096}};
  EXPECT_EQ(hello.limits, expected);
  msgpack::object_handle h;
  const auto at_limit =
      fields(client.exchange_raw(act_with_bin(1, hello.limits.at("max_bin_bytes"), 64)), h);
  EXPECT_TRUE(at_limit.at("ok").as<bool>()) << at_limit.at("reason").as<std::string>();
  const auto beyond =
      fields(client.exchange_raw(act_with_bin(2, hello.limits.at("max_bin_bytes") + 4, 65)), h);
  EXPECT_EQ(beyond.at("error").as<std::string>(), "too_large");
  EXPECT_EQ(beyond.at("id").as<int>(), 2);
}

// PROTOCOL.md §4.2: with `rows: k` every value of the reply is an array of k, policies and
// versions included.
TEST(ServiceGatewayTest, WithRowsEveryReplyValueIsAnArrayOfK) {
  const auto gateway = start();
  gateway->offer_weights(1, nodes::WeightsMessage{4, {}});
  GatewayClient client(gateway->endpoint());
  const auto frame = request(5, [](auto& p) {
    pack_op(p, "act");
    p.pack("id");
    p.pack(3);
    p.pack("rows");
    p.pack(2);
    p.pack("obs");
    p.pack_map(2);
    p.pack(0);
    p.pack(std::vector<float>{1, 1, 1, -1, -1, -1});
    p.pack(2);
    p.pack(std::vector<float>{1, 1, 1, 1, 1, 1});
  });
  msgpack::object_handle h;
  const auto reply = fields(client.exchange_raw(frame), h);
  ASSERT_TRUE(reply.at("ok").as<bool>()) << reply.at("reason").as<std::string>();
  using Names = std::map<std::uint32_t, std::vector<std::string>>;
  using Numbers = std::map<std::uint32_t, std::vector<std::uint64_t>>;
  EXPECT_EQ(reply.at("actions").as<Numbers>(), (Numbers{{0, {1, 0}}, {2, {1, 1}}}));
  EXPECT_EQ(reply.at("policies").as<Names>(), (Names{{0, {"p0", "p0"}}, {2, {"p1", "p1"}}}));
  EXPECT_EQ(reply.at("versions").as<Numbers>(), (Numbers{{0, {0, 0}}, {2, {4, 4}}}));
}

TEST(ServiceGatewayTest, WeightsOfferedUnderLoadFailNoRequestAndVersionsOnlyGrow) {
  const auto gateway = start();
  std::atomic<bool> done{false};
  std::atomic<int> failures{0}, answered{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&] {
      GatewayClient client(gateway->endpoint());
      std::uint64_t last = 0;
      while (!done.load()) {
        const auto reply = client.act({{0, {1, 1, 1}}, {2, {1, 1, 1}}});
        if (!reply.ok || reply.versions.at(0) < last) {
          failures.fetch_add(1);
          continue;
        }
        last = reply.versions.at(0);
        answered.fetch_add(1);
      }
    });
  }
  for (std::uint64_t v = 1; v <= 50; ++v) {
    gateway->offer_weights(0, nodes::WeightsMessage{v, {}});
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  while (answered.load() + failures.load() < 200)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  done = true;
  for (auto& t : clients) t.join();
  EXPECT_EQ(failures.load(), 0);
  GatewayClient client(gateway->endpoint());
  EXPECT_EQ(client.act({{1, {1, 1, 1}}}).versions.at(1), 50U);
}

TEST(ServiceGatewayTest, WithCurveOnlyAllowedClientKeysGetIn) {
  const transport::CurveKeyPair server = transport::generate_curve_key_pair();
  const transport::CurveKeyPair allowed = transport::generate_curve_key_pair();
  const transport::CurveKeyPair stranger = transport::generate_curve_key_pair();
  GatewayConfig config;
  config.curve_secret_key = server.secret_key;
  config.allowed_client_keys = {allowed.public_key};
  const auto gateway = start(config);
  const clients::ClientOptions mine = curve_client(server, allowed);
  GatewayClient client(gateway->endpoint(), mine);
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}}).ok);
  clients::ClientOptions theirs = mine;
  theirs.public_key = stranger.public_key;
  theirs.secret_key = stranger.secret_key;
  theirs.timeout = std::chrono::milliseconds(300);  // the handshake is refused: no reply comes
  GatewayClient intruder(gateway->endpoint(), theirs);
  EXPECT_THROW((void)intruder.hello(), clients::GatewayClientError);
  // Its new socket's handshake is refused too, before the next request: that socket has no peer,
  // where a send without a timeout waited forever. It is refused again instead.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_THROW((void)intruder.hello(), clients::GatewayClientError);
  clients::ClientOptions plain;  // no CURVE at all
  plain.timeout = std::chrono::milliseconds(300);
  GatewayClient outsider(gateway->endpoint(), plain);
  EXPECT_THROW((void)outsider.hello(), clients::GatewayClientError);
  EXPECT_TRUE(client.health().ok);
  EXPECT_EQ(gateway->rows_answered(), 1U);
}

// A handshake that fails before the key check (a client without CURVE, one whose hello is boxed
// for another server key) is refused as a key not in the list is: counted under
// {peer="unknown", reason="refused_handshake"}.
TEST(ServiceGatewayTest, WithCurveHandshakesThatFailBeforeTheKeyCheckAreCounted) {
  monitoring::ProcessMetrics metrics({"inference-0", "inference", "reactor"},
                                     tagflow::test::families("inference"));
  const transport::CurveKeyPair server = transport::generate_curve_key_pair();
  const transport::CurveKeyPair allowed = transport::generate_curve_key_pair();
  GatewayConfig config;
  config.curve_secret_key = server.secret_key;
  config.allowed_client_keys = {allowed.public_key};
  const auto gateway = start(config, nullptr, &metrics);
  GatewayClient client(gateway->endpoint(), curve_client(server, allowed));
  const auto refused = [&] {
    return metrics
        .counter(monitoring::Metric::transport_invalid_messages,
                 {{"peer", "unknown"}, {"reason", "refused_handshake"}})
        .Value();
  };
  zmq::context_t context;
  const auto knock = [&](bool curve) {
    const double before = refused();
    const tagflow::testing::FailedHandshake stranger(context, gateway->endpoint(), curve);
    // The gateway counts what its guard saw as it reads: the allowed client keeps it reading.
    for (int i = 0; i < 400 && refused() <= before; ++i) {
      EXPECT_TRUE(client.health().ok);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return refused() - before;
  };
  EXPECT_EQ(knock(false), 1.0) << "a client without CURVE";
  EXPECT_EQ(knock(true), 1.0) << "a client with another server key";
  EXPECT_TRUE(client.act({{0, {1, 1, 1}}}).ok);
}

}  // namespace
}  // namespace tagflow::gateway
