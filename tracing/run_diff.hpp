// diff_runs(): where two traced runs of a file (recorded with `trace: {digests: true}`) first
// sent something different (tracing/README.md, "tagflow diff").
//
// Each run's LOG_DIR/trace/FEDERATE.values.tsv lists every data message the federate sent. Per
// sender, both runs' messages are put in (arrival tag, receiver, port) order and walked side by
// side; the first where the hashes differ, or that one run sent and the other did not, is that
// sender's first difference, and the run's is the one with the smallest (tag, sender, receiver,
// port). A run that went on after the other ended is not a difference for that: messages past
// the shorter run's last tag are counted, not compared. The difference is described with both
// values decoded when both runs kept their bytes (nodes/message_text.hpp; a payload whose kept
// bytes do not have the logged hash is named as such), and with the reactions that sent it (the
// sender's at the latest tag at or before the arrival tag) when the sending run's process trace
// holds them.
// Errors: TraceError when a run has no value logs (not recorded with digests: the message names
// the files it looked for and the option), or a log cannot be read. Thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/tag.hpp"

namespace tagflow::tracing {

struct SentValue {
  Tag tag;
  std::string receiver;
  std::uint32_t port = 0;
  std::uint64_t bytes = 0;
  std::string hash;
  std::optional<std::uint64_t> offset;  // in the .values.bin, when kept
};

struct RunDifference {
  Tag tag;
  std::string sender, receiver;
  std::uint32_t port = 0;
  std::optional<SentValue> a, b;  // a side without it did not send it
  std::string a_value, b_value;   // decoded, or why not
  std::string difference;         // the first field that differs, or why it cannot say
  /// The sender's reactions at the tag that sent it: that of its latest reaction begun before the
  /// send (the trace records each send with the arrival tag), or, when the trace no longer holds
  /// the send, at the latest tag at or before the arrival tag; from the process trace of the run
  /// that sent it (run A when both did); empty when it does not hold them.
  std::vector<std::string> reactions;
  Tag reactions_tag = Tag::never();
  bool reactions_from_send = false;  // found by the send's trace event
  /// The other senders whose first difference is at the same tag, each by the connection of that
  /// difference ("sender → receiver port"), in (sender, receiver, port) order: within one tag the
  /// difference named is the first by name, not by cause (a replay's batch and the samplers'
  /// transitions it was drawn from).
  std::vector<std::string> also_at_tag;
};

struct DiffResult {
  std::uint64_t matched = 0;  // messages equal in both runs before the difference (or in all)
  std::uint64_t a_messages = 0, b_messages = 0;
  Tag first_tag = Tag::forever();                    // run A's first tag, for relative times
  Tag a_last = Tag::never(), b_last = Tag::never();  // each run's last arrival tag
  /// Where each run ends: its cutoff (from its federates' result files, LOG_DIR/FEDERATE.json),
  /// else its last arrival tag. Runs that end at different tags are compared up to the earlier
  /// end: messages arriving after it, in either run, are not compared.
  Tag a_end = Tag::never(), b_end = Tag::never();
  /// Messages of the run that ends later arriving after the other's end (not compared).
  std::uint64_t past_shorter = 0;
  std::optional<RunDifference> difference;

  /// The result as text for people (what `tagflow diff` prints).
  [[nodiscard]] std::string text() const;
};

[[nodiscard]] DiffResult diff_runs(const std::string& run_a, const std::string& run_b);

/// A federate's value log (LOG_DIR/trace/FEDERATE.values.tsv); throws TraceError naming the file
/// and the line.
[[nodiscard]] std::vector<SentValue> read_value_log(const std::string& path);

}  // namespace tagflow::tracing
