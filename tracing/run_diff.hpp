// diff_runs(): where two traced runs of a file (recorded with `trace: {digests: true}`) first
// sent something different (tracing/README.md, "tagflow diff").
//
// Each run's LOG_DIR/trace/FEDERATE.values.tsv lists every data message the federate sent. Per
// sender, both runs' messages are put in (arrival tag, receiver, port) order and walked side by
// side; the first where the hashes differ, or that one run sent and the other did not, is that
// sender's first difference, and the run's is the one with the smallest (tag, sender, receiver,
// port). It is described with both values decoded when both runs kept their bytes, and with the
// reactions that sent it (the sender's at the latest tag at or before the arrival tag) when the
// sender's process trace holds them.
// Errors: TraceError when a run has no value logs (not recorded with digests), naming the option,
// or a log cannot be read. Thread-safety: reentrant.
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
  /// The sender's reactions at the latest tag at or before the arrival tag (the sending tag),
  /// from run A's process trace; empty when it does not hold them.
  std::vector<std::string> reactions;
  Tag reactions_tag = Tag::never();
};

struct DiffResult {
  std::uint64_t matched = 0;  // messages equal in both runs before the difference (or in all)
  std::uint64_t a_messages = 0, b_messages = 0;
  Tag first_tag = Tag::forever();  // run A's first tag, for relative times
  std::optional<RunDifference> difference;

  /// The result as text for people (what `tagflow diff` prints).
  [[nodiscard]] std::string text() const;
};

[[nodiscard]] DiffResult diff_runs(const std::string& run_a, const std::string& run_b);

/// A run's value log of `federate` (LOG_DIR/trace/FEDERATE.values.tsv); throws TraceError.
[[nodiscard]] std::vector<SentValue> read_value_log(const std::string& path);

}  // namespace tagflow::tracing
