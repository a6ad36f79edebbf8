#include "rl/learning/learner_checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/fnv1a.hpp"
#include "rl/learning/weights_buffer.hpp"

namespace tagflow::learning {
namespace {

constexpr std::uint32_t kCheckpointMagic = 0x4b434654;  // "TFCK" in memory order
constexpr std::uint32_t kCheckpointFormat = 1;

template <class T>
void append(std::string* out, T value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(T));
}

void append_floats(std::string* out, const std::vector<float>& values) {
  out->append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

class Reader {
 public:
  Reader(const std::string& bytes, const std::string& path) : bytes_(bytes), path_(path) {}

  template <class T>
  T read() {
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }

  std::vector<float> read_floats(std::uint64_t count) {
    std::vector<float> values(count);
    if (count > 0) std::memcpy(values.data(), take(count * sizeof(float)), count * sizeof(float));
    return values;
  }

  std::string read_string(std::uint64_t size) { return std::string(take(size), size); }

  const char* take(std::uint64_t size) {
    if (size > bytes_.size() - offset_) fail("truncated");
    const char* at = bytes_.data() + offset_;
    offset_ += size;
    return at;
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw LearnerStateError("checkpoint " + path_ + ": " + why);
  }

  [[nodiscard]] std::size_t offset() const { return offset_; }

 private:
  const std::string& bytes_;
  const std::string& path_;
  std::size_t offset_ = 0;
};

std::uint64_t bytes_checksum(const std::string& bytes, std::size_t size) {
  // weights_checksum hashes whole floats; hash the tail bytes separately so any size works.
  const std::size_t words = size / sizeof(float);
  const std::uint64_t hash = weights_checksum(reinterpret_cast<const float*>(bytes.data()), words);
  const std::size_t head = words * sizeof(float);
  return fnv1a64(bytes.data() + head, size - head, hash);
}

[[noreturn]] void fail_io(const std::string& what, const std::string& path) {
  throw LearnerStateError(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

void save_checkpoint(const LearnerState& state, const std::string& path) {
  const std::uint64_t count = state.online.size();
  if (state.target.size() != count || state.adam_m.size() != count ||
      state.adam_v.size() != count) {
    throw LearnerStateError("checkpoint " + path + ": state vectors differ in length");
  }
  std::string bytes;
  bytes.reserve(64 + state.network.size() + 4 * count * sizeof(float));
  append(&bytes, kCheckpointMagic);
  append(&bytes, kCheckpointFormat);
  append(&bytes, static_cast<std::int64_t>(state.updates));
  append(&bytes, static_cast<std::int64_t>(state.adam_step));
  append(&bytes, count);
  append(&bytes, static_cast<std::uint64_t>(state.network.size()));
  bytes += state.network;
  append_floats(&bytes, state.online);
  append_floats(&bytes, state.target);
  append_floats(&bytes, state.adam_m);
  append_floats(&bytes, state.adam_v);
  append(&bytes, bytes_checksum(bytes, bytes.size()));
  try {
    write_file_atomically(path, bytes);
  } catch (const AtomicFileError& e) {
    throw LearnerStateError(e.what());
  }
}

LearnerState load_checkpoint(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail_io("cannot open", path);
  std::ostringstream buffer;
  buffer << file.rdbuf();
  const std::string bytes = buffer.str();
  Reader reader(bytes, path);
  if (bytes.size() < 8 + sizeof(std::uint64_t)) reader.fail("truncated");
  if (reader.read<std::uint32_t>() != kCheckpointMagic) reader.fail("not a tagflow checkpoint");
  if (reader.read<std::uint32_t>() != kCheckpointFormat) reader.fail("unknown format");
  const std::size_t body = bytes.size() - sizeof(std::uint64_t);
  std::uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + body, sizeof(stored));
  if (stored != bytes_checksum(bytes, body)) reader.fail("checksum mismatch (corrupt file)");
  LearnerState state;
  state.updates = reader.read<std::int64_t>();
  state.adam_step = reader.read<std::int64_t>();
  const auto count = reader.read<std::uint64_t>();
  const auto name_size = reader.read<std::uint64_t>();
  if (count > body / sizeof(float) || name_size > body) reader.fail("sizes out of range");
  state.network = reader.read_string(name_size);
  state.online = reader.read_floats(count);
  state.target = reader.read_floats(count);
  state.adam_m = reader.read_floats(count);
  state.adam_v = reader.read_floats(count);
  if (reader.offset() != body) reader.fail("unexpected trailing bytes");
  return state;
}

}  // namespace tagflow::learning
