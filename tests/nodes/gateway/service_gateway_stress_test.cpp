// ServiceGateway under 16 concurrent clients, each pipelining more requests than its in-flight cap
// allows, against a gateway whose queue is smaller than all of them together: every request is
// answered (actions) or refused with busy, nothing else, and the queue never holds more than
// max_queue requests. The backend holds its first pass until every client has sent its first
// window, so the gateway then reads more requests at once than its queue takes: the queue does
// fill to max_queue and some requests are refused for its bound (busy "gateway"), not only for a
// client's.
// Bounded in count (16 × 200 requests), not in time.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <msgpack.hpp>
#include <zmq.hpp>

#include "clients/cpp/gateway_client.hpp"
#include "nodes/gateway/service_gateway.hpp"
#include "tests/nodes/gateway/fake_backend.hpp"

namespace tagflow::gateway {
namespace {

constexpr int kClients = 16;
constexpr int kRequests = 200;
constexpr int kWindow = 12;  // requests a client keeps outstanding (its cap is 8)

TEST(ServiceGatewayStressTest, SixteenClientsGetAnswersOrBusyAndTheQueueStaysBounded) {
  GatewayConfig config;
  config.max_in_flight = 8;
  config.max_queue = 64;  // below 16 × 8
  config.max_batch = 16;
  auto backend = std::make_shared<testing::FakeBackend::Shared>();
  backend->hold = true;  // the first pass waits for every client's first window
  ServiceGateway gateway(config, std::make_unique<testing::FakeBackend>(backend), nullptr);
  std::atomic<int> answered{0}, busy{0}, busy_gateway{0}, other{0}, sent_total{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&] {
      zmq::context_t context;
      zmq::socket_t dealer(context, zmq::socket_type::dealer);
      dealer.set(zmq::sockopt::linger, 0);
      dealer.connect(gateway.endpoint());
      int sent = 0, received = 0;
      while (received < kRequests) {
        while (sent < kRequests && sent - received < kWindow) {
          const auto frame = clients::GatewayClient::act_request(
              static_cast<std::uint64_t>(++sent), {{0, {1, 2, 3}}, {2, {-1, -2, -3}}});
          dealer.send(zmq::buffer(frame));
          sent_total.fetch_add(1);
        }
        zmq::message_t reply;
        if (!dealer.recv(reply)) continue;
        ++received;
        const auto h = msgpack::unpack(static_cast<const char*>(reply.data()), reply.size());
        const auto m = h.get().as<std::map<std::string, msgpack::object>>();
        if (m.at("ok").as<bool>()) {
          const auto actions = m.at("actions").as<std::map<std::uint32_t, std::int64_t>>();
          if (actions == std::map<std::uint32_t, std::int64_t>{{0, 1}, {2, 0}}) {
            answered.fetch_add(1);
          } else {
            other.fetch_add(1);
          }
        } else if (m.at("error").as<std::string>() == "busy") {
          busy.fetch_add(1);
          const auto scope = m.find("busy");
          if (scope != m.end() && scope->second.as<std::string>() == "gateway") {
            busy_gateway.fetch_add(1);
          }
        } else {
          other.fetch_add(1);
        }
      }
    });
  }
  // 16 clients × 12 requests waiting, 8 of each within its cap, against a queue of 64.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (sent_total.load() < kClients * kWindow && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GE(sent_total.load(), kClients * kWindow);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the frames reach its socket
  backend->hold = false;
  for (auto& t : clients) t.join();
  EXPECT_EQ(gateway.peak_queued(), config.max_queue);
  EXPECT_GT(busy_gateway.load(), 0) << "the queue's own bound never refused a request";
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(answered.load() + busy.load(), kClients * kRequests);
  EXPECT_GT(answered.load(), 0);
  EXPECT_LE(gateway.peak_queued(), config.max_queue);
  EXPECT_EQ(gateway.busy_replies(), static_cast<std::uint64_t>(busy.load()));
}

}  // namespace
}  // namespace tagflow::gateway
