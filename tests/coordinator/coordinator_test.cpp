// The coordinator event loop against real federate clients (DEALER sockets) in threads.
#include "coordinator/coordinator.hpp"

#include <atomic>
#include <filesystem>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include "federate/federate_client.hpp"
#include "federate/federate_runtime.hpp"
#include "monitoring/process_metrics.hpp"
#include "tests/support/failed_handshake.hpp"
#include "transport/curve_keys.hpp"

namespace tagflow::coordinator {
namespace {

using namespace std::chrono_literals;

constexpr const char* kChain = R"(
federation:
  coordinator: tcp://127.0.0.1:*
  heartbeat_timeout: 400ms
  join_timeout: 10s
  federates:
    a: {downstreams: [b]}
    b: {upstreams: [{id: a, after: 10ns}]}
)";

/// A coordinator running on its own thread for the duration of a test.
class RunningCoordinator {
 public:
  explicit RunningCoordinator(FederationSpec spec, monitoring::ProcessMetrics* metrics = nullptr,
                              const std::string& bind = "tcp://127.0.0.1:*")
      : coordinator_(std::move(spec)) {
    coordinator_.set_metrics(metrics);
    endpoint_ = coordinator_.bind(bind);
    thread_ = std::thread([this] { result_.set_value(coordinator_.run()); });
    future_ = result_.get_future();
  }
  ~RunningCoordinator() {
    coordinator_.stop();
    thread_.join();
  }
  const std::string& endpoint() const { return endpoint_; }
  Coordinator& coordinator() { return coordinator_; }
  /// The run's result, waiting at most `limit` (a guard against hangs, not a timing check).
  std::optional<CoordinatorResult> result(std::chrono::milliseconds limit) {
    if (future_.wait_for(limit) != std::future_status::ready) return std::nullopt;
    return future_.get();
  }

 private:
  Coordinator coordinator_;
  std::string endpoint_;
  std::promise<CoordinatorResult> result_;
  std::future<CoordinatorResult> future_;
  std::thread thread_;
};

FederateOptions options_for(const FederationSpec& spec, const std::string& id,
                            const std::string& endpoint) {
  FederateOptions options = FederateOptions::from_spec(spec, id);
  options.coordinator_endpoint = endpoint;
  options.data_endpoint = "tcp://127.0.0.1:1";
  return options;
}

/// Polls `client` until `done()` holds; false after `limit`.
template <class Done>
bool poll_until(FederateClient& client, Done done, std::chrono::milliseconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    client.poll(20ms);
  }
  return true;
}

TEST(Coordinator, UnknownFederateIsRefusedWithAClearError) {
  const FederationSpec spec = parse_federation_spec(kChain);
  RunningCoordinator running(spec);
  zmq::context_t context;
  FederateOptions options = options_for(spec, "a", running.endpoint());
  options.id = "ghost";
  FederateClient ghost(context, options);
  try {
    ghost.join(10s);
    FAIL() << "an unknown federate was admitted";
  } catch (const FederationError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "federate 'ghost': unknown federate id (this federation has: a b)"),
              std::string::npos)
        << e.what();
  }
}

TEST(Coordinator, DisagreeingNeighbourStructureIsRefused) {
  const FederationSpec spec = parse_federation_spec(kChain);
  RunningCoordinator running(spec);
  zmq::context_t context;
  FederateOptions options = options_for(spec, "b", running.endpoint());
  options.upstreams[0].delay = 20;  // the others say 10 ns
  FederateClient b(context, options);
  try {
    b.join(10s);
    FAIL() << "a federate with the wrong neighbour structure was admitted";
  } catch (const FederationError& e) {
    EXPECT_NE(std::string(e.what()).find("federate 'b': its neighbour structure disagrees"),
              std::string::npos)
        << e.what();
  }
}

/// The value of the first sample of family `name` whose labels include `label` (any when
/// empty); -1 when none.
double sample(const std::string& text, const std::string& name, const std::string& label = "") {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + "{", 0) != 0 || line.find(label) == std::string::npos) continue;
    return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return -1;
}

TEST(Coordinator, FederatesStartTogetherGetGrantsAndFinishByResigning) {
  const FederationSpec spec = parse_federation_spec(kChain);
  monitoring::ProcessMetrics metrics({"coordinator", "coordinator"});
  RunningCoordinator running(spec, &metrics);
  zmq::context_t context;
  FederateClient a(context, options_for(spec, "a", running.endpoint()));
  FederateClient b(context, options_for(spec, "b", running.endpoint()));
  auto joined_b = std::async(std::launch::async, [&] { return b.join(10s); });
  const ControlMessage start = a.join(10s);
  EXPECT_EQ(joined_b.get().tag, start.tag);
  ASSERT_EQ(start.endpoints.size(), 2U);

  a.send_next_event({0, 0});
  ASSERT_TRUE(poll_until(a, [&] { return a.granted() == transport::kForever; }));
  b.send_next_event({5, 0});
  ASSERT_TRUE(poll_until(b, [&] { return b.granted() >= WireTag{5, 0}; }));
  EXPECT_EQ(b.granted(), transport::WireTag(10, 0).predecessor());

  a.send_in_transit("b", {20, 0});
  a.send_completed({10, 0});
  a.send_next_event({30, 0});
  b.send_completed({5, 0});
  b.send_next_event({20, 0});
  ASSERT_TRUE(poll_until(b, [&] { return b.granted() >= WireTag{20, 0}; }));
  EXPECT_EQ(b.granted_counts().at("a"), 1U);

  // A stranger's garbage is dropped and counted under peer "unknown", whatever its routing id.
  zmq::socket_t stranger(context, zmq::socket_type::dealer);
  stranger.set(zmq::sockopt::routing_id, "stranger-1234");
  stranger.set(zmq::sockopt::linger, 0);
  stranger.connect(running.endpoint());
  stranger.send(zmq::str_buffer("junk"), zmq::send_flags::none);
  const auto dropped = [&] {
    return sample(metrics.text(), "tagflow_transport_invalid_messages_total", "peer=\"unknown\"");
  };
  for (int i = 0; i < 500 && dropped() < 1; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(dropped(), 1);

  a.resign();
  b.resign();
  const auto result = running.result(10s);
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->ok) << result->error;
  EXPECT_GE(result->grants_sent, 3U);
  // Per federate: every grant went to a or b; after joining a sent at least 5 frames (NET,
  // IN_TRANSIT, LTC, NET, RESIGN) and b at least 4 (NET, LTC, NET, RESIGN).
  ASSERT_EQ(result->traffic_by_federate.size(), 2U);
  const auto& [a_grants, a_frames] = result->traffic_by_federate.at("a");
  const auto& [b_grants, b_frames] = result->traffic_by_federate.at("b");
  EXPECT_EQ(a_grants + b_grants, result->grants_sent);
  EXPECT_GE(b_grants, 2U);
  EXPECT_GE(a_frames, 5U);
  EXPECT_GE(b_frames, 4U);

  const std::string text = metrics.text();
  EXPECT_EQ(sample(text, "tagflow_coordinator_tag_advances_total"),
            static_cast<double>(result->grants_sent));
  // NETs answered by a grant (the first grants answer the start tag, before any NET; a NET that
  // a grant sent ahead already covers counts as answered at once): at most the 4 NETs sent.
  const double answered = sample(text, "tagflow_coordinator_grant_latency_seconds_count");
  EXPECT_GE(answered, 1);
  EXPECT_LE(answered, 4);
  EXPECT_GE(sample(text, "tagflow_coordinator_heartbeats_total", "peer=\"a\""), 1);
  EXPECT_GE(sample(text, "tagflow_coordinator_heartbeats_total", "peer=\"b\""), 1);
  EXPECT_EQ(sample(text, "tagflow_coordinator_federates"), 2);
  EXPECT_EQ(sample(text, "tagflow_coordinator_federate_failures_total"), 0);
  // Control traffic per peer: a sent JOIN, 2 NETs, an LTC (carrying its in-transit report) and
  // RESIGN besides its heartbeats, and got START and at least one grant.
  const double heartbeats_a = sample(text, "tagflow_coordinator_heartbeats_total", "peer=\"a\"");
  EXPECT_GE(sample(text, "tagflow_transport_messages_received_total", "peer=\"a\""),
            heartbeats_a + 5);
  EXPECT_GE(sample(text, "tagflow_transport_messages_sent_total", "peer=\"a\""), heartbeats_a + 2);
  EXPECT_GT(sample(text, "tagflow_transport_received_bytes_total", "peer=\"b\""),
            sample(text, "tagflow_transport_messages_received_total", "peer=\"b\""));
  EXPECT_GT(sample(text, "tagflow_transport_sent_bytes_total", "peer=\"b\""), 0);
}

/// kChain's spec, starting at `start` (not (0, 0): a resumed run, PROTOCOL.md §9.6).
FederationSpec chain_spec(const WireTag& start) {
  FederationSpec spec = parse_federation_spec(kChain);
  spec.start_tag = start;
  return spec;
}

/// a and b of kChain join; returns the start tag a was given.
WireTag join_chain(FederateClient& a, FederateClient& b) {
  auto joined_b = std::async(std::launch::async, [&] { return b.join(10s); });
  const WireTag start = a.join(10s).tag;
  joined_b.get();
  return start;
}

/// a and b resign; the run must end well.
void resign_chain(FederateClient& a, FederateClient& b, RunningCoordinator& running) {
  a.resign();
  b.resign();
  const auto result = running.result(10s);
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->ok) << result->error;
}

/// kChain's coordinator with a and b joined, starting at `start`.
struct JoinedChain {
  FederationSpec spec;
  RunningCoordinator running{spec};
  zmq::context_t context;
  FederateClient a{context, options_for(spec, "a", running.endpoint())};
  FederateClient b{context, options_for(spec, "b", running.endpoint())};

  explicit JoinedChain(const WireTag& start = WireTag(0, 0)) : spec(chain_spec(start)) {
    EXPECT_EQ(join_chain(a, b), start);
  }
  /// Both resign; the run must end well.
  void finish() { resign_chain(a, b, running); }
};

TEST(Coordinator, InTransitReportsCarriedByAnLtcCountInTheGrant) {
  JoinedChain chain;
  FederateClient& a = chain.a;
  FederateClient& b = chain.b;
  a.send_next_event({0, 0});
  b.send_next_event({20, 0});
  // a completed 0..10 and sent two messages to b (arriving at 10 and 20, after the 10 ns delay).
  a.send_completed({10, 0}, {{"b", {10, 0}}, {"b", {20, 0}}});
  a.send_next_event({30, 0});
  ASSERT_TRUE(poll_until(b, [&] { return b.granted() >= WireTag{20, 0}; }));
  EXPECT_EQ(b.granted_counts().at("a"), 2U);
  chain.finish();
}

TEST(Coordinator, TheNextTagAnLtcCarriesActsAsItsNet) {
  JoinedChain chain;
  FederateClient& a = chain.a;
  FederateClient& b = chain.b;
  a.send_next_event({0, 0});
  b.send_next_event({25, 0});
  // Without a next tag a's LTC leaves it free to send right after 10: b waits.
  a.send_completed({10, 0}, {{"b", {20, 0}}});
  const auto granted_25 = [&] { return b.granted() >= WireTag{25, 0}; };
  EXPECT_FALSE(poll_until(b, granted_25, 300ms));
  // The same LTC tag again, now with a's next tag (30): b may go up to just before 40.
  a.send_completed({10, 0}, {}, WireTag{30, 0});
  ASSERT_TRUE(poll_until(b, granted_25));
  EXPECT_EQ(b.granted(), transport::WireTag(40, 0).predecessor());
  EXPECT_EQ(b.granted_counts().at("a"), 1U);
  chain.finish();
}

TEST(Coordinator, AResumedRunGrantsNothingUntilEveryFederateResumedAndCountsTheResentMessages) {
  JoinedChain chain(WireTag(100, 0));
  FederateClient& a = chain.a;
  FederateClient& b = chain.b;
  // a's part held a message to b arriving at 105: reported, then a resumed and asks for 200.
  a.send_in_transit("b", {105, 0});
  a.send_resumed({100, 0});
  a.send_next_event({200, 0});
  b.send_next_event({105, 0});
  const auto granted_105 = [&] { return b.granted() >= WireTag{105, 0}; };
  EXPECT_FALSE(poll_until(b, granted_105, 300ms));  // b has not said RESUMED yet
  b.send_resumed({100, 0});
  ASSERT_TRUE(poll_until(b, granted_105));
  EXPECT_EQ(b.granted_counts().at("a"), 1U);  // the re-sent message is waited for
  chain.finish();
}

TEST(Coordinator, AFederateResumingAtAnotherTagEndsTheRunNamingIt) {
  JoinedChain chain(WireTag(100, 0));
  chain.a.send_resumed({50, 0});
  const auto result = chain.running.result(10s);
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->ok);
  EXPECT_NE(result->error.find("federate 'a' failed: it resumed at logical time 50 ns, but the "
                               "run resumes at 100 ns"),
            std::string::npos)
      << result->error;
}

TEST(FederateRuntime, AFederateOnAZeroDelayCycleIsRefusedWithAClearError) {
  const FederationSpec spec = parse_federation_spec(R"(
federation:
  coordinator: tcp://127.0.0.1:*
  federates:
    a: {upstreams: [b], downstreams: [b]}
    b: {upstreams: [a], downstreams: [a]}
)");
  class Idle : public FederatedProgram {
    WireTag next_local_event() override { return transport::kForever; }
    void react(const WireTag&, const std::vector<InputMessage>&, Outbox&) override {}
    std::vector<std::pair<std::string, std::uint32_t>> input_ports() override { return {}; }
  } program;
  try {
    FederateRuntime runtime(spec, "a", program);
    FAIL() << "a zero-delay cycle member was accepted";
  } catch (const FederationConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'a' is on a zero-delay cycle"), std::string::npos)
        << e.what();
  }
}

TEST(Coordinator, StopIsGrantedAtTheLargestProposal) {
  const FederationSpec spec = parse_federation_spec(kChain);
  RunningCoordinator running(spec);
  zmq::context_t context;
  FederateClient a(context, options_for(spec, "a", running.endpoint()));
  FederateClient b(context, options_for(spec, "b", running.endpoint()));
  auto joined_b = std::async(std::launch::async, [&] { return b.join(10s); });
  a.join(10s);
  joined_b.get();
  b.set_stop_floor({70, 0});  // b is already at 70
  a.send_stop_request({50, 0});
  ASSERT_TRUE(poll_until(b, [&] { return b.stop_tag().has_value(); }));
  ASSERT_TRUE(poll_until(a, [&] { return a.stop_tag().has_value(); }));
  EXPECT_EQ(*a.stop_tag(), (WireTag{70, 0}));
  EXPECT_EQ(*b.stop_tag(), (WireTag{70, 0}));
  EXPECT_EQ(a.stop_proposal(), std::optional(WireTag{50, 0}));  // the earliest: the cutoff
  EXPECT_EQ(b.stop_proposal(), std::optional(WireTag{50, 0}));
}

TEST(Coordinator, SilentFederateIsDeclaredFailedAndItsNeighbourIsTold) {
  const FederationSpec spec = parse_federation_spec(kChain);
  monitoring::ProcessMetrics metrics({"coordinator", "coordinator"});
  RunningCoordinator running(spec, &metrics);
  zmq::context_t context;
  auto a = std::make_unique<FederateClient>(context, options_for(spec, "a", running.endpoint()));
  FederateClient b(context, options_for(spec, "b", running.endpoint()));
  auto joined_b = std::async(std::launch::async, [&] { return b.join(10s); });
  a->join(10s);
  joined_b.get();
  a.reset();  // a vanishes: no resign, no more heartbeats
  try {
    poll_until(
        b, [] { return false; }, 10s);
    FAIL() << "b was never told that a failed";
  } catch (const FederationError& e) {
    EXPECT_NE(std::string(e.what()).find("'a' failed"), std::string::npos) << e.what();
  }
  const auto result = running.result(10s);
  ASSERT_TRUE(result.has_value()) << "the coordinator hangs after a failure";
  EXPECT_FALSE(result->ok);
  EXPECT_EQ(result->failed, std::vector<std::string>{"a"});
  EXPECT_NE(result->error.find("'a'"), std::string::npos);
  const std::string text = metrics.text();
  EXPECT_EQ(sample(text, "tagflow_coordinator_federate_failures_total"), 1);
  EXPECT_EQ(sample(text, "tagflow_coordinator_federates"), 1);
}

TEST(Coordinator, FederateThatNeverJoinsEndsTheRunWithItsName) {
  FederationSpec spec = parse_federation_spec(kChain);
  spec.join_timeout = 300ms;
  RunningCoordinator running(spec);
  zmq::context_t context;
  FederateClient a(context, options_for(spec, "a", running.endpoint()));
  EXPECT_THROW(a.join(10s), FederationError);
  const auto result = running.result(10s);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->failed, std::vector<std::string>{"b"});
  EXPECT_NE(result->error.find("never joined"), std::string::npos);
}

/// A raw DEALER with routing id `identity`, as a client that is no FederateClient would use.
zmq::socket_t raw_dealer(zmq::context_t& context, const std::string& identity,
                         const std::string& endpoint) {
  zmq::socket_t socket(context, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::routing_id, identity);
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::rcvtimeo, 10000);  // a guard against hangs, not a timing check
  socket.connect(endpoint);
  return socket;
}

/// The next control message on `socket` (nullopt after its receive timeout).
std::optional<ControlMessage> next_message(zmq::socket_t& socket) {
  zmq::message_t frame;
  if (!socket.recv(frame)) return std::nullopt;
  return decode_control(frame.data(), frame.size());
}

/// Everything logged through spdlog's default logger while it lives. The coordinator logs from
/// its own thread: text() reads under the sink's lock.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()), sink_(std::make_shared<StringSink>()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("captured", sink_));
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  std::string text() const { return sink_->text(); }

 private:
  class StringSink : public spdlog::sinks::base_sink<std::mutex> {
   public:
    std::string text() {
      const std::lock_guard<std::mutex> lock(mutex_);
      return text_;
    }

   protected:
    void sink_it_(const spdlog::details::log_msg& message) override {
      spdlog::memory_buf_t line;
      formatter_->format(message, line);
      text_.append(line.data(), line.size());
    }
    void flush_() override {}

   private:
    std::string text_;
  };

  std::shared_ptr<spdlog::logger> previous_;
  std::shared_ptr<StringSink> sink_;
};

// A JOIN with a malformed field used to be dropped without a word: the client waited out its
// join timeout. It is refused with the reason, and counted.
TEST(Coordinator, AJoinWithAMalformedFieldIsRefusedWithTheReason) {
  const FederationSpec spec = parse_federation_spec(kChain);
  monitoring::ProcessMetrics metrics({"coordinator", "coordinator"});
  RunningCoordinator running(spec, &metrics);
  zmq::context_t context;
  zmq::socket_t client = raw_dealer(context, "a", running.endpoint());
  // [1, 2, "a", [], ["b"]]: the data endpoint is missing.
  const std::string missing_endpoint =
      "\x95\x01\x02\xa1"
      "a"
      "\x90\x91\xa1"
      "b";
  client.send(zmq::buffer(missing_endpoint), zmq::send_flags::none);
  const std::optional<ControlMessage> reply = next_message(client);
  ASSERT_TRUE(reply.has_value()) << "no answer to a malformed JOIN";
  EXPECT_EQ(reply->type, ControlType::kRefused);
  EXPECT_NE(reply->text.find("federate 'a': malformed control message: JOIN: expected 6 elements"),
            std::string::npos)
      << reply->text;
  EXPECT_EQ(
      sample(metrics.text(), "tagflow_transport_invalid_messages_total", "reason=\"refused_join\""),
      1);
}

// Refused JOINs used to be logged raw — a newline in the id forged coordinator lines — and
// each one took a line. The log now shows the sender's text escaped, once per peer.
TEST(Coordinator, RefusedJoinsAreLoggedEscapedAndOncePerPeer) {
  const FederationSpec spec = parse_federation_spec(kChain);
  monitoring::ProcessMetrics metrics({"coordinator", "coordinator"});
  const CapturedLog log;
  RunningCoordinator running(spec, &metrics);
  zmq::context_t context;
  const std::string forged = "x\n[info] coordinator: every federate resigned; run finished";
  zmq::socket_t client = raw_dealer(context, "intruder", running.endpoint());
  ControlMessage join;
  join.type = ControlType::kJoin;
  join.federate = forged;
  join.endpoints = {{forged, "tcp://127.0.0.1:1"}};
  for (int i = 0; i < 200; ++i) client.send(zmq::buffer(encode_control(join)));
  for (int i = 0; i < 200; ++i) {
    const std::optional<ControlMessage> reply = next_message(client);
    ASSERT_TRUE(reply.has_value());
    ASSERT_EQ(reply->type, ControlType::kRefused);
  }
  const std::string text = log.text();
  EXPECT_EQ(text.find("\n[info] coordinator: every federate"), std::string::npos) << text;
  EXPECT_NE(text.find("federate 'x\\x0a[info] coordinator: every federate resigned; run finished': "
                      "unknown federate id"),
            std::string::npos)
      << text;
  std::size_t lines = 0;
  for (std::size_t at = text.find("coordinator: refused"); at != std::string::npos;
       at = text.find("coordinator: refused", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1U) << text;
  EXPECT_EQ(
      sample(metrics.text(), "tagflow_transport_invalid_messages_total", "reason=\"refused_join\""),
      200);
}

// A malformed frame's refusal names the routing id escaped; its log line once said it escaped a
// second time ('\\x01' for a 0x01 byte), unlike the REFUSED it logs.
TEST(Coordinator, AMalformedFramesRefusalIsLoggedAsItWasSent) {
  const FederationSpec spec = parse_federation_spec(kChain);
  const CapturedLog log;
  RunningCoordinator running(spec);
  zmq::context_t context;
  zmq::socket_t client = raw_dealer(context, std::string("\x01odd\\id"), running.endpoint());
  client.send(zmq::str_buffer("\xc0"), zmq::send_flags::none);  // nil: no array
  const std::optional<ControlMessage> reply = next_message(client);
  ASSERT_TRUE(reply.has_value());
  ASSERT_EQ(reply->type, ControlType::kRefused);
  const std::string sent = "federate '\\x01odd\\\\id': malformed control message: ";
  EXPECT_EQ(reply->text.rfind(sent, 0), 0U) << reply->text;
  const std::string text = log.text();
  EXPECT_NE(text.find("refused '\\x01odd\\\\id': " + sent), std::string::npos) << text;
}

// A federate that drops a data message its grants count reports FAILED: the run ends at once,
// naming it and the message, instead of hanging while everyone heartbeats.
TEST(Coordinator, AFederateThatReportsAFailureEndsTheRunNamingIt) {
  const FederationSpec spec = parse_federation_spec(kChain);
  RunningCoordinator running(spec);
  zmq::context_t context;
  FederateClient a(context, options_for(spec, "a", running.endpoint()));
  FederateClient b(context, options_for(spec, "b", running.endpoint()));
  auto joined_a = std::async(std::launch::async, [&] { return a.join(10s); });
  b.join(10s);
  joined_a.get();
  b.report_failure("dropped a data message from 'a' on port 7: unknown_port\nforged");
  const auto result = running.result(10s);
  ASSERT_TRUE(result.has_value()) << "the coordinator hangs after a reported failure";
  EXPECT_FALSE(result->ok);
  EXPECT_EQ(result->failed, std::vector<std::string>{"b"});
  EXPECT_NE(result->error.find("federate 'b' failed: dropped a data message from 'a' on port 7: "
                               "unknown_port\\x0aforged"),
            std::string::npos)
      << result->error;
  try {
    poll_until(
        a, [] { return false; }, 10s);
    FAIL() << "a was never told that b failed";
  } catch (const FederationError& e) {
    EXPECT_NE(std::string(e.what()).find("on port 7"), std::string::npos) << e.what();
  }
}

/// A launcher's connection for `federate` (PROTOCOL.md §8): a DEALER with routing id id#up.
zmq::socket_t launcher_socket(zmq::context_t& context, const std::string& federate,
                              const std::string& endpoint) {
  zmq::socket_t socket(context, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::routing_id, federate + "#up");
  socket.set(zmq::sockopt::linger, 0);
  socket.connect(endpoint);
  return socket;
}

TEST(Coordinator, ALauncherReportingItsFederatesDeathEndsTheRunAtOnceNamingIt) {
  const FederationSpec spec = parse_federation_spec(kChain);
  RunningCoordinator running(spec);
  zmq::context_t context;
  FederateClient a(context, options_for(spec, "a", running.endpoint()));
  FederateClient b(context, options_for(spec, "b", running.endpoint()));
  auto joined_a = std::async(std::launch::async, [&] { return a.join(10s); });
  b.join(10s);
  joined_a.get();
  zmq::socket_t launcher = launcher_socket(context, "b", running.endpoint());
  ControlMessage failed;
  failed.type = ControlType::kFailed;
  failed.federate = "b";
  failed.text = "its process b on host x killed by signal 9 (Killed)";
  const std::string frame = encode_control(failed);
  launcher.send(zmq::buffer(frame));
  const auto result = running.result(10s);
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->ok);
  EXPECT_EQ(result->failed, std::vector<std::string>{"b"});
  EXPECT_NE(result->error.find("federate 'b' failed: its process b on host x killed by signal 9"),
            std::string::npos)
      << result->error;
}

/// Sends a launcher's FAILED for `federate` (PROTOCOL.md §8.1).
void report_death(zmq::socket_t& launcher, const std::string& federate, const std::string& text) {
  ControlMessage failed;
  failed.type = ControlType::kFailed;
  failed.federate = federate;
  failed.text = text;
  launcher.send(zmq::buffer(encode_control(failed)));
}

// A launcher's report for a federate that has not joined is held: after a restart it may be the
// last run's, delivered late to the new coordinator on the same port. The federate joining shows
// that it was, and the run goes on.
TEST(Coordinator, ALaunchersReportBeforeItsFederateJoinedIsDroppedWhenItJoins) {
  const FederationSpec spec = parse_federation_spec(kChain);
  RunningCoordinator running(spec);
  zmq::context_t context;
  zmq::socket_t launcher = launcher_socket(context, "b", running.endpoint());
  report_death(launcher, "b", "its process b on host x exited with code 1");
  std::this_thread::sleep_for(200ms);  // the report is read before b joins
  FederateClient a(context, options_for(spec, "a", running.endpoint()));
  FederateClient b(context, options_for(spec, "b", running.endpoint()));
  join_chain(a, b);
  resign_chain(a, b, running);
}

// ...but a federate that does not join within the hold (min(10 s, join_timeout)) ends the run
// with the launcher's words, not "never joined".
TEST(Coordinator, ALaunchersReportForAFederateThatNeverJoinsEndsTheRunWithItsWords) {
  FederationSpec spec = parse_federation_spec(kChain);
  spec.join_timeout = 1s;
  RunningCoordinator running(spec);
  zmq::context_t context;
  FederateClient a(context, options_for(spec, "a", running.endpoint()));
  auto joined_a = std::async(std::launch::async, [&] {
    try {
      a.join(10s);
    } catch (const FederationError&) {
      // told that the run failed
    }
  });
  zmq::socket_t launcher = launcher_socket(context, "b", running.endpoint());
  report_death(launcher, "b", "its process b on host x killed by signal 9 (Killed)");
  const auto result = running.result(10s);
  joined_a.get();
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->ok);
  EXPECT_EQ(result->failed, std::vector<std::string>{"b"});
  EXPECT_NE(result->error.find("federate 'b' failed: its process b on host x killed by signal 9"),
            std::string::npos)
      << result->error;
}

TEST(Coordinator, ALaunchersResultGoesToTheSinkAndIsAnsweredWithWhereTheSummaryIs) {
  const FederationSpec spec = parse_federation_spec(kChain);
  Coordinator coordinator(spec);
  std::vector<std::string> seen;
  coordinator.set_result_sink(
      [&](const std::string& federate, const std::string& process, const std::string& json) {
        seen.push_back(federate + " " + process + " " + json);
        return process == "a" ? ResultReceipt{true, "/runs/x/summary.json"}
                              : ResultReceipt{false, "no such process"};
      });
  const std::string endpoint = coordinator.bind("tcp://127.0.0.1:*");
  zmq::context_t context;
  zmq::socket_t launcher = launcher_socket(context, "a", endpoint);
  for (const std::string process : {"a", "zz"}) {
    ControlMessage result;
    result.type = ControlType::kResult;
    result.process = process;
    result.text = "{}";
    launcher.send(zmq::buffer(encode_control(result)));
  }
  std::vector<ControlMessage> answers;
  EXPECT_TRUE(coordinator.collect_results(10s, [&] {
    zmq::pollitem_t item{launcher.handle(), 0, ZMQ_POLLIN, 0};
    while (zmq::poll(&item, 1, std::chrono::milliseconds(0)) > 0) {
      zmq::message_t frame;
      (void)launcher.recv(frame);
      answers.push_back(decode_control(frame.data(), frame.size()).value_or(ControlMessage{}));
    }
    return answers.size() == 2;
  }));
  EXPECT_EQ(seen, (std::vector<std::string>{"a a {}", "a zz {}"}));
  ASSERT_EQ(answers.size(), 2U);
  EXPECT_EQ(answers[0].type, ControlType::kResultStored);
  EXPECT_EQ(answers[0].text, "/runs/x/summary.json");
  EXPECT_EQ(answers[1].type, ControlType::kRefused);
  EXPECT_NE(answers[1].text.find("no such process"), std::string::npos) << answers[1].text;
}

/// A fresh key directory with key pairs for the coordinator, a and b (kChain).
std::filesystem::path chain_keys(const std::string& stem) {
  const auto keys =
      std::filesystem::temp_directory_path() / (stem + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(keys);
  for (const char* name : {"coordinator", "a", "b"}) {
    transport::write_key_pair(keys, name, transport::generate_curve_key_pair());
  }
  return keys;
}

/// The real a and b join (each with its own key when the spec has keys).
void expect_both_join(const FederationSpec& spec, const std::string& endpoint,
                      zmq::context_t& context) {
  FederateClient a(context, options_for(spec, "a", endpoint));
  FederateClient b(context, options_for(spec, "b", endpoint));
  auto joined_b = std::async(std::launch::async, [&] { return b.join(10s); });
  EXPECT_NO_THROW(a.join(10s));
  EXPECT_NO_THROW(joined_b.get());
}

// ZAP admits every configured federate's key; a key used to join as another federate (before the
// real one) used to get that federate's slot. A key joins only as the federate it was made for.
TEST(Coordinator, AKeyJoinsOnlyAsTheFederateItWasMadeFor) {
  const std::filesystem::path keys = chain_keys("tagflow-coordinator-squat");
  // The squatter holds a's key pair, under the name b.
  transport::write_key_pair(keys / "squatter", "b", transport::read_key_pair(keys, "a"));
  std::filesystem::copy_file(keys / "coordinator.pub", keys / "squatter" / "coordinator.pub");
  FederationSpec spec = parse_federation_spec(kChain);
  spec.keys_dir = keys.string();
  spec.heartbeat_timeout = 5s;  // about joins, not heartbeats: room for a slow (sanitized) build
  RunningCoordinator running(spec);
  {
    // A context of its own: destroying it closes the squatter's connections for certain.
    zmq::context_t squatter_context;
    FederateOptions squat = options_for(spec, "b", running.endpoint());
    squat.keys_dir = (keys / "squatter").string();
    FederateClient squatter(squatter_context, squat);
    try {
      squatter.join(10s);
      ADD_FAILURE() << "a's key joined as b";
    } catch (const FederationError& e) {
      EXPECT_NE(
          std::string(e.what()).find("belongs to federate 'a', which may join only as itself"),
          std::string::npos)
          << e.what();
    }
  }
  // The real b comes under the same routing id, and a ROUTER ignores a second connection with a
  // routing id still in use (its JOIN would be lost): give the coordinator's I/O thread time to
  // drop the squatter's closed connection first.
  std::this_thread::sleep_for(300ms);
  zmq::context_t context;
  expect_both_join(spec, running.endpoint(), context);  // the real b still gets its slot
  std::filesystem::remove_all(keys);
}

// Without CURVE an id is claimed by the first JOIN; a second one is refused, naming where each
// came from, so that a squatted id shows up in the log. (A second connection with a live
// routing id never reaches the coordinator: ZeroMQ's ROUTER keeps the first.)
/// kChain's JOIN of federate a, as a raw client sends it.
std::string join_of_a() {
  ControlMessage join;
  join.type = ControlType::kJoin;
  join.federate = "a";
  join.downstreams = {"b"};
  join.endpoints = {{"a", "tcp://127.0.0.1:1"}};
  return encode_control(join);
}

/// a's first NET after START: from then on a JOIN under its id is a second claim (§2.2).
void send_first_net(zmq::socket_t& a) {
  a.send(zmq::buffer(encode_control(make_tag_message(ControlType::kNextEvent, WireTag(0, 0)))),
         zmq::send_flags::none);
}

/// The next REFUSED on `socket`, skipping what comes before it (nullopt after its timeout).
std::optional<ControlMessage> next_refusal(zmq::socket_t& socket) {
  std::optional<ControlMessage> reply = next_message(socket);
  while (reply && reply->type != ControlType::kRefused) reply = next_message(socket);
  return reply;
}

/// Federate b joins in the background; once a has too, the returned future holds b's START.
std::future<ControlMessage> b_joins(FederateClient& b) {
  return std::async(std::launch::async, [&b] { return b.join(10s); });
}

// PROTOCOL.md §2.1: a federate sends JOIN again every second until START; the coordinator ignores
// the repeats on the connection that joined.
TEST(Coordinator, AJoinRepeatedOnTheConnectionThatJoinedIsIgnored) {
  const FederationSpec spec = parse_federation_spec(kChain);
  RunningCoordinator running(spec);
  zmq::context_t context;
  zmq::socket_t client = raw_dealer(context, "a", running.endpoint());
  client.send(zmq::buffer(join_of_a()), zmq::send_flags::none);
  client.send(zmq::buffer(join_of_a()), zmq::send_flags::none);
  FederateClient b(context, options_for(spec, "b", running.endpoint()));
  auto joined_b = b_joins(b);
  const std::optional<ControlMessage> reply = next_message(client);
  ASSERT_TRUE(reply.has_value()) << "no START";
  EXPECT_EQ(reply->type, ControlType::kStart) << reply->text;
  EXPECT_EQ(joined_b.get().type, ControlType::kStart);
}

/// a JOINs on a connection that then closes; returns once the coordinator has read the close.
void join_a_and_close(const std::string& endpoint) {
  {
    zmq::context_t first_context;  // destroyed: the first connection surely closes
    zmq::socket_t first = raw_dealer(first_context, "a", endpoint);
    first.send(zmq::buffer(join_of_a()), zmq::send_flags::none);
    std::this_thread::sleep_for(200ms);
  }
  std::this_thread::sleep_for(300ms);
}

/// a JOINs again on a new connection, then b joins: a gets START there, with b.
void expect_start_on_a_new_connection(RunningCoordinator& running, const FederationSpec& spec,
                                      zmq::context_t& context) {
  zmq::socket_t again = raw_dealer(context, "a", running.endpoint());
  again.send(zmq::buffer(join_of_a()), zmq::send_flags::none);
  // The JOIN on the new connection is read before b completes the federation (the case of these
  // tests): b reaches the coordinator over its Unix-socket twin (transport/WIRE.md §1.1), which
  // can connect before this TCP connection does. Otherwise START goes out while a's connection is
  // closed, and a gets it on its next JOIN (AfterStart... below).
  std::this_thread::sleep_for(300ms);
  FederateClient b(context, options_for(spec, "b", running.endpoint()));
  auto joined_b = b_joins(b);
  const std::optional<ControlMessage> reply = next_message(again);
  ASSERT_TRUE(reply.has_value()) << "no START on the new connection";
  EXPECT_EQ(reply->type, ControlType::kStart) << reply->text;
  EXPECT_EQ(joined_b.get().type, ControlType::kStart);
}

// PROTOCOL.md §8.1: when the run fails for another reason while a launcher's report waits for
// its federate to join, the report is the reason given: b's process died before joining, and its
// host's launcher then stopped a, whose connection closed.
TEST(Coordinator, AHeldLaunchersReportIsTheReasonWhenTheRunFailsBeforeItsFederateJoined) {
  const FederationSpec spec = parse_federation_spec(kChain);  // join_timeout 10 s
  RunningCoordinator running(spec);
  zmq::context_t context;
  zmq::socket_t launcher = launcher_socket(context, "b", running.endpoint());
  report_death(launcher, "b", "its process b on host x killed by signal 9 (Killed)");
  join_a_and_close(running.endpoint());
  const auto result = running.result(5s);  // well before the report's 10 s hold
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->ok);
  EXPECT_EQ(result->failed, std::vector<std::string>{"b"}) << result->error;
  EXPECT_NE(result->error.find("federate 'b' failed: its process b on host x killed by signal 9"),
            std::string::npos)
      << result->error;
}

// PROTOCOL.md §2.1-2.2: before START, a federate whose connection closed may join again on a new
// one (its JOIN may have gone to a coordinator that went away).
TEST(Coordinator, BeforeStartAFederateWhoseConnectionClosedJoinsAgainOnANewOne) {
  FederationSpec spec = parse_federation_spec(kChain);
  spec.heartbeat_timeout = 5s;  // the raw client sends no heartbeats
  RunningCoordinator running(spec);
  join_a_and_close(running.endpoint());
  zmq::context_t context;
  expect_start_on_a_new_connection(running, spec, context);
}

// The same with a's heartbeats going on throughout, as a real federate's do (they start before
// its JOIN, on a connection of their own): a beat after the close is no sign that the JOIN's
// connection came back, and the JOIN on the new one is still accepted.
TEST(Coordinator, BeforeStartAJoinOnANewConnectionIsAcceptedWhileTheHeartbeatsGoOn) {
  FederationSpec spec = parse_federation_spec(kChain);
  spec.heartbeat_timeout = 5s;
  RunningCoordinator running(spec);
  zmq::context_t context;
  zmq::socket_t beats = raw_dealer(context, "a#hb", running.endpoint());
  ControlMessage beat;
  beat.type = ControlType::kHeartbeat;
  std::atomic<bool> beating{true};
  std::thread beater([&] {
    while (beating.load()) {
      beats.send(zmq::buffer(encode_control(beat)), zmq::send_flags::dontwait);
      zmq::message_t echo;
      while (beats.recv(echo, zmq::recv_flags::dontwait)) {
      }
      std::this_thread::sleep_for(20ms);
    }
  });
  join_a_and_close(running.endpoint());  // beats came after the close was read
  expect_start_on_a_new_connection(running, spec, context);
  beating = false;
  beater.join();
}

// PROTOCOL.md §2.2: START sent while a federate's connection was closed is lost with it; the
// federate's JOIN on its new connection gets START again, until it has sent anything after START.
TEST(Coordinator, AfterStartAFederateWhoseStartWasLostWithItsConnectionGetsItOnItsNewOne) {
  FederationSpec spec = parse_federation_spec(kChain);
  spec.heartbeat_timeout = 5s;  // the raw client sends no heartbeats
  RunningCoordinator running(spec);
  join_a_and_close(running.endpoint());
  zmq::context_t context;
  FederateClient b(context, options_for(spec, "b", running.endpoint()));
  EXPECT_EQ(b_joins(b).get().type, ControlType::kStart);  // a's START went to a closed connection
  {
    zmq::context_t again_context;
    zmq::socket_t again = raw_dealer(again_context, "a", running.endpoint());
    again.send(zmq::buffer(join_of_a()), zmq::send_flags::none);
    const std::optional<ControlMessage> reply = next_message(again);
    ASSERT_TRUE(reply.has_value()) << "no START on the new connection";
    ASSERT_EQ(reply->type, ControlType::kStart) << reply->text;
    EXPECT_EQ(reply->endpoints.size(), 2U);
    // a has no upstreams: its grant of forever followed START to the closed connection, and
    // comes again after it, or a would wait for it for ever.
    const std::optional<ControlMessage> grant = next_message(again);
    ASSERT_TRUE(grant.has_value()) << "no grant after START on the new connection";
    EXPECT_EQ(grant->type, ControlType::kGrant) << grant->text;
    EXPECT_EQ(grant->tag, transport::kForever);
    // a now speaks after START: a later JOIN is a second claim on its id.
    send_first_net(again);
    std::this_thread::sleep_for(200ms);
  }
  std::this_thread::sleep_for(300ms);
  zmq::socket_t third = raw_dealer(context, "a", running.endpoint());
  third.send(zmq::buffer(join_of_a()), zmq::send_flags::none);
  const std::optional<ControlMessage> reply = next_refusal(third);
  ASSERT_TRUE(reply.has_value()) << "a JOIN after a's NET was not refused";
  EXPECT_NE(reply->text.find("federate 'a' has already joined"), std::string::npos) << reply->text;
}

// PROTOCOL.md §6.1, §6.3: a refused JOIN is no sign of life of the federate whose id it claims.
// a spoke after START, then its connection closed; a JOIN with a's id on a new connection is a
// second claim, refused, and a is still the federate whose connection closed.
TEST(Coordinator, ARefusedJoinUnderAClosedFederatesIdDoesNotKeepItAlive) {
  FederationSpec spec = parse_federation_spec(kChain);
  spec.heartbeat_timeout = 5s;  // the raw clients send no heartbeats
  RunningCoordinator running(spec);
  zmq::context_t context;
  FederateClient b(context, options_for(spec, "b", running.endpoint()));
  {
    zmq::context_t first_context;
    zmq::socket_t first = raw_dealer(first_context, "a", running.endpoint());
    first.send(zmq::buffer(join_of_a()), zmq::send_flags::none);
    EXPECT_EQ(b_joins(b).get().type, ControlType::kStart);
    const std::optional<ControlMessage> start = next_message(first);
    ASSERT_TRUE(start.has_value());
    ASSERT_EQ(start->type, ControlType::kStart) << start->text;
    send_first_net(first);
    std::this_thread::sleep_for(200ms);
  }
  std::this_thread::sleep_for(300ms);
  zmq::socket_t claim = raw_dealer(context, "a", running.endpoint());
  ControlMessage join;
  join.type = ControlType::kJoin;
  join.federate = "a";
  join.downstreams = {"b"};
  join.endpoints = {{"a", "tcp://127.0.0.1:2"}};  // not the endpoint a joined with
  claim.send(zmq::buffer(encode_control(join)), zmq::send_flags::none);
  const std::optional<ControlMessage> reply = next_refusal(claim);
  ASSERT_TRUE(reply.has_value()) << "the second claim on a's id was not refused";
  EXPECT_NE(reply->text.find("federate 'a' has already joined"), std::string::npos) << reply->text;
  const auto result = running.result(15s);
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->ok);
  EXPECT_EQ(result->failed, std::vector<std::string>{"a"}) << result->error;
  EXPECT_NE(result->error.find("federate 'a' failed: its connection to the coordinator closed"),
            std::string::npos)
      << result->error;
}

// The same once the closed connection's descriptor went to the new one: the kernel gives the
// lowest free number, so a federate that reconnects after a pause usually gets, at the
// coordinator, the descriptor its JOIN came on; its JOIN there is a new connection's, not the old
// one's repeated. Each connection is made by a child process, as a federate's would be: a client
// socket in this process would take the freed number itself.
TEST(Coordinator, AfterStartAJoinOnANewConnectionWithTheClosedOnesDescriptorGetsStartAgain) {
  FederationSpec spec = parse_federation_spec(kChain);
  spec.heartbeat_timeout = 5s;  // the raw client sends no heartbeats
  RunningCoordinator running(spec);
  const std::string endpoint = running.endpoint();
  // A child that JOINs as a and exits 0 when START answers, 1 on any other answer or none in
  // 20 s. Until the coordinator's ZeroMQ has seen the last connection close, a new connection
  // with the same routing id is held and its JOIN never read (transport/WIRE.md §3.1), so a JOIN
  // without an answer within a second is sent again on a fresh connection, as a federate would.
  const auto join_in_child = [&endpoint] {
    const pid_t pid = ::fork();
    if (pid == 0) {
      for (int attempt = 0; attempt < 20; ++attempt) {
        zmq::context_t child_context;
        zmq::socket_t socket = raw_dealer(child_context, "a", endpoint);
        socket.set(zmq::sockopt::rcvtimeo, 1000);
        socket.send(zmq::buffer(join_of_a()), zmq::send_flags::none);
        const std::optional<ControlMessage> reply = next_message(socket);
        if (reply) ::_exit(reply->type == ControlType::kStart ? 0 : 1);
      }
      ::_exit(1);
    }
    return pid;
  };
  const auto exit_code = [](pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  const pid_t first = join_in_child();
  zmq::context_t context;
  FederateClient b(context, options_for(spec, "b", endpoint));
  EXPECT_EQ(b_joins(b).get().type, ControlType::kStart);
  ASSERT_EQ(exit_code(first), 0) << "a got no START on its first connection";
  std::this_thread::sleep_for(300ms);  // the coordinator sees the close; the descriptor is free
  EXPECT_EQ(exit_code(join_in_child()), 0) << "the JOIN on a's new connection got no START";
}

// The case behind both: a coordinator restarted while a federate waits for START. The JOIN the
// federate wrote to the first one (here a bare ROUTER that reads it and goes away without an
// answer, as a killed coordinator does) is gone with it; the repeat reaches the second.
TEST(Coordinator, AFederateWaitingForStartJoinsTheCoordinatorThatReplacedTheFirst) {
  const FederationSpec spec = parse_federation_spec(kChain);
  std::string endpoint;
  auto first_context = std::make_unique<zmq::context_t>();
  auto first = std::make_unique<zmq::socket_t>(*first_context, zmq::socket_type::router);
  first->set(zmq::sockopt::linger, 0);
  first->set(zmq::sockopt::rcvtimeo, 10000);
  first->bind("tcp://127.0.0.1:*");
  endpoint = first->get(zmq::sockopt::last_endpoint);
  zmq::context_t context;
  FederateClient a(context, options_for(spec, "a", endpoint));
  auto joined_a = std::async(std::launch::async, [&] { return a.join(20s); });
  zmq::message_t routing_id;
  zmq::message_t frame;
  ASSERT_TRUE(first->recv(routing_id));  // a's first JOIN reached the first coordinator
  ASSERT_TRUE(first->recv(frame));
  first.reset();
  first_context.reset();
  RunningCoordinator second(spec, nullptr, endpoint);
  FederateClient b(context, options_for(spec, "b", endpoint));
  auto joined_b = b_joins(b);
  EXPECT_EQ(joined_a.get().type, ControlType::kStart);
  EXPECT_EQ(joined_b.get().type, ControlType::kStart);
}

// PROTOCOL.md §2.5: the coordinator accepts its own version and the ones before it down to
// version 3; any other is refused, and the refusal names the federate and the versions the
// coordinator accepts. START tells a federate of version 4 or later every federate's version,
// and a version-3 one nothing new.
/// The STARTs of `spec`'s `a`, joined with protocol `version`, and `b`, of the current version.
std::pair<ControlMessage, ControlMessage> starts_with_a_of_version(const FederationSpec& spec,
                                                                   std::uint32_t version) {
  RunningCoordinator running(spec);
  zmq::context_t context;
  FederateOptions old = options_for(spec, "a", running.endpoint());
  old.protocol_version = version;
  FederateClient a(context, old);
  FederateClient b(context, options_for(spec, "b", running.endpoint()));
  auto joined_b = std::async(std::launch::async, [&] { return b.join(10s); });
  ControlMessage start_a;
  EXPECT_NO_THROW(start_a = a.join(10s));
  return {start_a, joined_b.get()};
}

TEST(Coordinator, AcceptsTheCurrentAndTheVersionsBeforeDownTo3AndRefusesOthersNamingTheFederate) {
  const FederationSpec spec = parse_federation_spec(kChain);
  for (const std::uint32_t refused : {kOldestProtocolVersion - 1, kProtocolVersion + 1}) {
    RunningCoordinator running(spec);
    zmq::context_t context;
    FederateOptions options = options_for(spec, "b", running.endpoint());
    options.protocol_version = refused;
    FederateClient b(context, options);
    try {
      b.join(10s);
      FAIL() << "a federate speaking version " << refused << " was admitted";
    } catch (const FederationError& e) {
      const std::string text = e.what();
      EXPECT_NE(text.find("federate 'b' speaks protocol version " + std::to_string(refused) +
                          "; this coordinator speaks version 8 and accepts versions 3 to 8"),
                std::string::npos)
          << text;
    }
  }
  const auto [start_a, start_b] = starts_with_a_of_version(spec, 3);
  EXPECT_TRUE(start_a.versions.empty());
  EXPECT_EQ(start_b.versions, (std::vector<std::pair<std::string, std::uint64_t>>{
                                  {"a", 3}, {"b", kProtocolVersion}}));
  EXPECT_EQ(start_a.endpoints, start_b.endpoints);
}

// PROTOCOL.md §2.3: a coordinator with a cluster file's digest sends it in the START of
// a federate of version 8 or later (not to one of version 7), and a federate whose own file has
// another digest ends the run, naming it and both digests.
TEST(Coordinator, AFederateWhoseClusterFileDiffersFromTheCoordinatorsEndsTheRunNamingIt) {
  FederationSpec spec = parse_federation_spec(kChain);
  spec.file_digest = "00000000000000aa";
  {
    const auto [start_a, start_b] = starts_with_a_of_version(spec, 7);
    EXPECT_TRUE(start_a.file_digest.empty());
    EXPECT_EQ(start_b.file_digest, "00000000000000aa");
  }
  RunningCoordinator running(spec);
  zmq::context_t context;
  FederateClient a(context, options_for(spec, "a", running.endpoint()));
  FederateOptions other = options_for(spec, "b", running.endpoint());
  other.file_digest = "00000000000000bb";
  FederateClient b(context, other);
  // a reads START, and may read in the same poll the FAILED that b's report brought about: its
  // join then throws "the run failed", as it should. Either way it took part; b is what is tested.
  auto joined_a = std::async(std::launch::async, [&] {
    try {
      (void)a.join(10s);
    } catch (const FederationError& e) {
      EXPECT_NE(std::string(e.what()).find("federate 'a': the run failed: federate 'b' failed"),
                std::string::npos)
          << e.what();
    }
  });
  try {
    (void)b.join(10s);
    FAIL() << "b joined with another file";
  } catch (const FederationError& e) {
    EXPECT_EQ(std::string(e.what()),
              "federate 'b': its cluster file (digest 00000000000000bb) is not the "
              "coordinator's (digest 00000000000000aa): run the same file on every host");
  }
  joined_a.get();
  const auto result = running.result(10s);
  ASSERT_TRUE(result.has_value()) << "the coordinator hangs after a federate with another file";
  EXPECT_FALSE(result->ok);
  EXPECT_EQ(result->failed, std::vector<std::string>{"b"});
  EXPECT_NE(result->error.find("federate 'b' failed: its cluster file (digest 00000000000000bb) "
                               "is not the coordinator's (digest 00000000000000aa)"),
            std::string::npos)
      << result->error;
}

/// kChain's `a` as a raw DEALER joining with `version` (it sends no heartbeats: a long timeout)
/// and `b` as a FederateClient of the current version, both joined to one coordinator.
struct RawAAndB {
  explicit RawAAndB(std::uint32_t version)
      : spec(with_heartbeat_timeout(parse_federation_spec(kChain), 10s)),
        running(spec),
        b(context, options_for(spec, "b", running.endpoint())),
        a(raw_dealer(context, "a", running.endpoint())) {
    auto joined_b = std::async(std::launch::async, [&] { return b.join(10s); });
    ControlMessage join;
    join.type = ControlType::kJoin;
    join.version = version;
    join.federate = "a";
    join.downstreams = {"b"};
    join.endpoints = {{"a", "tcp://127.0.0.1:1"}};
    a.send(zmq::buffer(encode_control(join)), zmq::send_flags::none);
    const std::optional<ControlMessage> start = next_message(a);
    EXPECT_TRUE(start && start->type == ControlType::kStart);
    joined_b.get();
  }
  static FederationSpec with_heartbeat_timeout(FederationSpec spec,
                                               std::chrono::milliseconds timeout) {
    spec.heartbeat_timeout = timeout;
    return spec;
  }
  FederationSpec spec;
  RunningCoordinator running;
  zmq::context_t context;
  FederateClient b;
  zmq::socket_t a;
};

/// The FLOORs federate `a` (a raw DEALER joining with `version`) gets while `b` (a FederateClient
/// of the current version) waits for one: LTCs (25, 0) from a and (7, 0) from b, then (30, 0)
/// and (20, 0) (in whichever order the coordinator reads the second pair, the earliest LTC is 7
/// or 20). Returns a's FLOOR tags; `b_floors` gets the floors b saw, in order.
std::vector<WireTag> floors_to(std::uint32_t version, std::vector<WireTag>& b_floors) {
  RawAAndB federates(version);
  FederateClient& b = federates.b;
  zmq::socket_t& a = federates.a;
  std::vector<WireTag> a_floors;
  const auto wait_for_b = [&](const WireTag& floor) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;  // a guard against hangs
    while (b.cutoff_floor() != floor && std::chrono::steady_clock::now() < deadline) {
      (void)b.poll(20ms);
    }
    b_floors.push_back(b.cutoff_floor());
  };
  const auto completed = [&](const WireTag& tag_a, const WireTag& tag_b) {
    a.send(zmq::buffer(encode_control(make_tag_message(ControlType::kCompleted, tag_a))),
           zmq::send_flags::none);
    b.send_completed(tag_b);
  };
  completed(WireTag(25, 0), WireTag(7, 0));
  wait_for_b(WireTag(7, 0));
  completed(WireTag(30, 0), WireTag(20, 0));
  wait_for_b(WireTag(20, 0));
  // Whatever a was sent came before b's second FLOOR: the coordinator sends each to both at once.
  a.set(zmq::sockopt::rcvtimeo, 200);
  for (std::optional<ControlMessage> m = next_message(a); m; m = next_message(a)) {
    if (m->type == ControlType::kFloor) a_floors.push_back(m->tag);
  }
  return a_floors;
}

// PROTOCOL.md §5.1: FLOOR carries the earliest LTC of the federates, goes only to federates of
// version 5 or later, and only rises.
TEST(Coordinator, SendsTheEarliestCompletedTagAsFloorToFederatesThatReadIt) {
  std::vector<WireTag> b_floors;
  EXPECT_EQ(floors_to(kProtocolVersion, b_floors),
            (std::vector<WireTag>{WireTag(7, 0), WireTag(20, 0)}));
  EXPECT_EQ(b_floors, (std::vector<WireTag>{WireTag(7, 0), WireTag(20, 0)}));
  b_floors.clear();
  EXPECT_EQ(floors_to(kFirstFloorVersion - 1, b_floors), std::vector<WireTag>{});
  EXPECT_EQ(b_floors, (std::vector<WireTag>{WireTag(7, 0), WireTag(20, 0)}));
}

/// How many REPORT_REQUESTs federate `a` (a raw DEALER joining with `version`, whose NET says it
/// may defer its reports) gets while `b` waits for a grant that depends on it, through a stop
/// negotiation that `b` starts after its NET and a second after STOP_GRANTED. The coordinator asks
/// for reports once it has handled a batch of frames: when b's NET and STOP_REQUEST reach it
/// before a's NET, a's NET and STOP_REPLY can share a batch, and the request then follows
/// STOP_GRANTED (seen once with other tests loading the machine).
int report_requests_to(std::uint32_t version) {
  RawAAndB federates(version);
  FederateClient& b = federates.b;
  zmq::socket_t& a = federates.a;
  ControlMessage net = make_tag_message(ControlType::kNextEvent, WireTag(5, 0));
  net.reporting = Reporting::kMayDefer;
  a.send(zmq::buffer(encode_control(net)), zmq::send_flags::none);
  b.send_next_event(WireTag(100, 0));  // b waits: a's bound keeps its grant below 100
  b.send_stop_request(WireTag(1000, 0));
  int requests = 0;
  bool stop_granted = false;
  for (std::optional<ControlMessage> m = next_message(a); m; m = next_message(a)) {
    if (m->type == ControlType::kReportRequest) ++requests;
    if (m->type == ControlType::kStopRequest) {
      a.send(zmq::buffer(encode_control(make_tag_message(ControlType::kStopReply, m->tag))),
             zmq::send_flags::none);
    }
    if (m->type == ControlType::kStopGranted) {
      stop_granted = true;
      break;
    }
  }
  if (!stop_granted) {
    ADD_FAILURE() << "no STOP_GRANTED";
    return requests;
  }
  // A request from the batch that held a's STOP_REPLY follows STOP_GRANTED within microseconds.
  a.set(zmq::sockopt::rcvtimeo, 1000);
  for (std::optional<ControlMessage> m = next_message(a); m; m = next_message(a)) {
    if (m->type == ControlType::kReportRequest) ++requests;
  }
  return requests;
}

// PROTOCOL.md §3.9: a federate that may defer, of either accepted version, is asked for its report
// when another federate waits for its grant, once.
TEST(Coordinator, AsksAFederateThatMayDeferForItsReportWhenAnotherWaitsForIt) {
  EXPECT_EQ(report_requests_to(kOldestProtocolVersion), 1);
  EXPECT_EQ(report_requests_to(kProtocolVersion), 1);
}

/// The types of what federate `a` (a raw DEALER joining with `version`) reads after its RESIGN,
/// until nothing has come for 500 ms; then `b` resigns too, and the run ends well.
std::vector<ControlType> read_after_resign(std::uint32_t version) {
  RawAAndB federates(version);
  zmq::socket_t& a = federates.a;
  ControlMessage resign;
  resign.type = ControlType::kResign;
  a.send(zmq::buffer(encode_control(resign)), zmq::send_flags::none);
  a.set(zmq::sockopt::rcvtimeo, 500);
  std::vector<ControlType> types;
  for (std::optional<ControlMessage> m = next_message(a); m; m = next_message(a)) {
    types.push_back(m->type);
  }
  federates.b.resign();  // of the current version: it returns on its own FINISHED
  const std::optional<CoordinatorResult> result = federates.running.result(10s);
  EXPECT_TRUE(result && result->ok) << (result ? result->error : "no result within 10 s");
  return types;
}

// PROTOCOL.md §5 rule 6: a federate of version 7 or later is answered FINISHED once its RESIGN
// is read, and is sent nothing after it; one of an older version is sent no FINISHED.
TEST(Coordinator, AnswersARESIGNWithFinishedToFederatesOfVersion7AndLater) {
  const std::vector<ControlType> current = read_after_resign(kProtocolVersion);
  ASSERT_FALSE(current.empty()) << "nothing after the RESIGN";
  EXPECT_EQ(current.back(), ControlType::kFinished);
  EXPECT_EQ(std::count(current.begin(), current.end(), ControlType::kFinished), 1);
  const std::vector<ControlType> older = read_after_resign(kFirstFinishedVersion - 1);
  EXPECT_EQ(std::count(older.begin(), older.end(), ControlType::kFinished), 0);
}

TEST(Coordinator, WrongCurveKeyIsRefusedAndTheRightOneAdmitted) {
  const std::filesystem::path keys = chain_keys("tagflow-coordinator-keys");
  transport::write_key_pair(keys / "intruder", "a", transport::generate_curve_key_pair());
  FederationSpec spec = parse_federation_spec(kChain);
  spec.keys_dir = keys.string();
  spec.heartbeat_timeout = 5s;  // about joins, not heartbeats: room for a slow (sanitized) build
  RunningCoordinator running(spec);
  zmq::context_t context;
  {
    FederateOptions wrong = options_for(spec, "a", running.endpoint());
    wrong.keys_dir = (keys / "intruder").string();
    std::filesystem::copy_file(keys / "coordinator.pub", keys / "intruder" / "coordinator.pub");
    FederateClient intruder(context, wrong);
    EXPECT_THROW(intruder.join(1s), FederationError);
  }
  EXPECT_GE(running.coordinator().refused_handshakes(), 1U);
  expect_both_join(spec, running.endpoint(), context);
  std::filesystem::remove_all(keys);
}

// Handshakes that fail before ZAP sees a key are counted as refused too: a client without CURVE,
// and one whose CURVE hello is boxed for another server key.
TEST(Coordinator, HandshakesThatFailBeforeTheKeyCheckAreCountedAsRefused) {
  const std::filesystem::path keys = chain_keys("tagflow-coordinator-failed-handshakes");
  FederationSpec spec = parse_federation_spec(kChain);
  spec.keys_dir = keys.string();
  spec.heartbeat_timeout = 5s;
  RunningCoordinator running(spec);
  zmq::context_t context;
  const auto knock = [&](bool curve) {
    const std::uint64_t before = running.coordinator().refused_handshakes();
    const testing::FailedHandshake stranger(context, running.endpoint(), curve);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (running.coordinator().refused_handshakes() == before &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
    return running.coordinator().refused_handshakes() > before;
  };
  EXPECT_TRUE(knock(false)) << "a client without CURVE";
  EXPECT_TRUE(knock(true)) << "a client with another server key";
  expect_both_join(spec, running.endpoint(), context);
  std::filesystem::remove_all(keys);
}

}  // namespace
}  // namespace tagflow::coordinator
