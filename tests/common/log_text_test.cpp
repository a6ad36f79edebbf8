// Tests of common/log_text.hpp: outside text cannot break or forge a log line, and a peer's log
// lines are bounded.
#include "common/log_text.hpp"

#include <chrono>
#include <string>

#include <gtest/gtest.h>

namespace tagflow {
namespace {

TEST(EscapeForLog, KeepsPrintableTextAsItIs) {
  EXPECT_EQ(escape_for_log("sampler-0 (ok) [x]"), "sampler-0 (ok) [x]");
}

TEST(EscapeForLog, WritesNewlinesControlBytesAndNonAsciiAsHex) {
  const std::string forged = "x\n[info] coordinator: every federate resigned\r\x1b[2K\x7f\xff";
  const std::string escaped = escape_for_log(forged);
  EXPECT_EQ(escaped.find('\n'), std::string::npos);
  EXPECT_EQ(escaped.find('\r'), std::string::npos);
  EXPECT_EQ(escaped, "x\\x0a[info] coordinator: every federate resigned\\x0d\\x1b[2K\\x7f\\xff");
  EXPECT_EQ(escape_for_log(std::string("a\0b", 3)), "a\\x00b");
}

TEST(EscapeForLog, EscapesTheBackslashSoAnEscapeCannotBeForged) {
  EXPECT_EQ(escape_for_log("a\\x0ab"), "a\\\\x0ab");
}

TEST(EscapeForLog, CutsLongTextAndSaysHowMuchWasCut) {
  EXPECT_EQ(escape_for_log(std::string(1000, 'a'), 4), "aaaa...(996 more bytes)");
}

TEST(SingleLine, WritesControlCharactersAsEscapesAndKeepsTheRest) {
  EXPECT_EQ(single_line("runs/a b.yaml"), "runs/a b.yaml");
  EXPECT_EQ(single_line("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(single_line(std::string("x\0y\x1b\x7f", 5)), "x\\x00y\\x1b\\x7f");
  EXPECT_EQ(single_line("caf\xc3\xa9/\\"), "caf\xc3\xa9/\\");  // UTF-8 and backslashes kept
}

TEST(PeerLogBudget, LogsAPeersFirstEventAndCountsTheRest) {
  PeerLogBudget budget;
  EXPECT_TRUE(budget.allow("ghost"));
  EXPECT_FALSE(budget.allow("ghost"));
  EXPECT_FALSE(budget.allow("ghost"));
  EXPECT_TRUE(budget.allow("other-ghost"));
  EXPECT_EQ(budget.events("ghost"), 3U);
  EXPECT_EQ(budget.suppressed(), 2U);
}

TEST(PeerLogBudget, ManyPeersShareOneEntryOnceTheTableIsFull) {
  PeerLogBudget budget;
  std::size_t logged = 0;
  // One event a second, so the per-second limit never applies.
  const auto start = LogRateLimit::Clock::now();
  for (int i = 0; i < 5000; ++i) {
    logged += budget.allow("peer-" + std::to_string(i), start + std::chrono::seconds(i)) ? 1 : 0;
  }
  EXPECT_EQ(logged, PeerLogBudget::kMaxPeers + 1);  // one line for all the peers beyond it
  EXPECT_EQ(budget.suppressed(), 5000 - logged);
  EXPECT_EQ(budget.events("peer-4999"), 5000 - PeerLogBudget::kMaxPeers);
}

TEST(PeerLogBudget, LogsAtMostItsLinesPerSecondWhateverThePeers) {
  PeerLogBudget budget;
  const auto start = LogRateLimit::Clock::now();
  std::uint64_t logged = 0;
  for (int i = 0; i < 200; ++i) {  // 200 new peers within 0.02 s
    logged +=
        budget.allow("joiner-" + std::to_string(i), start + std::chrono::microseconds(i * 100)) ? 1
                                                                                                : 0;
  }
  EXPECT_EQ(logged, PeerLogBudget::kLinesPerSecond);
  EXPECT_EQ(budget.suppressed(), 200 - logged);
  // A second later new peers are logged again.
  EXPECT_TRUE(budget.allow("late", start + std::chrono::seconds(2)));
}

TEST(LogRateLimit, OpensAWindowAtTheFirstEventAfterTheLastOneClosed) {
  LogRateLimit limit(2);
  const auto t = LogRateLimit::Clock::now();
  EXPECT_TRUE(limit.allow(t));
  EXPECT_TRUE(limit.allow(t + std::chrono::milliseconds(900)));
  EXPECT_FALSE(limit.allow(t + std::chrono::milliseconds(999)));
  EXPECT_TRUE(limit.allow(t + std::chrono::milliseconds(1000)));
  EXPECT_TRUE(limit.allow(t + std::chrono::milliseconds(1500)));
  EXPECT_FALSE(limit.allow(t + std::chrono::milliseconds(1999)));
  EXPECT_EQ(limit.suppressed(), 2U);
}

// ZeroMQ's Peer-Address: a TCP peer's numeric address as it is, a Unix-socket peer's
// credentials (SO_PEERCRED) said as such, anything else escaped.
TEST(PeerAddressForLog, SaysAUnixSocketPeerByItsProcessAndKeepsATcpAddress) {
  EXPECT_EQ(peer_address_for_log("10.0.0.2"), "10.0.0.2");
  EXPECT_EQ(peer_address_for_log("fe80::1%2"), "fe80::1%2");
  EXPECT_EQ(peer_address_for_log("localhost:0:0:21448"), "a Unix socket (pid 21448, uid 0)");
  EXPECT_EQ(peer_address_for_log("localhost:1000:100:7"), "a Unix socket (pid 7, uid 1000)");
  EXPECT_EQ(peer_address_for_log(nullptr), "(unknown address)");
  EXPECT_EQ(peer_address_for_log("localhost:0:0"), "localhost:0:0");
  EXPECT_EQ(peer_address_for_log("localhost:a:0:1"), "localhost:a:0:1");
  EXPECT_EQ(peer_address_for_log("localhost:0::1"), "localhost:0::1");
  EXPECT_EQ(peer_address_for_log("localhost:0:0:1\n"), "localhost:0:0:1\\x0a");
}

}  // namespace
}  // namespace tagflow
