#include "nodes/messages.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "common/float_bits.hpp"

namespace tagflow::nodes {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the wire format is little-endian");

// 2: weights versions in transitions and batches; 3: an observation type byte (float32 or uint8
// observation blocks) after the observation size.
constexpr std::uint8_t kFormat = 3;

// Magics: "TFtr", "TFsb", "TFpu", "TFwt", "TFob", "TFac", "TFmo" (or "TFms", sparse), "TFma".
constexpr std::uint32_t magic(char a, char b, char c, char d) {
  return static_cast<std::uint32_t>(static_cast<std::uint8_t>(a)) |
         static_cast<std::uint32_t>(static_cast<std::uint8_t>(b)) << 8U |
         static_cast<std::uint32_t>(static_cast<std::uint8_t>(c)) << 16U |
         static_cast<std::uint32_t>(static_cast<std::uint8_t>(d)) << 24U;
}
constexpr std::uint32_t kTransitions = magic('T', 'F', 't', 'r');
constexpr std::uint32_t kSampleBatch = magic('T', 'F', 's', 'b');
constexpr std::uint32_t kPriorities = magic('T', 'F', 'p', 'u');
constexpr std::uint32_t kWeights = magic('T', 'F', 'w', 't');
constexpr std::uint32_t kObservations = magic('T', 'F', 'o', 'b');
constexpr std::uint32_t kActions = magic('T', 'F', 'a', 'c');
constexpr std::uint32_t kAgentObservations = magic('T', 'F', 'm', 'o');
constexpr std::uint32_t kAgentObservationsSparse = magic('T', 'F', 'm', 's');
constexpr std::uint32_t kAgentActions = magic('T', 'F', 'm', 'a');

// Writes a message's fields in order; the same calls on a Sizer first count its bytes, so that
// write_message() allocates its buffer once instead of growing it field by field (a small
// message's header and blocks took up to seven allocations). The buffer is sized once to the
// room asked for and each field is copied in behind the last one: a field costs a copy, not a
// call into the vector's insert (a tenth of a sparse observation message's encoding).
class Writer {
 public:
  // A message of `type` appended to `bytes` (the messages before it in a list), with room for
  // `size` bytes of it made first (0: as it grows).
  explicit Writer(std::uint32_t type, Bytes bytes = {}, std::size_t size = 0)
      : bytes_(std::move(bytes)), end_(bytes_.size()) {
    const std::size_t need = end_ + size;
    // Geometric, so that a long list of messages appended one by one is not copied each time.
    if (need > bytes_.capacity()) bytes_.reserve(std::max(need, 2 * bytes_.capacity()));
    bytes_.resize(need);
    scalar(type);
    scalar(kFormat);
  }
  template <class T>
  void scalar(T value) {
    std::memcpy(room(sizeof(T)), &value, sizeof(T));
  }
  // A block: u64 element count, then the raw elements.
  template <class T>
  void block(const std::vector<T>& values) {
    scalar(static_cast<std::uint64_t>(values.size()));
    const std::size_t size = values.size() * sizeof(T);
    if (size != 0) std::memcpy(room(size), values.data(), size);  // data() may be null for none
  }
  // `size` more bytes, zeros until written through data() (room is made zeroed and handed out
  // once); returns their offset.
  std::size_t grow(std::size_t size) {
    const std::size_t at = end_;
    room(size);
    return at;
  }
  std::uint8_t* data() { return bytes_.data(); }
  Bytes take() {
    bytes_.resize(end_);  // the room not written (none when the size asked for was exact)
    return std::move(bytes_);
  }

 private:
  // The next `size` bytes, made room for when the size asked for was short.
  std::uint8_t* room(std::size_t size) {
    if (end_ + size > bytes_.size()) make_room(size);
    std::uint8_t* at = bytes_.data() + end_;
    end_ += size;
    return at;
  }
  // Out of line, so that room() is small enough to be inlined at every field.
  [[gnu::noinline]] void make_room(std::size_t size) {
    bytes_.resize(std::max(end_ + size, 2 * bytes_.size()));
  }

  Bytes bytes_;
  std::size_t end_;  // the bytes written so far; bytes_ beyond them is room
};

// The bytes a Writer appends for the same calls, after the type and format.
class Sizer {
 public:
  template <class T>
  void scalar(T /*value*/) {
    size_ += sizeof(T);
  }
  template <class T>
  void block(const std::vector<T>& values) {
    size_ += sizeof(std::uint64_t) + values.size() * sizeof(T);
  }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  std::size_t size_ = sizeof(std::uint32_t) + sizeof(kFormat);
};

// An observation block of the message's type (the other type's array is empty).
template <class W>
void observation_block(W& w, ObservationType type, const std::vector<float>& f32,
                       const std::vector<std::uint8_t>& u8) {
  if (type == ObservationType::kUInt8) {
    w.block(u8);
  } else {
    w.block(f32);
  }
}

// A message of `type` whose fields `fields(w)` writes, appended to `bytes`, in one allocation.
template <class Fields>
Bytes write_message(std::uint32_t type, const Fields& fields, Bytes bytes = {}) {
  Sizer sizer;
  fields(sizer);
  Writer w(type, std::move(bytes), sizer.size());
  fields(w);
  return w.take();
}

class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size, std::uint32_t type, std::string* error)
      : data_(data), size_(size), error_(error) {
    std::uint32_t got_type = 0;
    std::uint8_t format = 0;
    if (!scalar(got_type) || !scalar(format)) return;
    if (got_type != type) fail("wrong message type");
    if (ok_ && format != kFormat) fail("unknown format " + std::to_string(format));
  }
  template <class T>
  bool scalar(T& value) {
    if (!ok_) return false;
    if (size_ - pos_ < sizeof(T)) return fail("truncated message");
    std::memcpy(&value, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  template <class T>
  bool block(std::vector<T>& values, const char* name) {
    const std::uint8_t* at = nullptr;
    std::uint64_t count = 0;
    if (!block_in_place(sizeof(T), at, count, name)) return false;
    values.resize(count);
    if (count > 0) std::memcpy(values.data(), at, count * sizeof(T));
    return true;
  }
  // A block of `count` elements of `element` bytes each, left where it lies (at `at`).
  bool block_in_place(std::size_t element, const std::uint8_t*& at, std::uint64_t& count,
                      const char* name) {
    if (!scalar(count)) return false;
    if (count > (size_ - pos_) / element) {
      return fail(std::string("truncated block '") + name + "'");
    }
    at = data_ + pos_;
    pos_ += count * element;
    return true;
  }
  bool observation_type(ObservationType& type) {
    std::uint8_t raw = 0;
    if (!scalar(raw)) return false;
    if (raw > static_cast<std::uint8_t>(ObservationType::kUInt8)) {
      return fail("unknown observation type " + std::to_string(raw));
    }
    type = static_cast<ObservationType>(raw);
    return true;
  }
  bool observations(ObservationType type, std::vector<float>& f32, std::vector<std::uint8_t>& u8,
                    const char* name) {
    f32.clear();
    u8.clear();
    return type == ObservationType::kUInt8 ? block(u8, name) : block(f32, name);
  }
  bool fail(const std::string& message) {
    if (ok_ && error_ != nullptr) *error_ = message;
    ok_ = false;
    return false;
  }
  // True when everything was read, nothing is left over and `consistent` holds.
  bool finish(bool consistent, const char* what) {
    if (ok_ && pos_ != size_) return fail("trailing bytes");
    return finish_prefix(consistent, what);
  }
  // As finish(), but bytes may follow (the next message of a list).
  bool finish_prefix(bool consistent, const char* what) {
    if (!ok_) return false;
    if (!consistent) return fail(std::string("inconsistent sizes: ") + what);
    return true;
  }
  [[nodiscard]] std::size_t position() const { return pos_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::string* error_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

bool rows_match(std::size_t rows, std::size_t width, std::size_t elements) {
  return rows * width == elements;
}

// Both observation arrays of the message's type hold `rows` rows; the other type's are empty.
template <class M>
bool observations_consistent(const M& m, std::size_t rows) {
  const bool pixels = m.observation_type == ObservationType::kUInt8;
  const std::size_t used = pixels ? m.observations_u8.size() : m.observations.size();
  const std::size_t used_next = pixels ? m.next_observations_u8.size() : m.next_observations.size();
  const std::size_t unused = pixels ? m.observations.size() + m.next_observations.size()
                                    : m.observations_u8.size() + m.next_observations_u8.size();
  return unused == 0 && rows_match(rows, m.observation_size, used) &&
         rows_match(rows, m.observation_size, used_next);
}

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("encode: inconsistent sizes in ") + what);
}

}  // namespace

bool consistent(const TransitionsMessage& m) {
  const std::size_t n = m.actions.size();
  return m.rewards.size() == n && m.terminated.size() == n && observations_consistent(m, n);
}

bool consistent(const SampleBatchMessage& m) {
  const std::size_t n = m.keys.size();
  return m.actions.size() == n && m.rewards.size() == n && m.terminated.size() == n &&
         m.importance_weights.size() == n && m.weights_versions.size() == n &&
         observations_consistent(m, n);
}

bool consistent(const ObservationBatchMessage& m) {
  const bool pixels = m.observation_type == ObservationType::kUInt8;
  const std::size_t used = pixels ? m.observations_u8.size() : m.observations.size();
  const std::size_t unused = pixels ? m.observations.size() : m.observations_u8.size();
  return m.observation_size > 0 && used % m.observation_size == 0 && unused == 0;
}

bool consistent(const PriorityUpdateMessage& m) { return m.keys.size() == m.priorities.size(); }

const char* observation_type_name(ObservationType type) {
  return type == ObservationType::kUInt8 ? "uint8" : "float32";
}

double policy_lag(std::uint64_t newest, const SampleBatchMessage& batch) {
  if (batch.weights_versions.empty()) return 0.0;
  double sum = 0.0;
  for (const std::uint64_t v : batch.weights_versions) sum += static_cast<double>(v);
  const double mean = sum / static_cast<double>(batch.weights_versions.size());
  return std::max(0.0, static_cast<double>(newest) - mean);
}

Bytes encode(const TransitionsMessage& m) {
  require(consistent(m), "TransitionsMessage");
  return write_message(kTransitions, [&m](auto& w) {
    w.scalar(m.observation_size);
    w.scalar(static_cast<std::uint8_t>(m.observation_type));
    w.scalar(m.weights_version);
    observation_block(w, m.observation_type, m.observations, m.observations_u8);
    w.block(m.actions);
    w.block(m.rewards);
    w.block(m.terminated);
    observation_block(w, m.observation_type, m.next_observations, m.next_observations_u8);
  });
}

bool decode(const std::uint8_t* data, std::size_t size, TransitionsMessage& out,
            std::string* error) {
  Reader r(data, size, kTransitions, error);
  r.scalar(out.observation_size);
  r.observation_type(out.observation_type);
  r.scalar(out.weights_version);
  r.observations(out.observation_type, out.observations, out.observations_u8, "observations");
  r.block(out.actions, "actions");
  r.block(out.rewards, "rewards");
  r.block(out.terminated, "terminated");
  r.observations(out.observation_type, out.next_observations, out.next_observations_u8,
                 "next_observations");
  return r.finish(consistent(out), "transitions");
}

namespace {

// `m`'s encoding appended to `bytes`.
Bytes append_batch(const SampleBatchMessage& m, Bytes bytes) {
  require(consistent(m), "SampleBatchMessage");
  const auto fields = [&m](auto& w) {
    w.scalar(m.observation_size);
    w.scalar(static_cast<std::uint8_t>(m.observation_type));
    w.block(m.keys);
    observation_block(w, m.observation_type, m.observations, m.observations_u8);
    w.block(m.actions);
    w.block(m.rewards);
    w.block(m.terminated);
    observation_block(w, m.observation_type, m.next_observations, m.next_observations_u8);
    w.block(m.importance_weights);
    w.block(m.weights_versions);
  };
  return write_message(kSampleBatch, fields, std::move(bytes));
}

// The fields of a sample batch after its type and format.
void read_fields(Reader& r, SampleBatchMessage& out) {
  r.scalar(out.observation_size);
  r.observation_type(out.observation_type);
  r.block(out.keys, "keys");
  r.observations(out.observation_type, out.observations, out.observations_u8, "observations");
  r.block(out.actions, "actions");
  r.block(out.rewards, "rewards");
  r.block(out.terminated, "terminated");
  r.observations(out.observation_type, out.next_observations, out.next_observations_u8,
                 "next_observations");
  r.block(out.importance_weights, "importance_weights");
  r.block(out.weights_versions, "weights_versions");
}

}  // namespace

Bytes encode(const SampleBatchMessage& m) { return append_batch(m, {}); }

bool decode(const std::uint8_t* data, std::size_t size, SampleBatchMessage& out,
            std::string* error) {
  Reader r(data, size, kSampleBatch, error);
  read_fields(r, out);
  return r.finish(consistent(out), "sample batch");
}

Bytes encode(const SampleBatchList& batches) {
  Bytes out;
  for (const SampleBatchMessage& batch : batches) out = append_batch(batch, std::move(out));
  return out;
}

bool decode(const std::uint8_t* data, std::size_t size, SampleBatchList& out, std::string* error) {
  out.clear();
  std::size_t at = 0;
  while (at < size) {
    std::string why;
    Reader r(data + at, size - at, kSampleBatch, &why);
    SampleBatchMessage batch;
    read_fields(r, batch);
    if (!r.finish_prefix(consistent(batch), "sample batch")) {
      if (error != nullptr) *error = "batch list: batch " + std::to_string(out.size()) + ": " + why;
      return false;
    }
    at += r.position();
    out.push_back(std::move(batch));
  }
  return true;
}

Bytes encode(const PriorityUpdateMessage& m) {
  require(m.keys.size() == m.priorities.size(), "PriorityUpdateMessage");
  return write_message(kPriorities, [&m](auto& w) {
    w.block(m.keys);
    w.block(m.priorities);
  });
}

bool decode(const std::uint8_t* data, std::size_t size, PriorityUpdateMessage& out,
            std::string* error) {
  Reader r(data, size, kPriorities, error);
  r.block(out.keys, "keys");
  r.block(out.priorities, "priorities");
  return r.finish(out.keys.size() == out.priorities.size(), "priority update");
}

Bytes encode(const WeightsMessage& m) { return encode(m, {}); }

Bytes encode(const WeightsMessage& m, Bytes storage) {
  storage.clear();
  return write_message(
      kWeights,
      [&m](auto& w) {
        w.scalar(m.version);
        w.block(m.values);
      },
      std::move(storage));
}

bool decode(const std::uint8_t* data, std::size_t size, WeightsMessage& out, std::string* error) {
  Reader r(data, size, kWeights, error);
  r.scalar(out.version);
  r.block(out.values, "values");
  return r.finish(true, "weights");
}

Bytes encode(const ObservationBatchMessage& m) {
  require(consistent(m), "ObservationBatchMessage");
  return write_message(kObservations, [&m](auto& w) {
    w.scalar(m.source);
    w.scalar(m.observation_size);
    w.scalar(static_cast<std::uint8_t>(m.observation_type));
    observation_block(w, m.observation_type, m.observations, m.observations_u8);
  });
}

bool decode(const std::uint8_t* data, std::size_t size, ObservationBatchMessage& out,
            std::string* error) {
  Reader r(data, size, kObservations, error);
  r.scalar(out.source);
  r.scalar(out.observation_size);
  r.observation_type(out.observation_type);
  if (out.observation_type == ObservationType::kUInt8) {
    out.observations.clear();
    r.block(out.observations_u8, "observations");
  } else {
    out.observations_u8.clear();
    r.block(out.observations, "observations");
  }
  return r.finish(consistent(out), "observation batch");
}

Bytes encode(const ActionBatchMessage& m) {
  return write_message(kActions, [&m](auto& w) {
    w.scalar(m.source);
    w.scalar(m.weights_version);
    w.block(m.actions);
  });
}

bool decode(const std::uint8_t* data, std::size_t size, ActionBatchMessage& out,
            std::string* error) {
  Reader r(data, size, kActions, error);
  r.scalar(out.source);
  r.scalar(out.weights_version);
  r.block(out.actions, "actions");
  return r.finish(true, "action batch");
}

bool consistent(const AgentObservationsMessage& m) {
  return m.policies.size() == m.rows() &&
         rows_match(m.rows(), m.observation_size, m.observations.size());
}

bool consistent(const AgentActionsMessage& m) {
  return m.policies.size() == m.rows() && m.versions.size() == m.rows() &&
         m.actions.size() == m.rows();
}

/// Whether a sparse agent-observation frame of `frame_bytes` may stand for `floats` floats: no
/// more than 64 per byte of the frame, so a small frame cannot make the receiver allocate much.
bool sparse_claim_fits(std::uint64_t floats, std::size_t frame_bytes) {
  return floats <= 64 * static_cast<std::uint64_t>(frame_bytes) + 64;
}

Bytes encode(const AgentObservationsMessage& m) { return encode(m, {}); }

Bytes encode(const AgentObservationsMessage& m, Bytes storage) {
  require(consistent(m), "AgentObservationsMessage");
  storage.clear();
  // Mostly-zero rows (one-hot grids such as TrafficJunction's) go sparse: the positions and
  // values of the floats whose bits are not all zero, 8 bytes each instead of 4 per float. One
  // scan, a mask per block of floats (float_bits.hpp), lists the positions of the set floats (it
  // stops once half are set: dense is then no larger); an all-zero block costs one test.
  const std::size_t total = m.observations.size();
  const float* obs = m.observations.data();
  // The list is written through a pointer: room for the most the scan can find before it stops
  // (half of the floats, then at most one more block), made once and reused between messages.
  thread_local std::vector<std::uint32_t> set;
  // Kept between messages up to 64 Ki positions (256 KiB); a larger list is freed.
  struct Release {
    std::vector<std::uint32_t>& kept;
    ~Release() {
      if (kept.size() > (std::size_t{1} << 16)) std::vector<std::uint32_t>().swap(kept);
    }
  } release{set};
  // Positions are 32-bit.
  const bool indexable = total <= std::numeric_limits<std::uint32_t>::max();
  std::size_t count = 0;
  if (indexable) {
    const std::size_t room = std::min(total, total / 2 + kFloatBlock);
    if (set.size() < room) set.resize(room);
    std::uint32_t* positions = set.data();
    const auto list = [&](std::size_t at, std::uint32_t mask) {
      count += list_set_bits(at, mask, positions + count);
    };
    // Whole blocks first (an all-zero one costs its loads and one test), then the rest.
    const std::size_t whole = total / kFloatBlock * kFloatBlock;
    std::size_t at = 0;
    for (; at < whole && 2 * count < total; at += kFloatBlock) {
      const std::uint32_t mask = float_block_mask(obs + at);
      if (mask != 0) list(at, mask);
    }
    if (at == whole && at < total && 2 * count < total) list(at, float_mask(obs + at, total - at));
  }
  // Type and format, source and observation size, the agents and policies blocks.
  const std::size_t head = sizeof(std::uint32_t) + sizeof(kFormat) + 2 * sizeof(std::uint32_t) +
                           2 * (sizeof(std::uint64_t) + m.rows() * sizeof(std::uint32_t));
  const std::size_t sparse_size = head + 2 * sizeof(std::uint64_t) + 8 * count;
  // Almost all zeros over many floats can make a frame the receiver's bound refuses: dense.
  const bool sparse =
      indexable && total > 0 && 2 * count < total && sparse_claim_fits(total, sparse_size);
  Writer w(sparse ? kAgentObservationsSparse : kAgentObservations, std::move(storage),
           sparse ? sparse_size : head + sizeof(std::uint64_t) + total * sizeof(float));
  w.scalar(m.source);
  w.scalar(m.observation_size);
  w.block(m.agents);
  w.block(m.policies);
  if (!sparse) {
    w.block(m.observations);
    return w.take();
  }
  w.scalar(static_cast<std::uint64_t>(count));
  const std::size_t positions_at = w.grow(count * sizeof(std::uint32_t));
  std::memcpy(w.data() + positions_at, set.data(), count * sizeof(std::uint32_t));
  w.scalar(static_cast<std::uint64_t>(count));
  const std::size_t values_at = w.grow(count * sizeof(float));
  std::uint8_t* values = w.data() + values_at;
  for (std::size_t k = 0; k < count; ++k) {
    std::memcpy(values + k * sizeof(float), obs + set[k], sizeof(float));
  }
  return w.take();
}

bool decode(const std::uint8_t* data, std::size_t size, AgentObservationsMessage& out,
            std::string* error) {
  std::uint32_t type = 0;
  if (size >= sizeof type) std::memcpy(&type, data, sizeof type);
  const bool sparse = type == kAgentObservationsSparse;
  Reader r(data, size, sparse ? kAgentObservationsSparse : kAgentObservations, error);
  r.scalar(out.source);
  r.scalar(out.observation_size);
  r.block(out.agents, "agents");
  r.block(out.policies, "policies");
  if (!sparse) {
    r.block(out.observations, "observations");
    return r.finish(consistent(out), "agent observations");
  }
  SparseFloats nonzero;
  std::uint64_t position_count = 0, value_count = 0;
  r.block_in_place(sizeof(std::uint32_t), nonzero.positions, position_count, "positions");
  r.block_in_place(sizeof(float), nonzero.values, value_count, "values");
  if (!r.finish(out.policies.size() == out.rows() && position_count == value_count,
                "agent observations")) {
    return false;
  }
  nonzero.count = static_cast<std::size_t>(position_count);
  const std::uint64_t total =
      static_cast<std::uint64_t>(out.rows()) * static_cast<std::uint64_t>(out.observation_size);
  // Bounded by the frame: a sparse message may not claim more floats than 64 times its bytes.
  if (!sparse_claim_fits(total, size)) {
    return r.fail("sparse agent observations claim " + std::to_string(total) + " floats");
  }
  out.observations.resize(static_cast<std::size_t>(total));
  if (total != 0) {  // data() may be null for none, and memset must not get null
    std::memset(out.observations.data(), 0, out.observations.size() * sizeof(float));
  }
  std::uint64_t next = 0;  // positions ascend strictly
  for (std::size_t i = 0; i < nonzero.count; ++i) {
    const std::uint32_t at = nonzero.position(i);
    if (at < next || at >= total) {
      return r.fail("sparse agent observations: position " + std::to_string(at) +
                    " out of order or range");
    }
    out.observations[at] = nonzero.value(i);
    next = static_cast<std::uint64_t>(at) + 1;
  }
  return true;
}

std::optional<SparseFloats> sparse_observations(const std::uint8_t* data, std::size_t size) {
  Reader r(data, size, kAgentObservationsSparse, nullptr);
  std::uint32_t source = 0, observation_size = 0;
  const std::uint8_t* skipped = nullptr;
  std::uint64_t rows = 0, policies = 0, position_count = 0, value_count = 0;
  SparseFloats nonzero;
  r.scalar(source);
  r.scalar(observation_size);
  r.block_in_place(sizeof(std::uint32_t), skipped, rows, "agents");
  r.block_in_place(sizeof(std::uint32_t), skipped, policies, "policies");
  r.block_in_place(sizeof(std::uint32_t), nonzero.positions, position_count, "positions");
  r.block_in_place(sizeof(float), nonzero.values, value_count, "values");
  if (!r.finish(position_count == value_count, "agent observations")) return std::nullopt;
  nonzero.count = static_cast<std::size_t>(position_count);
  return nonzero;
}

Bytes encode(const AgentActionsMessage& m) { return encode(m, {}); }

Bytes encode(const AgentActionsMessage& m, Bytes storage) {
  require(consistent(m), "AgentActionsMessage");
  storage.clear();
  return write_message(
      kAgentActions,
      [&m](auto& w) {
        w.scalar(m.source);
        w.block(m.agents);
        w.block(m.policies);
        w.block(m.versions);
        w.block(m.actions);
      },
      std::move(storage));
}

bool decode(const std::uint8_t* data, std::size_t size, AgentActionsMessage& out,
            std::string* error) {
  Reader r(data, size, kAgentActions, error);
  r.scalar(out.source);
  r.block(out.agents, "agents");
  r.block(out.policies, "policies");
  r.block(out.versions, "versions");
  r.block(out.actions, "actions");
  return r.finish(consistent(out), "agent actions");
}

}  // namespace tagflow::nodes
