#include "transport/local_links.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <zmq.hpp>

#include "transport/curve_keys.hpp"
#include "transport/tcp_endpoint.hpp"

namespace tagflow::transport {
namespace {

/// The address family of the connection a received frame came over.
int family_of_sender(zmq::message_t& frame) {
  const char* fd_text = zmq_msg_gets(frame.handle(), "__fd");
  if (fd_text == nullptr) return -1;
  sockaddr_storage storage{};
  socklen_t length = sizeof storage;
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  if (::getsockname(std::atoi(fd_text), reinterpret_cast<sockaddr*>(&storage), &length) != 0) {
    return -1;
  }
  return storage.ss_family;
}

/// Sends "ping" from `dealer` and returns the family of the connection `router` got it over.
int round_trip_family(zmq::socket_t& router, zmq::socket_t& dealer) {
  dealer.send(zmq::str_buffer("ping"), zmq::send_flags::none);
  zmq::message_t identity;
  zmq::message_t body;
  EXPECT_TRUE(router.recv(identity));
  EXPECT_TRUE(router.recv(body));
  EXPECT_EQ(body.to_string(), "ping");
  return family_of_sender(body);
}

TEST(LocalLinks, ALoopbackListenerIsReachedThroughItsTwin) {
  zmq::context_t context;
  zmq::socket_t router(context, zmq::socket_type::router);
  router.bind("tcp://127.0.0.1:*");
  const std::string tcp = router.get(zmq::sockopt::last_endpoint);
  const std::optional<std::string> twin = bind_local_twin(router, tcp);
  ASSERT_TRUE(twin.has_value());
  EXPECT_EQ(twin->rfind("ipc:///tmp/tagflow-ipc-", 0), 0U) << *twin;
  EXPECT_EQ(nearest_endpoint(tcp), *twin);

  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(nearest_endpoint(tcp));
  EXPECT_EQ(round_trip_family(router, dealer), AF_UNIX);

  // The twins' directory is this user's alone.
  struct stat info {};
  const std::string path = twin->substr(std::string("ipc://").size());
  ASSERT_EQ(::stat(std::filesystem::path(path).parent_path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700U);
  EXPECT_EQ(info.st_uid, ::geteuid());
}

TEST(LocalLinks, AListenerWithoutATwinIsReachedOverTcp) {
  zmq::context_t context;
  zmq::socket_t router(context, zmq::socket_type::router);
  router.bind("tcp://127.0.0.1:*");
  const std::string tcp = router.get(zmq::sockopt::last_endpoint);
  const std::optional<std::string> twin = local_twin(tcp);
  ASSERT_TRUE(twin.has_value());
  std::filesystem::remove(twin->substr(std::string("ipc://").size()));  // a stale one, if any
  EXPECT_EQ(nearest_endpoint(tcp), tcp);

  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(nearest_endpoint(tcp));
  EXPECT_EQ(round_trip_family(router, dealer), AF_INET);
}

// An IPv6 address is written in brackets, and a socket bound or connected to one takes ZMQ_IPV6
// (set_ipv6_for), which ZeroMQ needs for it ("No such device" without); IPv4 endpoints, names with
// an IPv4 address and twins leave the socket IPv4.
TEST(LocalLinks, AnIpv6ListenerIsReachedOverTcpWithZmqIpv6) {
  EXPECT_EQ(tcp_endpoint("::1", 7600), "tcp://[::1]:7600");
  EXPECT_EQ(tcp_endpoint("127.0.0.1", 7600), "tcp://127.0.0.1:7600");
  EXPECT_EQ(tcp_endpoint("node-3.example", 80), "tcp://node-3.example:80");
  EXPECT_EQ(resolve_preferring_ipv4("::1"), "::1");
  EXPECT_EQ(resolve_preferring_ipv4("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(resolve_preferring_ipv4("localhost"), "127.0.0.1");  // it has both: IPv4 first
  std::string why;
  EXPECT_FALSE(resolve_preferring_ipv4("no-such-host.invalid", &why).has_value());
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(bindable_endpoint("tcp://[::1]:7600"), "tcp://[::1]:7600");
  EXPECT_EQ(bindable_endpoint("tcp://localhost:7600"), "tcp://127.0.0.1:7600");

  zmq::context_t context;
  zmq::socket_t unset(context, zmq::socket_type::router);
  for (const char* v4 :
       {"tcp://127.0.0.1:7600", "tcp://localhost:7600", "tcp://*:7600", "ipc:///tmp/x"}) {
    set_ipv6_for(unset, v4);
    EXPECT_EQ(unset.get(zmq::sockopt::ipv6), 0) << v4;
  }
  zmq::socket_t router(context, zmq::socket_type::router);
  set_ipv6_for(router, "tcp://[::1]:*");
  EXPECT_EQ(router.get(zmq::sockopt::ipv6), 1);
  router.bind("tcp://[::1]:*");
  const std::string tcp = router.get(zmq::sockopt::last_endpoint);
  EXPECT_EQ(tcp.rfind("tcp://[::1]:", 0), 0U) << tcp;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  set_ipv6_for(dealer, tcp);
  dealer.connect(tcp);
  EXPECT_EQ(round_trip_family(router, dealer), AF_INET6);
  zmq::socket_t plain(context, zmq::socket_type::router);
  EXPECT_THROW(plain.bind("tcp://[::1]:*"), zmq::error_t);  // why the option is set
}

TEST(LocalLinks, ATwinNobodyListensAtIsPassedOver) {
  zmq::context_t context;
  std::string tcp;
  std::string twin_path;
  {
    // A listener whose twin file outlives it, as when its process is killed.
    zmq::socket_t gone(context, zmq::socket_type::router);
    gone.set(zmq::sockopt::linger, 0);
    gone.bind("tcp://127.0.0.1:*");
    tcp = gone.get(zmq::sockopt::last_endpoint);
    const std::optional<std::string> twin = bind_local_twin(gone, tcp);
    ASSERT_TRUE(twin.has_value());
    twin_path = twin->substr(std::string("ipc://").size());
  }
  // ZeroMQ leaves the file when the socket closes; put a dead socket file of our own there.
  const int dead = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, twin_path.c_str(), twin_path.size() + 1);
  std::filesystem::remove(twin_path);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  ASSERT_EQ(::bind(dead, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ::close(dead);  // bound, never listened: the file stays, nobody answers
  struct stat info {};
  ASSERT_EQ(::stat(twin_path.c_str(), &info), 0);
  ASSERT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(nearest_endpoint(tcp), tcp);
  std::filesystem::remove(twin_path);
}

TEST(LocalLinks, ATwinFileIsRemovedByItsHolderAndOnlyIfStillTheSame) {
  zmq::context_t context;
  zmq::socket_t router(context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  router.bind("tcp://127.0.0.1:*");
  const std::string tcp = router.get(zmq::sockopt::last_endpoint);
  const std::optional<std::string> twin = bind_local_twin(router, tcp);
  ASSERT_TRUE(twin.has_value());
  const std::string path = twin->substr(std::string("ipc://").size());
  {
    TwinFile file;
    file.adopt(twin);
    ASSERT_TRUE(std::filesystem::exists(path));
  }
  EXPECT_FALSE(std::filesystem::exists(path));  // the holder went, and the file with it
  EXPECT_EQ(nearest_endpoint(tcp), tcp);

  // A file put at the path since (another listener's) is not the one adopted: it stays.
  zmq::socket_t second(context, zmq::socket_type::router);
  second.set(zmq::sockopt::linger, 0);
  {
    TwinFile file;
    file.adopt(std::string("ipc://") + path);  // no file there now: nothing adopted
    second.bind(std::string("ipc://") + path);
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  TwinFile mine;
  mine.adopt(std::string("ipc://") + path);
  second.unbind(std::string("ipc://") + path);
  // Another socket file made while the adopted one still exists, then moved over it.
  const std::string beside = path + ".new";
  const int other = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, beside.c_str(), beside.size() + 1);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  ASSERT_EQ(::bind(other, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  std::filesystem::rename(beside, path);
  mine.remove();
  EXPECT_TRUE(std::filesystem::exists(path));  // another file now: left alone
  ::close(other);
  std::filesystem::remove(path);
}

TEST(LocalLinks, CurveRunsOverATwin) {
  zmq::context_t context;
  const CurveKeyPair server_keys = generate_curve_key_pair();
  zmq::socket_t router(context, zmq::socket_type::router);
  make_curve_server(router, server_keys);
  router.bind("tcp://127.0.0.1:*");
  const std::string tcp = router.get(zmq::sockopt::last_endpoint);
  ASSERT_TRUE(bind_local_twin(router, tcp).has_value());

  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  make_curve_client(dealer, generate_curve_key_pair(), server_keys.public_key);
  dealer.connect(nearest_endpoint(tcp));
  EXPECT_EQ(round_trip_family(router, dealer), AF_UNIX);

  // A client with the wrong server key gets nothing through the twin either.
  zmq::socket_t stranger(context, zmq::socket_type::dealer);
  stranger.set(zmq::sockopt::linger, 0);
  make_curve_client(stranger, generate_curve_key_pair(), generate_curve_key_pair().public_key);
  stranger.connect(nearest_endpoint(tcp));
  stranger.send(zmq::str_buffer("intruder"), zmq::send_flags::none);
  zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
  EXPECT_EQ(zmq::poll(&item, 1, std::chrono::milliseconds(300)), 0);
}

TEST(LocalLinks, OnlyThisNamespacesAddressesAreLocal) {
  EXPECT_TRUE(is_local_address("tcp://127.0.0.1:5000"));
  EXPECT_TRUE(is_local_address("tcp://127.3.2.1:5000"));
  EXPECT_TRUE(is_local_address("tcp://0.0.0.0:5000"));
  EXPECT_TRUE(is_local_address("tcp://[::1]:5000"));
  EXPECT_FALSE(is_local_address("tcp://192.0.2.1:5000"));  // TEST-NET-1: never assigned
  EXPECT_FALSE(is_local_address("tcp://localhost:5000"));  // names are not resolved
  EXPECT_FALSE(is_local_address("ipc:///tmp/x"));
  EXPECT_EQ(nearest_endpoint("tcp://192.0.2.1:5000"), "tcp://192.0.2.1:5000");
}

TEST(LocalLinks, OnlyTcpEndpointsWithAPortHaveTwins) {
  EXPECT_FALSE(local_twin("tcp://127.0.0.1:*").has_value());
  EXPECT_FALSE(local_twin("tcp://127.0.0.1").has_value());
  EXPECT_FALSE(local_twin("ipc:///tmp/socket").has_value());
  EXPECT_FALSE(local_twin("tcp://a/b:5000").has_value());
  const std::optional<std::string> v6 = local_twin("tcp://[::1]:5000");
  ASSERT_TRUE(v6.has_value());
  EXPECT_NE(v6->find("/::1-5000"), std::string::npos) << *v6;
  // The twin names the network namespace: two namespaces never share one.
  struct stat netns {};
  ASSERT_EQ(::stat("/proc/self/ns/net", &netns), 0);
  EXPECT_NE(local_twin("tcp://127.0.0.1:5000")->find("/" + std::to_string(netns.st_ino) + "/"),
            std::string::npos);
}

}  // namespace
}  // namespace tagflow::transport
