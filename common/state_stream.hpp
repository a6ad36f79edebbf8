// StateWriter / StateReader: a process's state as bytes, for checkpoints (docs/recovery.md).
//
// Little-endian fixed-width integers and IEEE doubles, byte strings with a u64 length, vectors
// with a u64 count. No field names and no schema: a reader reads exactly what the writer wrote,
// in the same order, so a change of layout bumps the file's version. A generator
// (std::mt19937_64) is written as its standard text form.
//
// State files (write_state_file / read_state_file): magic "TFSTATE1", the payload's length (u64),
// the payload, then fnv1a64_wide of the payload (u64), written atomically
// (common/atomic_file.hpp). A reader refuses a file that is missing, not a state file, truncated,
// longer than it says, or whose checksum does not match, with StateError naming the file and the
// reason.
//
// Errors: StateError (a std::runtime_error) for reading past the end, a length that exceeds what
// is left, or a bad file. Not thread-safe: one object per thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/atomic_file.hpp"

namespace tagflow {

class StateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class StateWriter {
 public:
  void u8(std::uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) { fixed(v, 4); }
  void u64(std::uint64_t v) { fixed(v, 8); }
  void i64(std::int64_t v) { fixed(static_cast<std::uint64_t>(v), 8); }
  void f64(double v);
  void boolean(bool v) { u8(v ? 1 : 0); }
  void bytes(std::string_view v);
  void string(const std::string& v) { bytes(v); }
  void generator(const std::mt19937_64& rng);
  template <typename T>
  void pod_vector(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>, "pod_vector needs plain values");
    u64(v.size());
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void f64_vector(const std::vector<double>& v) { pod_vector(v); }

  [[nodiscard]] const std::string& data() const { return bytes_; }
  [[nodiscard]] std::string take() { return std::move(bytes_); }

 private:
  void fixed(std::uint64_t v, int width);
  std::string bytes_;
};

class StateReader {
 public:
  /// Reads `data` (not owned: it must outlive the reader); `what` names it in errors.
  StateReader(std::string_view data, std::string what) : data_(data), what_(std::move(what)) {}

  std::uint8_t u8();
  std::uint32_t u32() { return static_cast<std::uint32_t>(fixed(4)); }
  std::uint64_t u64() { return fixed(8); }
  std::int64_t i64() { return static_cast<std::int64_t>(fixed(8)); }
  double f64();
  bool boolean() { return u8() != 0; }
  std::string bytes();
  std::string string() { return bytes(); }
  void generator(std::mt19937_64& rng);
  template <typename T>
  std::vector<T> pod_vector() {
    const std::uint64_t n = u64();
    if (n > left() / sizeof(T)) fail("a vector of " + std::to_string(n) + " values");
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), data_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
    return v;
  }
  std::vector<double> f64_vector() { return pod_vector<double>(); }
  /// Throws unless every byte was read.
  void expect_end() const;
  [[nodiscard]] std::size_t left() const { return data_.size() - at_; }
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::uint64_t fixed(int width);
  std::string_view data_;
  std::size_t at_ = 0;
  std::string what_;
};

/// Where bytes go as they are produced (a file being written): called with each piece in order.
using ByteSink = std::function<void(std::string_view bytes)>;

/// The files a checkpoint part attaches beside itself (a replay table: megabytes to gigabytes),
/// written as the state is saved, never held whole in memory.
class StateAttachments {
 public:
  virtual ~StateAttachments() = default;
  /// Starts the attached file NAME; write its every byte to the returned sink before the replica
  /// changes (they are its state now). `finish`, when set, completes the file later, before it
  /// is synced and renamed into place, on whichever thread writes the part: the file has been
  /// flushed, and it may read it back and overwrite bytes (a checksum footer whose hash is CPU
  /// work the saving thread need not wait for).
  virtual ByteSink add(const std::string& name, std::function<void(AtomicFile&)> finish) = 0;
};

/// A file attached to a checkpoint part, written up to its end but not yet completed: `finish`
/// (if any), then a checksum of the whole file, then its commit, are left to the part's writer
/// (federation/checkpoint_store.hpp).
struct StateAttachment {
  std::string name;
  std::unique_ptr<AtomicFile> file;
  std::function<void(AtomicFile&)> finish;
};

/// Every byte of the file at `path`, read with one allocation (its size first); StateError
/// naming the file and the system's reason when it cannot be opened or read, when it is no
/// regular file (a directory, a pipe, a device: refused before a byte is read, so a pipe cannot
/// block the reader nor a device fill its memory), or when it holds more than `max_bytes`.
[[nodiscard]] std::string read_whole_file(const std::string& path,
                                          std::uint64_t max_bytes = UINT64_MAX);
/// fnv1a64_wide of the file at `path`, read in pieces of 1 MiB (it may be gigabytes), which must
/// be a regular file of exactly `size` bytes (StateError naming it otherwise, before reading).
[[nodiscard]] std::uint64_t checksum_of_file(const std::string& path, std::uint64_t size);
/// Writes `payload` as a state file at `path`, atomically; returns its checksum.
std::uint64_t write_state_file(const std::string& path, std::string_view payload);
/// The payload of the state file at `path`; `checksum` (when given) receives its checksum. A
/// file whose payload would be over `max_payload` bytes is refused before it is read.
[[nodiscard]] std::string read_state_file(const std::string& path,
                                          std::uint64_t* checksum = nullptr,
                                          std::uint64_t max_payload = UINT64_MAX);

}  // namespace tagflow
