// Text from outside the process (a peer's federate id, a reason it sent, a file's bytes) made
// safe for a log line, and a per-peer budget of log lines.
//
// escape_for_log() keeps printable ASCII and writes every other byte as \xNN (a backslash as \\),
// so a peer cannot end a line, forge the next one, move the cursor or hide text; it truncates
// long text and says how much was cut. Pure; thread-safe.
//
// LogRateLimit allows at most N events per second (a window opens at the first event after the
// previous window closed) and counts the rest. Not thread-safe: guard it with the caller's lock.
//
// PeerLogBudget decides whether an event about a peer is logged: the first kLinesPerPeer per
// peer are, later ones are only counted (suppressed()). At most kMaxPeers peers are tracked by
// name; events of further peers share one "(other)" entry whose first event is logged, so the
// number of log lines any set of peers can cause is bounded (kMaxPeers + 1) * kLinesPerPeer,
// and so is the memory; and at most kLinesPerSecond lines are logged in any second, whatever
// the number of peers (a line over that rate is counted as suppressed, not logged later). Not
// thread-safe: one owner thread (the coordinator's loop).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <string>
#include <string_view>

namespace tagflow {

/// A JSON parser's error message (nlohmann's) without the library's bracketed code
/// ("[json.exception.parse_error.101] "), so that it reads as the parser's words.
[[nodiscard]] std::string json_error_text(const std::exception& e);

/// `text` with every byte outside printable ASCII written as \xNN and a backslash as \\; text
/// longer than `max_bytes` is cut there and followed by "...(N more bytes)".
[[nodiscard]] std::string escape_for_log(std::string_view text, std::size_t max_bytes = 128);

/// `text` on one line: ASCII control characters written as \n, \t, \r or \xNN; everything else,
/// UTF-8 included, as it is. For one-line messages that quote what a user typed (a file name with
/// a newline in it would otherwise split the message).
[[nodiscard]] std::string single_line(std::string_view text);

/// A connection's peer for a log line, from ZeroMQ's Peer-Address property (nullptr: none): a TCP
/// peer's numeric address, escaped; a Unix-socket peer's "localhost:UID:GID:PID" (SO_PEERCRED),
/// which is no address, as "a Unix socket (pid PID, uid UID)"; none as "(unknown address)".
[[nodiscard]] std::string peer_address_for_log(const char* property);

class LogRateLimit {
 public:
  using Clock = std::chrono::steady_clock;

  explicit LogRateLimit(std::uint64_t per_second) : per_second_(per_second) {}
  /// Counts one event at `now`; true when fewer than per_second were allowed in its window.
  [[nodiscard]] bool allow(Clock::time_point now = Clock::now());
  /// Events refused so far.
  [[nodiscard]] std::uint64_t suppressed() const { return suppressed_; }

 private:
  std::uint64_t per_second_;
  bool open_ = false;
  Clock::time_point window_start_{};
  std::uint64_t in_window_ = 0;
  std::uint64_t suppressed_ = 0;
};

class PeerLogBudget {
 public:
  static constexpr std::size_t kMaxPeers = 256;
  static constexpr std::uint64_t kLinesPerPeer = 1;
  static constexpr std::uint64_t kLinesPerSecond = 20;

  /// Counts one event about `peer` at `now`; true when it should be logged.
  [[nodiscard]] bool allow(const std::string& peer,
                           LogRateLimit::Clock::time_point now = LogRateLimit::Clock::now());
  /// Events counted but not logged, over every peer.
  [[nodiscard]] std::uint64_t suppressed() const { return suppressed_; }
  /// Events counted for `peer` (or for "(other)" once the table is full).
  [[nodiscard]] std::uint64_t events(const std::string& peer) const;

 private:
  std::map<std::string, std::uint64_t> events_;
  LogRateLimit per_second_{kLinesPerSecond};
  std::uint64_t suppressed_ = 0;
};

}  // namespace tagflow
