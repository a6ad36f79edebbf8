// The C++ client's episode bookkeeping against a scripted gateway (a ROUTER socket in the test):
// the client sends the instance of every episode it started and has not ended, for its 1,024
// started last, forgetting the one started first (clients/README.md). By start, not by id: a
// restarted gateway numbers its episodes from 1 again, so the smallest id may be the newest.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <gtest/gtest.h>
#include <msgpack.hpp>
#include <zmq.hpp>

#include "clients/cpp/gateway_client.hpp"

namespace tagflow {
namespace {

/// Answers episode_start with the next (episode, instance) of its script and refuses every act
/// (`malformed`), recording each act's instance (nullopt when the request had none).
class ScriptedGateway {
 public:
  explicit ScriptedGateway(std::deque<std::pair<std::uint64_t, std::uint64_t>> starts)
      : starts_(std::move(starts)), socket_(context_, zmq::socket_type::router) {
    socket_.bind("tcp://127.0.0.1:*");
    endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
  }

  const std::string& endpoint() const { return endpoint_; }

  /// Serves `requests` requests, then returns.
  void serve(int requests) {
    for (int i = 0; i < requests; ++i) {
      zmq::message_t who;
      zmq::message_t frame;
      ASSERT_TRUE(socket_.recv(who));
      ASSERT_TRUE(socket_.recv(frame));
      const msgpack::object_handle h =
          msgpack::unpack(static_cast<const char*>(frame.data()), frame.size());
      std::map<std::string, msgpack::object> request;
      h.get().convert(request);
      const std::string op = request.at("op").as<std::string>();
      const std::uint64_t id = request.at("id").as<std::uint64_t>();
      msgpack::sbuffer reply;
      msgpack::packer<msgpack::sbuffer> p(reply);
      if (op == "episode_start") {
        ASSERT_FALSE(starts_.empty());
        const auto [episode, instance] = starts_.front();
        starts_.pop_front();
        p.pack_map(6);
        p.pack("op"), p.pack(op), p.pack("id"), p.pack(id), p.pack("ok"), p.pack(true);
        p.pack("episode"), p.pack(episode), p.pack("log"), p.pack(false);
        p.pack("instance"), p.pack(instance);
      } else {
        const auto instance = request.find("instance");
        acts.push_back(instance == request.end()
                           ? std::nullopt
                           : std::optional<std::uint64_t>(instance->second.as<std::uint64_t>()));
        p.pack_map(5);
        p.pack("op"), p.pack(op), p.pack("id"), p.pack(id), p.pack("ok"), p.pack(false);
        p.pack("error"), p.pack("malformed"), p.pack("reason"), p.pack("scripted");
      }
      socket_.send(who, zmq::send_flags::sndmore);
      socket_.send(zmq::buffer(reply.data(), reply.size()), zmq::send_flags::none);
    }
  }

  std::deque<std::optional<std::uint64_t>> acts;

 private:
  std::deque<std::pair<std::uint64_t, std::uint64_t>> starts_;
  zmq::context_t context_;
  zmq::socket_t socket_;
  std::string endpoint_;
};

TEST(GatewayClientEpisodes, TheEpisodeStartedFirstIsForgottenNotTheSmallestId) {
  // Episode 5000 on instance 11, then, as after a restart, episodes 1..1024 on instance 22.
  std::deque<std::pair<std::uint64_t, std::uint64_t>> starts{{5000, 11}};
  for (std::uint64_t e = 1; e <= 1024; ++e) starts.emplace_back(e, 22);
  ScriptedGateway gateway(starts);
  std::thread serving([&] { gateway.serve(1025 + 3); });
  clients::GatewayClient client(gateway.endpoint());
  for (int i = 0; i < 1025; ++i) ASSERT_TRUE(client.episode_start().ok);
  const std::map<std::uint32_t, std::vector<float>> observation{{0, {0.0F}}};
  (void)client.act(observation, 5000);  // started first: forgotten, sent without an instance
  (void)client.act(observation, 1);     // the smallest id, started second: kept
  (void)client.act(observation, 1024);  // started last
  serving.join();
  ASSERT_EQ(gateway.acts.size(), 3U);
  EXPECT_EQ(gateway.acts[0], std::nullopt);
  EXPECT_EQ(gateway.acts[1], std::optional<std::uint64_t>(22));
  EXPECT_EQ(gateway.acts[2], std::optional<std::uint64_t>(22));
}

// A restarted gateway gives an old id to a new episode: the id alone now stands for the new one,
// but the old episode's start reply still sends the old instance, so the gateway refuses it.
TEST(GatewayClientEpisodes, AnEpisodesStartReplyKeepsItsInstanceWhenItsIdIsGivenAgain) {
  ScriptedGateway gateway({{1, 11}, {1, 22}});
  std::thread serving([&] { gateway.serve(2 + 4); });
  clients::GatewayClient client(gateway.endpoint());
  const clients::EpisodeReply old = client.episode_start();
  const clients::EpisodeReply again = client.episode_start();  // "after a restart"
  ASSERT_EQ(old.episode, again.episode);
  const std::map<std::uint32_t, std::vector<float>> observation{{0, {0.0F}}};
  (void)client.act(observation, old);
  (void)client.act(observation, again);
  (void)client.act(observation, std::optional<std::uint64_t>(1));  // the id: the newest episode
  (void)client.episode_end(old);
  serving.join();
  ASSERT_EQ(gateway.acts.size(), 4U);
  EXPECT_EQ(gateway.acts[0], std::optional<std::uint64_t>(11));
  EXPECT_EQ(gateway.acts[1], std::optional<std::uint64_t>(22));
  EXPECT_EQ(gateway.acts[2], std::optional<std::uint64_t>(22));
  EXPECT_EQ(gateway.acts[3], std::optional<std::uint64_t>(11));  // episode_end of the old one
}

}  // namespace
}  // namespace tagflow
