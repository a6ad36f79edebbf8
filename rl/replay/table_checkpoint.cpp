// Table checkpoints: a binary file written atomically (temporary file, fsync, rename).
//
// Layout (host byte order; a checkpoint is read back on the same kind of machine):
//   "TFREPLAY", u32 version
//   config: name, observation spec, action spec, max_items, max_bytes, selector, α,
//           rate limiter (min size, samples per insert, error buffer), seed
//   counters: inserts, sampled items, evictions, shared frames, random generator state
//   u64 oldest key, u64 next key, then for every key in between, oldest first:
//     f64 priority, u32 times sampled, f32 reward, u8 done, u8 next_shared, action bytes,
//     observation frame, next observation frame
//   where a frame is its u32 index in order of first appearance, followed by its bytes the
//   first time only (frames shared between items are written once)
//   from version 2: u64 count, then that many u64 slots: the selector's draw order (Selector::
//   draw_order(); empty but for the uniform selector, whose order removals permute)
//   "TFEND" and the item count again.
// Version 1 files (without the draw order) are read too; the uniform selector then takes its
// items oldest first, which after evictions may not be the order the saved table drew from.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "rl/replay/table.hpp"

namespace tagflow::replay {
namespace {

constexpr char kMagic[8] = {'T', 'F', 'R', 'E', 'P', 'L', 'A', 'Y'};
constexpr char kTrailer[5] = {'T', 'F', 'E', 'N', 'D'};
constexpr std::uint32_t kVersion = 2;
constexpr std::uint32_t kOldestVersion = 1;

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Gathers the bytes in a buffer of kPiece bytes, each field copied at a cursor (a fixed-size
// field is a single store, not a call), and hands the buffer to the sink each time it fills.
class Writer {
 public:
  static constexpr std::size_t kPiece = std::size_t{1} << 20;
  explicit Writer(const std::function<void(std::string_view)>& sink)
      : sink_(sink), buffer_(new char[kPiece]) {}
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  /// Hands what is buffered to the sink; returns the bytes handed in all.
  std::uint64_t finish() {
    drain();
    return handed_;
  }
  void bytes(const void* data, std::size_t size) {
    if (kPiece - used_ < size) {
      drain();
      if (size >= kPiece) {  // a large frame goes out as it is
        sink_(std::string_view(static_cast<const char*>(data), size));
        handed_ += size;
        return;
      }
    }
    std::memcpy(buffer_.get() + used_, data, size);
    used_ += size;
  }
  template <class T>
  void value(T v) {
    bytes(&v, sizeof v);
  }
  void string(const std::string& s) {
    value(static_cast<std::uint64_t>(s.size()));
    bytes(s.data(), s.size());
  }
  void field(const FieldSpec& spec) {
    value(static_cast<std::uint8_t>(spec.dtype));
    value(static_cast<std::uint64_t>(spec.shape.size()));
    for (std::int64_t dim : spec.shape) value(dim);
  }

 private:
  void drain() {
    if (used_ == 0) return;
    sink_(std::string_view(buffer_.get(), used_));
    handed_ += used_;
    used_ = 0;
  }
  const std::function<void(std::string_view)>& sink_;
  std::unique_ptr<char[]> buffer_;
  std::size_t used_ = 0;
  std::uint64_t handed_ = 0;
};

class Reader {
 public:
  Reader(std::FILE* file, const std::string& path) : file_(file), path_(path) {}
  void bytes(void* data, std::size_t size) {
    if (size > 0 && std::fread(data, 1, size, file_) != size) fail("truncated file");
  }
  template <class T>
  T value() {
    T v{};
    bytes(&v, sizeof v);
    return v;
  }
  std::string string() {
    const auto size = value<std::uint64_t>();
    if (size > (std::uint64_t{1} << 20)) fail("string too long");
    std::string s(size, '\0');
    bytes(s.data(), size);
    return s;
  }
  FieldSpec field() {
    FieldSpec spec;
    const auto dtype = value<std::uint8_t>();
    if (dtype > static_cast<std::uint8_t>(DType::kFloat64)) fail("unknown dtype");
    spec.dtype = static_cast<DType>(dtype);
    const auto rank = value<std::uint64_t>();
    if (rank > 16) fail("rank above 16");
    for (std::uint64_t i = 0; i < rank; ++i) spec.shape.push_back(value<std::int64_t>());
    return spec;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("replay checkpoint " + path_ + ": " + what);
  }

 private:
  std::FILE* file_;
  const std::string& path_;
};

}  // namespace

class TableCheckpoint {
 public:
  static void write(const Table& table, Writer& out);
  static std::unique_ptr<Table> read(Reader& in);

 private:
  /// The header (its version into `version`) and the table's config.
  static TableConfig read_config(Reader& in, std::uint32_t& version);
  /// The rate limiter's counts, the counters, the random generator and the key range.
  static void read_state(Reader& in, Table& t);
  /// Every item, its frames shared as they were written.
  static void read_items(Reader& in, Table& t);
  /// The selector's draw order (version 2 on).
  static void read_draw_order(Reader& in, Table& t);
};

void TableCheckpoint::write(const Table& t, Writer& out) {
  const TableConfig& c = t.config_;
  out.bytes(kMagic, sizeof kMagic);
  out.value(kVersion);
  out.string(c.name);
  out.field(c.spec.observation);
  out.field(c.spec.action);
  out.value(static_cast<std::uint64_t>(c.max_items));
  out.value(static_cast<std::uint64_t>(c.max_bytes));
  out.value(static_cast<std::uint8_t>(c.selector));
  out.value(c.priority_exponent);
  out.value(static_cast<std::uint64_t>(c.rate_limiter.min_size_to_sample));
  out.value(c.rate_limiter.samples_per_insert);
  out.value(c.rate_limiter.error_buffer);
  out.value(c.seed);
  out.value(t.limiter_.inserts());
  out.value(t.limiter_.sampled_items());
  out.value(t.evictions_);
  out.value(t.shared_frames_);
  std::ostringstream rng;
  rng << t.rng_;
  out.string(rng.str());
  out.value(t.oldest_key_);
  out.value(t.next_key_);

  // Each frame's number in order of first appearance, indexed by frame id (ids are dense: below
  // ids_issued()); kUnwritten until its bytes are written.
  constexpr std::uint32_t kUnwritten = 0xFFFFFFFFU;
  std::vector<std::uint32_t> number(t.frames_.ids_issued(), kUnwritten);
  std::uint32_t numbered = 0;
  const auto frame = [&](FrameId id) {
    if (id >= number.size()) throw std::logic_error("replay checkpoint: an item without its frame");
    std::uint32_t& n = number[id];
    const bool fresh = n == kUnwritten;
    if (fresh) n = numbered++;
    out.value(n);
    if (fresh) out.bytes(t.frames_.data(id), t.observation_bytes_);
  };
  for (ItemKey key = t.oldest_key_; key < t.next_key_; ++key) {
    const std::size_t index = t.slot_of(key);
    const Table::Slot& slot = t.slots_[index];
    out.value(slot.priority);
    out.value(t.times_sampled_[index].load(std::memory_order_relaxed));
    out.value(slot.reward);
    out.value(slot.done);
    out.value(static_cast<std::uint8_t>(slot.next_shared ? 1 : 0));
    out.bytes(t.actions_.data() + index * t.action_bytes_, t.action_bytes_);
    frame(slot.observation);
    frame(slot.next_observation);
  }
  const std::vector<std::size_t> order = t.selector_->draw_order();
  out.value(static_cast<std::uint64_t>(order.size()));
  for (const std::size_t slot : order) out.value(static_cast<std::uint64_t>(slot));
  out.bytes(kTrailer, sizeof kTrailer);
  out.value(t.next_key_ - t.oldest_key_);
}

std::unique_ptr<Table> TableCheckpoint::read(Reader& in) {
  std::uint32_t version = 0;
  const TableConfig c = read_config(in, version);
  std::unique_ptr<Table> table;
  try {
    table = std::make_unique<Table>(c);
  } catch (const std::invalid_argument& error) {
    in.fail(std::string("invalid table config: ") + error.what());
  }
  read_state(in, *table);
  read_items(in, *table);
  if (version >= 2) read_draw_order(in, *table);
  char trailer[sizeof kTrailer];
  in.bytes(trailer, sizeof trailer);
  if (std::memcmp(trailer, kTrailer, sizeof kTrailer) != 0 ||
      in.value<std::uint64_t>() != table->next_key_ - table->oldest_key_) {
    in.fail("bad trailer");
  }
  return table;
}

TableConfig TableCheckpoint::read_config(Reader& in, std::uint32_t& version) {
  char magic[sizeof kMagic];
  in.bytes(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0) in.fail("not a replay checkpoint");
  version = in.value<std::uint32_t>();
  if (version < kOldestVersion || version > kVersion) in.fail("unsupported version");
  TableConfig c;
  c.name = in.string();
  c.spec.observation = in.field();
  c.spec.action = in.field();
  c.max_items = in.value<std::uint64_t>();
  c.max_bytes = in.value<std::uint64_t>();
  const auto selector = in.value<std::uint8_t>();
  if (selector > static_cast<std::uint8_t>(SelectorKind::kLifo)) in.fail("unknown selector");
  c.selector = static_cast<SelectorKind>(selector);
  c.priority_exponent = in.value<double>();
  c.rate_limiter.min_size_to_sample = in.value<std::uint64_t>();
  c.rate_limiter.samples_per_insert = in.value<double>();
  c.rate_limiter.error_buffer = in.value<double>();
  c.seed = in.value<std::uint64_t>();
  return c;
}

void TableCheckpoint::read_state(Reader& in, Table& t) {
  const auto inserts = in.value<std::uint64_t>();
  const auto sampled = in.value<std::uint64_t>();
  t.limiter_.restore(inserts, sampled);
  t.evictions_ = in.value<std::uint64_t>();
  t.shared_frames_ = in.value<std::uint64_t>();
  std::istringstream rng(in.string());
  rng >> t.rng_;
  if (!rng) in.fail("bad random generator state");
  t.oldest_key_ = in.value<std::uint64_t>();
  t.next_key_ = in.value<std::uint64_t>();
  if (t.next_key_ < t.oldest_key_ || t.next_key_ - t.oldest_key_ > t.config_.max_items) {
    in.fail("item count above max_items");
  }
}

void TableCheckpoint::read_items(Reader& in, Table& t) {
  std::vector<FrameId> frames;
  const auto frame = [&]() {
    const auto index = in.value<std::uint32_t>();
    if (index < frames.size()) {
      t.frames_.retain(frames[index]);
      return frames[index];
    }
    if (index != frames.size()) in.fail("frame index out of order");
    const FrameId id = t.frames_.allocate();
    in.bytes(t.frames_.data(id), t.observation_bytes_);
    frames.push_back(id);
    return id;
  };
  for (ItemKey key = t.oldest_key_; key < t.next_key_; ++key) {
    const std::size_t index = t.slot_of(key);
    Table::Slot& slot = t.slots_[index];
    slot.key = key;
    slot.priority = in.value<double>();
    if (!(slot.priority >= 0.0) || slot.priority > 1e300) in.fail("invalid priority");
    t.times_sampled_[index].store(in.value<std::uint32_t>(), std::memory_order_relaxed);
    slot.reward = in.value<float>();
    slot.done = in.value<std::uint8_t>() != 0 ? 1 : 0;
    slot.next_shared = in.value<std::uint8_t>() != 0;
    in.bytes(t.actions_.data() + index * t.action_bytes_, t.action_bytes_);
    slot.observation = frame();
    slot.next_observation = frame();
    slot.state = Table::SlotState::kReady;
    t.selector_->insert(index, slot.priority);
    t.bytes_ += t.freed_bytes(slot);
    ++t.committed_;
  }
}

void TableCheckpoint::read_draw_order(Reader& in, Table& t) {
  const auto count = in.value<std::uint64_t>();
  if (count > t.next_key_ - t.oldest_key_) in.fail("draw order longer than the item count");
  std::vector<std::size_t> order(count);
  for (std::size_t& slot : order) slot = static_cast<std::size_t>(in.value<std::uint64_t>());
  if (!t.selector_->restore_draw_order(order)) {
    in.fail("draw order is not a permutation of the items");
  }
}

void Table::save_checkpoint(const std::string& path) const {
  try {
    AtomicFile file(path);
    (void)write_checkpoint([&file](std::string_view piece) { file.write(piece); });
    file.commit();
  } catch (const AtomicFileError& e) {
    throw std::runtime_error(std::string("replay checkpoint: ") + e.what());
  }
}

std::uint64_t Table::write_checkpoint(const std::function<void(std::string_view)>& out) const {
  std::unique_lock<std::mutex> lock(mutex_);
  ++checkpointing_;
  // Inserts already reserved finish (they never wait on anything); new ones wait for the save.
  changed_.wait(lock, [&] { return committed_ == next_key_ - oldest_key_; });
  const auto done = [&] {
    --checkpointing_;
    changed_.notify_all();
  };
  std::uint64_t bytes = 0;
  try {
    // Exclusive: the queued writes applied, and no sampler counting times_sampled meanwhile.
    std::lock_guard<WriterPriorityMutex> tree(tree_mutex_);
    apply_pending();
    Writer writer(out);
    TableCheckpoint::write(*this, writer);
    bytes = writer.finish();
  } catch (...) {
    done();
    throw;
  }
  done();
  return bytes;
}

std::unique_ptr<Table> Table::load_checkpoint(const std::string& path) {
  File file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    throw std::runtime_error("replay checkpoint: cannot open " + path + ": " +
                             std::strerror(errno));
  }
  Reader reader(file.get(), path);
  return TableCheckpoint::read(reader);
}

}  // namespace tagflow::replay
