#include "common/state_stream.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/fnv1a.hpp"

namespace tagflow {
namespace {

constexpr std::string_view kMagic = "TFSTATE1";
constexpr std::size_t kHeader = 8 + 8;
constexpr std::size_t kTrailer = 8;

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::uint64_t get_u64(const std::string& in, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  }
  return v;
}

}  // namespace

void StateWriter::fixed(std::uint64_t v, int width) {
  for (int i = 0; i < width; ++i) bytes_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void StateWriter::f64(double v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  u64(bits);
}

void StateWriter::bytes(std::string_view v) {
  u64(v.size());
  bytes_.append(v.data(), v.size());
}

void StateWriter::generator(const std::mt19937_64& rng) {
  std::ostringstream text;
  text << rng;
  string(text.str());
}

std::uint64_t StateReader::fixed(int width) {
  if (left() < static_cast<std::size_t>(width)) fail("a " + std::to_string(width) + "-byte value");
  std::uint64_t v = 0;
  for (int i = 0; i < width; ++i) {
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(data_[at_ + i])) << (8 * i);
  }
  at_ += width;
  return v;
}

std::uint8_t StateReader::u8() { return static_cast<std::uint8_t>(fixed(1)); }

double StateReader::f64() {
  const std::uint64_t bits = u64();
  double v = 0;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

std::string StateReader::bytes() {
  const std::uint64_t n = u64();
  if (n > left()) fail("a byte string of " + std::to_string(n) + " bytes");
  std::string v(data_.substr(at_, n));
  at_ += n;
  return v;
}

void StateReader::generator(std::mt19937_64& rng) {
  std::istringstream text(string());
  text >> rng;
  if (!text) fail("a generator state");
}

void StateReader::expect_end() const {
  if (left() != 0) {
    throw StateError(what_ + ": " + std::to_string(left()) + " unread bytes at the end");
  }
}

void StateReader::fail(const std::string& what) const {
  throw StateError(what_ + ": truncated or corrupt: cannot read " + what + " at byte " +
                   std::to_string(at_) + " of " + std::to_string(data_.size()));
}

namespace {

/// `path` opened for reading, a regular file (O_NONBLOCK: opening a pipe does not wait for a
/// writer), and its size; StateError naming it otherwise.
int open_regular(const std::string& path, std::uint64_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw StateError(path + ": cannot open: " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw StateError(path + ": not a regular file (a directory, a pipe or a device)");
  }
  size = info.st_size > 0 ? static_cast<std::uint64_t>(info.st_size) : 0;
  return fd;
}

}  // namespace

std::uint64_t checksum_of_file(const std::string& path, std::uint64_t size) {
  std::uint64_t have = 0;
  const int fd = open_regular(path, have);
  if (have != size) {
    ::close(fd);
    throw StateError(path + ": truncated: " + std::to_string(have) + " bytes, " +
                     std::to_string(size) + " expected");
  }
  Fnv1aWide hash;
  std::string piece(std::size_t{1} << 20, '\0');
  std::uint64_t read = 0;
  while (read < size) {
    const ssize_t n = ::read(fd, piece.data(), piece.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      ::close(fd);
      throw StateError(path + ": cannot read: " + std::strerror(error));
    }
    hash.add(piece.data(), static_cast<std::size_t>(n));
    read += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  if (read != size) throw StateError(path + ": changed while it was read");
  return hash.value();
}

std::string read_whole_file(const std::string& path, std::uint64_t max_bytes) {
  std::uint64_t size = 0;
  const int fd = open_regular(path, size);
  if (size > max_bytes) {
    ::close(fd);
    throw StateError(path + ": " + std::to_string(size) + " bytes, more than the " +
                     std::to_string(max_bytes) + " it may hold");
  }
  const auto expected = static_cast<std::size_t>(size);
  // One byte more than the size: the end is then seen without growing the string. A file that
  // grew meanwhile is read to its end all the same.
  std::string all(expected + 1, '\0');
  std::size_t have = 0;
  for (;;) {
    if (have == all.size()) all.resize(all.size() * 2);
    const ssize_t n = ::read(fd, all.data() + have, all.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw StateError(path + ": cannot read: " + std::strerror(error));
    }
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  ::close(fd);
  all.resize(have);
  return all;
}

std::uint64_t write_state_file(const std::string& path, std::string_view payload) {
  const std::uint64_t checksum = fnv1a64_wide(payload.data(), payload.size());
  std::string head(kMagic);
  put_u64(head, payload.size());
  std::string tail;
  put_u64(tail, checksum);
  try {
    AtomicFile file(path);
    file.write(head);
    file.write(payload);
    file.write(tail);
    file.commit();
  } catch (const AtomicFileError& e) {
    throw StateError(e.what());
  }
  return checksum;
}

std::string read_state_file(const std::string& path, std::uint64_t* checksum,
                            std::uint64_t max_payload) {
  const std::uint64_t framing = kHeader + kTrailer;
  const std::string all = read_whole_file(
      path, max_payload > UINT64_MAX - framing ? UINT64_MAX : max_payload + framing);
  if (all.size() < kHeader + kTrailer || all.compare(0, kMagic.size(), kMagic) != 0) {
    throw StateError(path + ": not a checkpoint part (truncated, or another file)");
  }
  const std::uint64_t size = get_u64(all, kMagic.size());
  if (size != all.size() - kHeader - kTrailer) {
    throw StateError(path + ": truncated: the header counts " + std::to_string(size) +
                     " bytes, the file holds " + std::to_string(all.size() - kHeader - kTrailer));
  }
  const std::uint64_t expected = get_u64(all, kHeader + size);
  const std::uint64_t actual = fnv1a64_wide(all.data() + kHeader, size);
  if (expected != actual) throw StateError(path + ": corrupt (checksum mismatch)");
  if (checksum != nullptr) *checksum = actual;
  return all.substr(kHeader, size);
}

}  // namespace tagflow
