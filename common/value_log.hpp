// ValueLog: every data message one federate sends, as a line of text (arrival tag, receiver,
// port, size, hash) and, up to a budget, its bytes: what `tagflow diff` compares between two runs
// (tracing/README.md gives both files' format).
//
// Written as the run goes (buffered; flush() or the destructor write the rest), so a run that
// dies still leaves what it sent. The text file grows by one line (about 60 bytes) per message;
// a message's bytes are kept when they fit in what is left of `max_value_bytes` (a later, smaller
// one may still be kept), and a line whose bytes were not kept says `-`.
// Errors: std::runtime_error naming the file when it cannot be opened or written.
// Thread-safety: one thread (the federate's socket owner).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "common/tag.hpp"

namespace tagflow {

class ValueLog {
 public:
  /// Opens (truncates) `path_prefix` + ".values.tsv" and ".values.bin".
  ValueLog(const std::string& path_prefix, std::uint64_t max_value_bytes);
  ~ValueLog();
  ValueLog(const ValueLog&) = delete;
  ValueLog& operator=(const ValueLog&) = delete;

  /// One message sent to `receiver`'s `port`, arriving at `tag` (`size` 0: an ABSENT).
  void record(const Tag& tag, const std::string& receiver, std::uint32_t port, const void* data,
              std::size_t size);
  void flush();
  [[nodiscard]] std::uint64_t messages() const { return messages_; }
  [[nodiscard]] std::uint64_t kept_bytes() const { return kept_; }

 private:
  std::string tsv_path_;
  std::FILE* tsv_ = nullptr;
  std::FILE* bin_ = nullptr;
  std::uint64_t max_bytes_;
  std::uint64_t kept_ = 0;
  std::uint64_t messages_ = 0;
};

}  // namespace tagflow
