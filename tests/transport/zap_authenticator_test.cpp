#include "transport/zap_authenticator.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "transport/curve_keys.hpp"

namespace tagflow::transport {
namespace {

/// A CURVE server (ROUTER) guarded by a ZAP allow-list, answering "pong" to every request.
struct GuardedServer {
  zmq::context_t context;
  CurveKeyPair keys = generate_curve_key_pair();
  ZapAuthenticator zap;
  zmq::socket_t socket{context, zmq::socket_type::router};
  std::string endpoint;

  explicit GuardedServer(std::set<std::string> allowed)
      : zap(context, std::move(allowed), "the test's server") {
    make_curve_server(socket, keys);
    socket.bind("tcp://127.0.0.1:*");
    endpoint = socket.get(zmq::sockopt::last_endpoint);
  }
};

/// Connects a client with `client_keys`; true when its request was answered within `timeout_ms`.
bool request_answered(GuardedServer& server, const CurveKeyPair& client_keys,
                      const std::string& server_public_key, int timeout_ms) {
  zmq::context_t context;
  zmq::socket_t client(context, zmq::socket_type::dealer);
  make_curve_client(client, client_keys, server_public_key);
  client.set(zmq::sockopt::linger, 0);
  client.set(zmq::sockopt::rcvtimeo, timeout_ms);
  client.connect(server.endpoint);
  client.send(zmq::str_buffer("ping"), zmq::send_flags::dontwait);
  server.socket.set(zmq::sockopt::rcvtimeo, timeout_ms);
  zmq::message_t identity;
  zmq::message_t body;
  if (!server.socket.recv(identity)) return false;
  if (!server.socket.recv(body) || body.to_string() != "ping") return false;
  server.socket.send(identity, zmq::send_flags::sndmore);
  server.socket.send(zmq::str_buffer("pong"), zmq::send_flags::none);
  zmq::message_t reply;
  return client.recv(reply).has_value() && reply.to_string() == "pong";
}

TEST(ZapAuthenticator, AllowListedClientKeyIsAdmitted) {
  const CurveKeyPair client = generate_curve_key_pair();
  GuardedServer server({client.public_key});
  EXPECT_TRUE(request_answered(server, client, server.keys.public_key, 5000));
  EXPECT_EQ(server.zap.accepted_count(), 1U);
  EXPECT_EQ(server.zap.refused_count(), 0U);
}

TEST(ZapAuthenticator, UnlistedClientKeyIsRefusedAndCounted) {
  const CurveKeyPair listed = generate_curve_key_pair();
  const CurveKeyPair intruder = generate_curve_key_pair();
  GuardedServer server({listed.public_key});
  // The refusal is only observable as silence; the handshake count proves the ZAP handler saw
  // and refused the client rather than the request merely being slow.
  EXPECT_FALSE(request_answered(server, intruder, server.keys.public_key, 500));
  EXPECT_GE(server.zap.refused_count(), 1U);
  EXPECT_EQ(server.zap.accepted_count(), 0U);
  // The listed key still gets in afterwards.
  EXPECT_TRUE(request_answered(server, listed, server.keys.public_key, 5000));
}

// Fresh keys by the hundred (anyone who knows the server's public key can make them): each
// refusal is counted and observed, but the log gets at most 20 lines a second and at most 257 in
// all, and the listed key still gets in.
TEST(ZapAuthenticator, AFloodOfFreshKeysIsCountedAndLoggedWithinItsBudget) {
  std::ostringstream log;
  const std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "zap-flood", std::make_shared<spdlog::sinks::ostream_sink_st>(log)));
  const CurveKeyPair listed = generate_curve_key_pair();
  GuardedServer server({listed.public_key});
  std::atomic<std::uint64_t> observed{0};
  server.zap.set_refused_observer([&observed] { observed.fetch_add(1); });
  constexpr int kKeys = 300;
  const auto started = std::chrono::steady_clock::now();
  {
    zmq::context_t context;
    std::vector<zmq::socket_t> clients;
    for (int i = 0; i < kKeys; ++i) {
      clients.emplace_back(context, zmq::socket_type::dealer);
      make_curve_client(clients.back(), generate_curve_key_pair(), server.keys.public_key);
      clients.back().set(zmq::sockopt::linger, 0);
      clients.back().connect(server.endpoint);
    }
    const auto deadline = started + std::chrono::seconds(30);
    while (server.zap.refused_count() < kKeys && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  EXPECT_TRUE(request_answered(server, listed, server.keys.public_key, 5000));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  spdlog::set_default_logger(previous);
  EXPECT_GE(server.zap.refused_count(), static_cast<std::uint64_t>(kKeys));
  EXPECT_EQ(observed.load(), server.zap.refused_count());
  std::size_t lines = 0;
  const std::string text = log.str();
  for (std::size_t at = text.find("security: refused connection"); at != std::string::npos;
       at = text.find("security: refused connection", at + 1)) {
    ++lines;
  }
  EXPECT_GE(lines, 1U);
  EXPECT_NE(text.find(" to the test's server (client key "), std::string::npos) << text;
  EXPECT_LE(lines, 257U);
  EXPECT_LE(static_cast<double>(lines), 20.0 * (seconds + 1.0)) << lines << " in " << seconds;
  EXPECT_LT(lines, static_cast<std::size_t>(kKeys));
}

// A handshake that failed before any key was seen (the socket's monitor tells): counted as a
// refusal each time, logged once per kind, naming the socket (a process may have two CURVE
// sockets: an inference replica's data port and its gateway).
TEST(ZapAuthenticator, AFailedHandshakeIsCountedAndLoggedOncePerKindNamingTheSocket) {
  std::ostringstream log;
  const std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "zap-handshakes", std::make_shared<spdlog::sinks::ostream_sink_st>(log)));
  GuardedServer server({generate_curve_key_pair().public_key});
  server.zap.note_failed_handshake(ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH);
  server.zap.note_failed_handshake(ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH);
  server.zap.note_failed_handshake(ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC);
  spdlog::set_default_logger(previous);
  EXPECT_EQ(server.zap.refused_count(), 3U);
  const std::string text = log.str();
  const std::string mismatch =
      "security: refused a connection to the test's server whose handshake failed: its security "
      "mechanism is not this socket's";
  const std::size_t first = text.find(mismatch);
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_EQ(text.find(mismatch, first + 1), std::string::npos) << "logged twice: " << text;
  EXPECT_NE(text.find("security: refused a connection to the test's server whose handshake "
                      "failed: its CURVE hello does not open"),
            std::string::npos)
      << text;
}

TEST(ZapAuthenticator, ClientWithTheWrongServerKeyNeverGetsThrough) {
  const CurveKeyPair client = generate_curve_key_pair();
  GuardedServer server({client.public_key});
  const CurveKeyPair impostor_server = generate_curve_key_pair();
  EXPECT_FALSE(request_answered(server, client, impostor_server.public_key, 500));
  EXPECT_EQ(server.zap.accepted_count(), 0U);
}

TEST(ZapAuthenticator, PlainTextClientIsRefused) {
  GuardedServer server({});
  zmq::context_t context;
  zmq::socket_t client(context, zmq::socket_type::dealer);
  client.set(zmq::sockopt::linger, 0);
  client.connect(server.endpoint);
  client.send(zmq::str_buffer("ping"), zmq::send_flags::dontwait);
  server.socket.set(zmq::sockopt::rcvtimeo, 500);
  zmq::message_t identity;
  EXPECT_FALSE(server.socket.recv(identity).has_value());
}

}  // namespace
}  // namespace tagflow::transport
