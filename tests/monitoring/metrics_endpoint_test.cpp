// Tests of monitoring/metrics_endpoint.hpp over real HTTP on loopback.
#include "monitoring/metrics_endpoint.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "monitoring/process_metrics.hpp"
#include "tests/monitoring/http_get.hpp"
#include "tests/support/kind_families.hpp"

namespace tagflow::monitoring {
namespace {

TEST(MetricsEndpoint, ServesTheProcessMetricsTextOnSlashMetrics) {
  ProcessMetrics metrics({"replay", "replay", "reactor"}, tagflow::test::families("replay"));
  metrics.gauge("tagflow_replay_transitions", {{"table", "main"}}).Set(1234);
  const MetricsEndpoint endpoint(metrics, "127.0.0.1", 0);
  ASSERT_NE(endpoint.port(), 0);
  EXPECT_EQ(endpoint.url(), "http://127.0.0.1:" + std::to_string(endpoint.port()) + "/metrics");

  const tagflow::testing::HttpResponse response =
      tagflow::testing::http_get(endpoint.port(), "/metrics");
  ASSERT_EQ(response.status, 200);
  EXPECT_NE(response.body.find("tagflow_replay_transitions{kind=\"replay\",mode=\"reactor\","
                               "node=\"replay\",table=\"main\"} 1234\n"),
            std::string::npos)
      << response.body;
  // The process collector is served too.
  EXPECT_NE(response.body.find("process_resident_memory_bytes{kind=\"replay\""), std::string::npos);
}

TEST(MetricsEndpoint, RefusesAPortThatIsAlreadyTakenWithAnErrorNamingIt) {
  ProcessMetrics metrics({"sampler-0", "sampler", "reactor"}, tagflow::test::families("sampler"));
  const MetricsEndpoint first(metrics, "127.0.0.1", 0);
  const std::string taken = "127.0.0.1:" + std::to_string(first.port());
  try {
    const MetricsEndpoint second(metrics, "127.0.0.1", first.port());
    ADD_FAILURE() << "a second endpoint bound " << taken;
  } catch (const MonitoringError& e) {
    EXPECT_NE(std::string(e.what()).find(taken), std::string::npos) << e.what();
  }
}

/// A raw loopback connection to `port` (or -1).
int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST(MetricsEndpoint, AnswersOtherPathsWith404AndOtherMethodsWith405) {
  ProcessMetrics metrics({"learner", "learner", "reactor"}, tagflow::test::families("learner"));
  const MetricsEndpoint endpoint(metrics, "127.0.0.1", 0);
  EXPECT_EQ(tagflow::testing::http_get(endpoint.port(), "/nothing").status, 404);
  EXPECT_EQ(tagflow::testing::http_get(endpoint.port(), "/metrics?x=1").status, 200);

  const int fd = connect_to(endpoint.port());
  ASSERT_GE(fd, 0);
  const std::string post = "POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(fd, post.data(), post.size(), 0), static_cast<ssize_t>(post.size()));
  std::string reply(256, '\0');
  const ssize_t n = ::recv(fd, reply.data(), reply.size(), MSG_WAITALL);
  ::close(fd);
  ASSERT_GT(n, 0);
  EXPECT_EQ(reply.rfind("HTTP/1.1 405", 0), 0U) << reply;
  EXPECT_NE(reply.find("GET or HEAD only"), std::string::npos) << reply;
}

TEST(MetricsEndpoint, KeepsServingAfterAClientThatStallsOrSendsGarbage) {
  ProcessMetrics metrics({"inference", "inference", "actor"}, tagflow::test::families("inference"));
  const MetricsEndpoint endpoint(metrics, "127.0.0.1", 0);
  // A client that sends half a request line and then nothing, and one that sends 64 KiB of
  // garbage without a line end: each is cut off (timeout, size cap), and a real scrape after
  // them is answered.
  const int stalled = connect_to(endpoint.port());
  ASSERT_GE(stalled, 0);
  ASSERT_EQ(::send(stalled, "GET /met", 8, 0), 8);
  const int garbage = connect_to(endpoint.port());
  ASSERT_GE(garbage, 0);
  const std::string junk(65536, 'x');
  (void)::send(garbage, junk.data(), junk.size(), MSG_NOSIGNAL);
  const auto response = tagflow::testing::http_get(endpoint.port(), "/metrics", 10000);
  EXPECT_EQ(response.status, 200);
  EXPECT_NE(
      response.body.find("tagflow_inference_requests_total{kind=\"inference\",mode=\"actor\""),
      std::string::npos)
      << response.body;
  ::close(stalled);
  ::close(garbage);
}

/// True when the server has closed `fd` (recv sees the end, or a reset), waiting up to `limit`
/// (a guard against hangs, not a timing check).
bool closed_by_server(int fd, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  timeval timeout{static_cast<time_t>(limit.count() / 1000),
                  static_cast<suseconds_t>((limit.count() % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  char byte = 0;
  const ssize_t n = ::recv(fd, &byte, 1, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

/// True when `fd` is still open and nothing was sent on it (a look that does not wait).
bool still_open_and_unanswered(int fd) {
  char byte = 0;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_DONTWAIT);
  return n < 0 && errno == EAGAIN;
}

// Six clients that connect and send nothing used to delay a scrape by 2 s each (one connection
// at a time): the scrape is now answered while all six are still connected.
TEST(MetricsEndpoint, IdleConnectionsDoNotDelayAScrape) {
  ProcessMetrics metrics({"replay", "replay", "reactor"}, tagflow::test::families("replay"));
  const MetricsEndpoint endpoint(metrics, "127.0.0.1", 0, {std::chrono::seconds(60), 32});
  std::vector<int> idle;
  for (int i = 0; i < 6; ++i) {
    idle.push_back(connect_to(endpoint.port()));
    ASSERT_GE(idle.back(), 0);
  }
  // A per-read guard far below the idle clients' 60 s deadline: served one at a time, this
  // scrape would not be answered before it.
  const auto response = tagflow::testing::http_get(endpoint.port(), "/metrics", 5000);
  EXPECT_EQ(response.status, 200);
  for (const int fd : idle) {
    EXPECT_TRUE(still_open_and_unanswered(fd));
    ::close(fd);
  }
}

// A client that sends a byte now and then used to restart a per-read timeout for ever; the
// deadline covers the whole request.
TEST(MetricsEndpoint, ATricklingClientIsCutOffAtTheRequestDeadline) {
  ProcessMetrics metrics({"replay", "replay", "reactor"}, tagflow::test::families("replay"));
  const MetricsEndpoint endpoint(metrics, "127.0.0.1", 0, {std::chrono::milliseconds(300), 32});
  const int fd = connect_to(endpoint.port());
  ASSERT_GE(fd, 0);
  // 400 bytes at one per 50 ms would take 20 s; each gap is far below the deadline.
  const std::string request = "GET /metrics HTTP/1.1\r\nX-Pad: " + std::string(360, 'p');
  std::size_t sent = 0;
  bool closed = false;
  for (; sent < request.size() && !closed; ++sent) {
    if (::send(fd, &request[sent], 1, MSG_NOSIGNAL) != 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    char byte = 0;
    closed = ::recv(fd, &byte, 1, MSG_DONTWAIT) == 0;
  }
  ::close(fd);
  EXPECT_LT(sent, request.size()) << "the trickling client held the endpoint to the end";
  EXPECT_EQ(tagflow::testing::http_get(endpoint.port(), "/metrics").status, 200);
}

// At most max_connections at once: a new connection takes the slot of the oldest one that has
// not sent a request, so a scrape is answered however many idle clients there are.
TEST(MetricsEndpoint, AFullEndpointGivesTheOldestIdleSlotToANewConnection) {
  ProcessMetrics metrics({"replay", "replay", "reactor"}, tagflow::test::families("replay"));
  const MetricsEndpoint endpoint(metrics, "127.0.0.1", 0, {std::chrono::seconds(60), 4});
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(connect_to(endpoint.port()));
    ASSERT_GE(idle.back(), 0);
    // Accepted in this order (the endpoint answers a scrape only after accepting what came
    // before it on the listening socket).
    ASSERT_EQ(tagflow::testing::http_get(endpoint.port(), "/").status, 200);
  }
  // Every slot is held by an idle client: the scrape takes the oldest one's.
  EXPECT_EQ(tagflow::testing::http_get(endpoint.port(), "/metrics").status, 200);
  EXPECT_TRUE(closed_by_server(idle[0]));
  for (std::size_t i = 1; i < idle.size(); ++i) EXPECT_TRUE(still_open_and_unanswered(idle[i]));
  for (const int fd : idle) ::close(fd);
}

/// The status line of the endpoint's answer to `request`, sent whole on a new connection.
std::string status_line(std::uint16_t port, const std::string& request) {
  const int fd = connect_to(port);
  if (fd < 0) return "no connection";
  (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string reply(64, '\0');
  const ssize_t n = ::recv(fd, reply.data(), reply.size(), MSG_WAITALL);
  ::close(fd);
  reply.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return reply.substr(0, reply.find("\r\n"));
}

// RFC 9112 §2.2: a request whose lines end with a bare LF is read as one ended with CRLF.
TEST(MetricsEndpoint, ARequestWithBareLineFeedsIsAnswered) {
  ProcessMetrics metrics({"replay", "replay", "reactor"}, tagflow::test::families("replay"));
  const MetricsEndpoint endpoint(metrics, "127.0.0.1", 0);
  EXPECT_EQ(status_line(endpoint.port(), "GET /metrics HTTP/1.1\n\n"), "HTTP/1.1 200 OK");
  EXPECT_EQ(status_line(endpoint.port(), "GET /metrics HTTP/1.1\nHost: x\r\n\n"),
            "HTTP/1.1 200 OK");
  EXPECT_EQ(status_line(endpoint.port(), "GET /nothing HTTP/1.0\n\n"), "HTTP/1.1 404 Not Found");
}

// A client the endpoint drops is answered with a status that says why (or closed), counted in
// tagflow_transport_invalid_messages_total{peer="http",reason} and logged once per reason.
TEST(MetricsEndpoint, DroppedClientsAreAnsweredCountedAndLoggedOncePerReason) {
  ProcessMetrics metrics({"replay", "replay", "reactor"}, tagflow::test::families("replay"));
  ::testing::internal::CaptureStderr();
  {
    const MetricsEndpoint endpoint(metrics, "127.0.0.1", 0, {std::chrono::milliseconds(300), 32});
    const std::uint16_t port = endpoint.port();
    EXPECT_EQ(status_line(port, "GET /metrics HTTP/9.9\r\n\r\n"),
              "HTTP/1.1 505 HTTP Version Not Supported");
    EXPECT_EQ(status_line(port, "GET /metrics\r\n\r\n"), "HTTP/1.1 400 Bad Request");
    EXPECT_EQ(status_line(port, "\r\n\r\n"), "HTTP/1.1 400 Bad Request");
    EXPECT_EQ(status_line(port, "POST /metrics HTTP/1.1\r\n\r\n"),
              "HTTP/1.1 405 Method Not Allowed");
    EXPECT_EQ(status_line(port, "DELETE / HTTP/1.1\r\n\r\n"), "HTTP/1.1 405 Method Not Allowed");
    EXPECT_EQ(
        status_line(port, "GET /metrics HTTP/1.1\r\nX: " + std::string(9000, 'x') + "\r\n\r\n"),
        "HTTP/1.1 431 Request Header Fields Too Large");
    const int silent = connect_to(port);  // sends nothing: closed at the 300 ms deadline
    ASSERT_GE(silent, 0);
    EXPECT_TRUE(closed_by_server(silent));
    ::close(silent);
    // Well-formed requests are not counted, a wrong path included.
    EXPECT_EQ(status_line(port, "GET /nothing HTTP/1.0\r\n\r\n"), "HTTP/1.1 404 Not Found");
    const auto response = tagflow::testing::http_get(port, "/metrics");
    ASSERT_EQ(response.status, 200);
    const std::string series =
        "tagflow_transport_invalid_messages_total{kind=\"replay\","
        "mode=\"reactor\",node=\"replay\",peer=\"http\",reason=";
    EXPECT_NE(response.body.find(series + "\"malformed\"} 3\n"), std::string::npos)
        << response.body;
    EXPECT_NE(response.body.find(series + "\"not_get\"} 2\n"), std::string::npos);
    EXPECT_NE(response.body.find(series + "\"too_large\"} 1\n"), std::string::npos);
    EXPECT_NE(response.body.find(series + "\"timeout\"} 1\n"), std::string::npos);
    EXPECT_EQ(response.body.find(series + "\"too_many_connections\""), std::string::npos);
    // One family: the refusals join the process's own series of it.
    const std::string type = "# TYPE tagflow_transport_invalid_messages_total counter\n";
    const std::size_t first = response.body.find(type);
    EXPECT_NE(first, std::string::npos);
    EXPECT_EQ(response.body.find(type, first + 1), std::string::npos);
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  for (const char* reason : {"malformed", "not_get", "too_large", "timeout"}) {
    const std::string line = std::string("): ") + reason + ", ";
    const std::size_t at = log.find(line);
    EXPECT_NE(at, std::string::npos) << reason << ": " << log;
    EXPECT_EQ(log.find(line, at + 1), std::string::npos) << reason << " logged twice: " << log;
  }
  EXPECT_NE(log.find("further drops for this reason are only counted"), std::string::npos) << log;
}

TEST(MetricsEndpoint, ServesAnEmptyPageOnceItsMetricsAreGone) {
  auto metrics = std::make_unique<ProcessMetrics>(ProcessIdentity{"replay", "replay", "reactor"});
  const MetricsEndpoint endpoint(*metrics, "127.0.0.1", 0);
  EXPECT_NE(tagflow::testing::http_get(endpoint.port(), "/metrics").body.find("tagflow_"),
            std::string::npos);
  metrics.reset();
  const auto response = tagflow::testing::http_get(endpoint.port(), "/metrics");
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body.find("tagflow_"), std::string::npos) << response.body;
}

TEST(MetricsEndpoint, RefusesAnAddressItCannotResolveNamingIt) {
  ProcessMetrics metrics({"sampler-0", "sampler", "reactor"}, tagflow::test::families("sampler"));
  try {
    const MetricsEndpoint endpoint(metrics, "no-such-host.invalid", 0);
    ADD_FAILURE() << "listened on an unresolvable address";
  } catch (const MonitoringError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-host.invalid"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tagflow::monitoring
