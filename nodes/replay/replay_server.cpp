#include "nodes/replay/replay_server.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include "common/atomic_file.hpp"
#include "common/fnv1a.hpp"
#include "rl/replay/table.hpp"

namespace tagflow::nodes {
namespace {

// The footer after the table's checkpoint bytes (layout in replay_server.hpp).
constexpr char kFooterMagic[8] = {'T', 'F', 'R', 'S', 'E', 'R', 'V', 'R'};
constexpr char kFooterEnd[8] = {'T', 'F', 'R', 'S', 'V', 'E', 'N', 'D'};
constexpr std::uint32_t kFooterVersion = 1;
constexpr std::size_t kFooterSize = 64;
constexpr std::size_t kHashedFooterBytes = 48;  // magic .. credits: covered by the hash

struct Footer {
  std::uint32_t observation_size = 0;
  std::uint64_t table_bytes = 0;
  std::uint64_t inserts = 0;
  std::uint64_t batches = 0;
  double credits = 0.0;
  std::uint64_t hash = 0;
};

template <class T>
void put(unsigned char* out, std::size_t offset, T value) {
  std::memcpy(out + offset, &value, sizeof value);
}
template <class T>
T get(const unsigned char* in, std::size_t offset) {
  T value{};
  std::memcpy(&value, in + offset, sizeof value);
  return value;
}

void encode_footer(const Footer& f, unsigned char* out) {
  std::memcpy(out, kFooterMagic, 8);
  put(out, 8, kFooterVersion);
  put(out, 12, f.observation_size);
  put(out, 16, f.table_bytes);
  put(out, 24, f.inserts);
  put(out, 32, f.batches);
  put(out, 40, f.credits);
  put(out, 48, f.hash);
  std::memcpy(out + 56, kFooterEnd, 8);
}

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw CheckpointError("replay checkpoint " + path + ": " + what);
}

// The hash a sealed footer holds: FNV-1a over the first `table_bytes` bytes of `file` (the
// table, read from its start), then over the footer's first kHashedFooterBytes. Sealing writes
// it, restoring checks it.
std::uint64_t footer_hash(std::FILE* file, std::uint64_t table_bytes, const unsigned char* footer,
                          const std::string& path) {
  std::uint64_t hash = kFnv1aOffset;
  const int error =
      read_fd_pieces(::fileno(file), table_bytes,
                     [&hash](const char* data, std::size_t n) { hash = fnv1a64(data, n, hash); });
  if (error == kShortFile) fail(path, "truncated file");
  if (error != 0) fail(path, std::string("read: ") + std::strerror(error));
  return fnv1a64(footer, kHashedFooterBytes, hash);
}

replay::DType replay_dtype(ObservationType type) {
  return type == ObservationType::kUInt8 ? replay::DType::kUInt8 : replay::DType::kFloat32;
}

std::uint64_t file_size(std::FILE* file, const std::string& path) {
  if (::fseeko(file, 0, SEEK_END) != 0) fail(path, std::string("seek: ") + std::strerror(errno));
  const off_t size = ::ftello(file);
  if (size < 0) fail(path, std::string("size: ") + std::strerror(errno));
  return static_cast<std::uint64_t>(size);
}

}  // namespace

ReplayConfig ReplayConfig::from_params(const NodeParams& params, std::uint64_t seed) {
  params.check_known({"capacity", "selector", "priority_exponent", "importance_beta", "min_size",
                      "samples_per_insert", "batch_size", "max_batches_per_call", "sample_threads",
                      "checkpoint_dir", "checkpoint_every", "restore"});
  ReplayConfig c;
  c.capacity = static_cast<std::size_t>(params.get_int("capacity", 50000, 1));
  if (c.capacity > replay::kMaxTableItems) {
    params.fail("capacity", "must be at most 2^30 (" + std::to_string(replay::kMaxTableItems) +
                                " transitions, the most a replay table holds)");
  }
  const std::string selector = params.get_string("selector", "uniform");
  if (selector != "uniform" && selector != "prioritized") {
    params.fail("selector", "expected uniform or prioritized, got '" + selector + "'");
  }
  c.prioritized = selector == "prioritized";
  c.priority_exponent = params.get_double("priority_exponent", c.priority_exponent, 0.0, 10.0);
  c.importance_beta = params.get_double("importance_beta", c.importance_beta, 0.0, 1.0);
  c.min_size = static_cast<std::size_t>(params.get_int("min_size", 1000, 1));
  c.samples_per_insert = params.get_double("samples_per_insert", 8.0, 1e-6, 1e6);
  c.batch_size = static_cast<std::size_t>(params.get_int("batch_size", 64, 1));
  c.max_batches_per_call = static_cast<std::size_t>(params.get_int("max_batches_per_call", 4, 1));
  c.sample_threads = static_cast<std::size_t>(params.get_int("sample_threads", 1, 1));
  if (c.sample_threads > 64) params.fail("sample_threads", "must be at most 64");
  if (c.min_size < c.batch_size) params.fail("min_size", "must be at least batch_size");
  if (c.capacity < c.min_size) params.fail("capacity", "must be at least min_size");
  c.checkpoint_dir = params.get_string("checkpoint_dir", "");
  c.checkpoint_every = static_cast<std::uint64_t>(params.get_int("checkpoint_every", 0, 0));
  c.restore = params.get_bool("restore", false);
  if (c.checkpoint_dir.empty() && c.checkpoint_every > 0) {
    params.fail("checkpoint_every", "needs checkpoint_dir");
  }
  if (c.checkpoint_dir.empty() && c.restore) params.fail("restore", "needs checkpoint_dir");
  c.seed = seed;
  return c;
}

ReplayServer::ReplayServer(const ReplayConfig& config, std::string replica)
    : config_(config), replica_(std::move(replica)) {
  const std::string path = checkpoint_path();
  if (config_.restore && !path.empty() && std::filesystem::exists(path)) restore_from(path);
}

ReplayServer::~ReplayServer() = default;

void ReplayServer::create_table(std::uint32_t observation_size, ObservationType type) {
  replay::TableConfig tc;
  tc.spec.observation = {replay_dtype(type), {static_cast<std::int64_t>(observation_size)}};
  // The action slot holds the action and the weights version that chose it (two int64).
  tc.spec.action = {replay::DType::kInt64, {2}};
  tc.max_items = config_.capacity;
  tc.selector =
      config_.prioritized ? replay::SelectorKind::kPrioritized : replay::SelectorKind::kUniform;
  tc.priority_exponent = config_.priority_exponent;
  tc.rate_limiter = {1, 0.0, 0.0};  // the server limits by its own counts
  tc.seed = config_.seed;
  table_ = std::make_unique<replay::Table>(tc);
  observation_size_ = observation_size;
  observation_type_ = type;
}

void ReplayServer::insert(const TransitionsMessage& t) {
  if (!table_) create_table(t.observation_size, t.observation_type);
  if (t.observation_size != observation_size_ || t.observation_type != observation_type_) {
    throw std::invalid_argument(
        "replay: observations of size " + std::to_string(t.observation_size) + " (" +
        observation_type_name(t.observation_type) + ") differ from the table's " +
        std::to_string(observation_size_) + " (" + observation_type_name(observation_type_) + ")");
  }
  const bool pixels = observation_type_ == ObservationType::kUInt8;
  const std::size_t width = observation_size_ * (pixels ? 1 : sizeof(float));
  const auto* obs = pixels ? t.observations_u8.data()
                           : reinterpret_cast<const std::uint8_t*>(t.observations.data());
  const auto* next = pixels ? t.next_observations_u8.data()
                            : reinterpret_cast<const std::uint8_t*>(t.next_observations.data());
  for (std::size_t row = 0; row < t.rows(); ++row) {
    const std::array<std::int64_t, 2> action{t.actions[row],
                                             static_cast<std::int64_t>(t.weights_version)};
    replay::Transition item{{obs + row * width, width},
                            {reinterpret_cast<const std::uint8_t*>(action.data()), sizeof(action)},
                            t.rewards[row],
                            t.terminated[row] != 0,
                            {next + row * width, width}};
    // New items get priority 1 (or the table's running maximum would need tracking).
    if (table_->try_insert(item, 1.0) != replay::ReplayStatus::kOk) {
      throw std::logic_error("replay: insert refused");
    }
    ++inserts_;
    if (table_->size() >= config_.min_size) credits_ += config_.samples_per_insert;
  }
  if (config_.checkpoint_every > 0 &&
      inserts_ - last_checkpoint_inserts_ >= config_.checkpoint_every) {
    try {
      (void)checkpoint();
      checkpoint_error_.clear();
    } catch (const CheckpointError& e) {
      checkpoint_error_ = e.what();
      last_checkpoint_inserts_ = inserts_;  // try again after the next checkpoint_every
    }
  }
}

std::vector<SampleBatchMessage> ReplayServer::due_batches() {
  std::vector<SampleBatchMessage> out;
  if (!table_ || table_->size() < config_.min_size) return out;
  const auto batch = static_cast<double>(config_.batch_size);
  std::size_t due = 0;
  for (double c = credits_; c >= batch && due < config_.max_batches_per_call; c -= batch) ++due;
  if (due == 0) return out;
  sampled_.resize(due);
  const std::size_t filled =
      table_->sample_many({config_.batch_size, config_.importance_beta}, sampled_, parallel_for_);
  for (std::size_t b = 0; b < filled; ++b) {
    const replay::SampledBatch& sampled = sampled_[b];
    credits_ -= batch;
    ++batches_;
    SampleBatchMessage m;
    m.observation_size = observation_size_;
    m.observation_type = observation_type_;
    m.keys = sampled.keys;
    const std::size_t n = sampled.keys.size();
    if (observation_type_ == ObservationType::kUInt8) {
      m.observations_u8 = sampled.observations;
      m.next_observations_u8 = sampled.next_observations;
    } else {
      const float* o = sampled.observations_as<float>();
      const float* no = sampled.next_observations_as<float>();
      m.observations.assign(o, o + n * observation_size_);
      m.next_observations.assign(no, no + n * observation_size_);
    }
    const std::int64_t* a = sampled.actions_as<std::int64_t>();  // (action, version) per row
    m.actions.resize(n);
    m.weights_versions.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      m.actions[i] = a[2 * i];
      m.weights_versions[i] = static_cast<std::uint64_t>(a[2 * i + 1]);
    }
    m.rewards = sampled.rewards;
    m.terminated = sampled.dones;
    m.importance_weights = sampled.weights;
    out.push_back(std::move(m));
  }
  return out;
}

void ReplayServer::update(const PriorityUpdateMessage& update) {
  if (!table_ || !config_.prioritized) return;
  std::vector<double> priorities(update.priorities.begin(), update.priorities.end());
  (void)table_->update_priorities(update.keys, priorities);
}

std::size_t ReplayServer::size() const { return table_ ? table_->size() : 0; }

std::size_t ReplayServer::stored_bytes() const { return table_ ? table_->info().bytes : 0; }

std::string replay_checkpoint_path(const std::string& checkpoint_dir, const std::string& replica) {
  if (checkpoint_dir.empty()) return {};
  return (std::filesystem::path(checkpoint_dir) / (replica + ".ckpt")).string();
}

std::string ReplayServer::checkpoint_path() const {
  return replay_checkpoint_path(config_.checkpoint_dir, replica_);
}

std::optional<std::string> ReplayServer::checkpoint() {
  const std::string path = checkpoint_path();
  if (path.empty()) {
    throw CheckpointError("replay " + replica_ + ": checkpoint requested but no checkpoint_dir");
  }
  return checkpoint_to(path);
}

std::string ReplayServer::checkpoint_at_stop() {
  if (config_.checkpoint_dir.empty()) return "";
  try {
    (void)checkpoint();
  } catch (const CheckpointError& e) {
    return e.what();
  }
  if (!last_checkpoint_error().empty()) {
    return "an automatic checkpoint failed: " + last_checkpoint_error();
  }
  return "";
}

void ReplayServer::write_checkpoint(const ByteSink& out) const {
  if (!table_) throw std::logic_error("replay checkpoint: nothing inserted, no table to write");
  Footer f;
  f.observation_size = observation_size_;
  f.table_bytes = table_->write_checkpoint(out);
  f.inserts = inserts_;
  f.batches = batches_;
  f.credits = credits_;  // the hash: seal_checkpoint()
  unsigned char footer[kFooterSize];
  encode_footer(f, footer);
  out(std::string_view(reinterpret_cast<const char*>(footer), kFooterSize));
}

void ReplayServer::seal_checkpoint(AtomicFile& file) {
  file.flush();
  const std::uint64_t size = file.size();
  if (size < kFooterSize) throw std::logic_error("replay checkpoint: no footer to seal");
  const std::uint64_t table_bytes = size - kFooterSize;
  unsigned char footer[kFooterSize];
  file.read(table_bytes, footer, kFooterSize);
  put(footer, 48, footer_hash(file.get(), table_bytes, footer, file.temporary_path()));
  file.overwrite(table_bytes + 48, std::string_view(reinterpret_cast<const char*>(footer + 48), 8));
}

std::optional<std::string> ReplayServer::checkpoint_to(const std::string& path) {
  if (!table_) return std::nullopt;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) fail(path, "cannot create directory " + parent.string() + ": " + ec.message());
  try {
    AtomicFile file(path);
    write_checkpoint([&file](std::string_view piece) { file.write(piece); });
    seal_checkpoint(file);
    file.commit();
  } catch (const std::runtime_error& e) {
    throw CheckpointError("replay checkpoint " + path + ": " + e.what());
  }
  ++checkpoints_written_;
  last_checkpoint_inserts_ = inserts_;
  return path;
}

void ReplayServer::restore_from(const std::string& path) {
  File file(std::fopen(path.c_str(), "rb"));
  if (!file) fail(path, std::string("cannot open: ") + std::strerror(errno));
  const std::uint64_t size = file_size(file.get(), path);
  if (size < kFooterSize) {
    fail(path, "truncated (" + std::to_string(size) + " bytes, shorter than the footer)");
  }
  unsigned char footer[kFooterSize];
  if (::fseeko(file.get(), static_cast<off_t>(size - kFooterSize), SEEK_SET) != 0 ||
      std::fread(footer, 1, kFooterSize, file.get()) != kFooterSize) {
    fail(path, "cannot read the footer");
  }
  if (std::memcmp(footer, kFooterMagic, 8) != 0 || std::memcmp(footer + 56, kFooterEnd, 8) != 0) {
    fail(path, "no replay server footer (truncated, or not a replay node checkpoint)");
  }
  if (get<std::uint32_t>(footer, 8) != kFooterVersion) fail(path, "unsupported version");
  Footer f;
  f.observation_size = get<std::uint32_t>(footer, 12);
  f.table_bytes = get<std::uint64_t>(footer, 16);
  f.inserts = get<std::uint64_t>(footer, 24);
  f.batches = get<std::uint64_t>(footer, 32);
  f.credits = get<double>(footer, 40);
  f.hash = get<std::uint64_t>(footer, 48);
  if (f.table_bytes != size - kFooterSize) {
    fail(path, "truncated: the footer counts " + std::to_string(f.table_bytes) +
                   " table bytes, the file holds " + std::to_string(size - kFooterSize));
  }
  if (footer_hash(file.get(), f.table_bytes, footer, path) != f.hash) {
    fail(path, "corrupt (checksum mismatch)");
  }
  file.reset();
  std::unique_ptr<replay::Table> table;
  try {
    table = replay::Table::load_checkpoint(path);  // reads up to the table's own trailer
  } catch (const std::runtime_error& e) {
    throw CheckpointError(e.what());
  }
  const replay::TableConfig& tc = table->config();
  const bool prioritized = tc.selector == replay::SelectorKind::kPrioritized;
  if (tc.max_items != config_.capacity || prioritized != config_.prioritized ||
      tc.priority_exponent != config_.priority_exponent) {
    fail(path, "written with capacity " + std::to_string(tc.max_items) + ", selector " +
                   (prioritized ? "prioritized" : "uniform") + ", priority_exponent " +
                   std::to_string(tc.priority_exponent) + "; the replay params differ");
  }
  const replay::FieldSpec& obs = tc.spec.observation;
  const bool known_dtype =
      obs.dtype == replay::DType::kFloat32 || obs.dtype == replay::DType::kUInt8;
  if (!known_dtype || obs.shape.size() != 1 ||
      obs.shape[0] != static_cast<std::int64_t>(f.observation_size) ||
      tc.spec.action.dtype != replay::DType::kInt64 ||
      tc.spec.action.shape != std::vector<std::int64_t>{2} || !std::isfinite(f.credits)) {
    fail(path, "not a replay node table (observation or action layout)");
  }
  table_ = std::move(table);
  observation_size_ = f.observation_size;
  observation_type_ =
      obs.dtype == replay::DType::kUInt8 ? ObservationType::kUInt8 : ObservationType::kFloat32;
  inserts_ = f.inserts;
  batches_ = f.batches;
  credits_ = f.credits;
  last_checkpoint_inserts_ = inserts_;
}

}  // namespace tagflow::nodes
