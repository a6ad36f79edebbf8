#include "transport/zap_authenticator.hpp"

#include <string>

#include <gtest/gtest.h>

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

  explicit GuardedServer(std::set<std::string> allowed) : zap(context, std::move(allowed)) {
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
