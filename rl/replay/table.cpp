// Table: construction, insertion (lazy writing), eviction, priority updates, close.
// Sampling is in table_sample.cpp, checkpoints in table_checkpoint.cpp.
#include "rl/replay/table.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "rl/replay/prioritized_selector.hpp"

namespace tagflow::replay {
namespace {

// Frames beyond two per item that samplers and writers may hold at once.
constexpr std::size_t kFrameSlack = std::size_t{1} << 20;

const TableConfig& checked(const TableConfig& config) {
  if (config.max_items == 0 || config.max_items > kMaxTableItems) {
    throw std::invalid_argument("replay table '" + config.name +
                                "': max_items must be in [1, 2^30]");
  }
  const std::size_t smallest_item =
      config.spec.action.bytes() + sizeof(float) + 1 + 2 * config.spec.observation.bytes();
  if (config.max_bytes != 0 && config.max_bytes < smallest_item) {
    throw std::invalid_argument("replay table '" + config.name + "': max_bytes " +
                                std::to_string(config.max_bytes) + " is below one item (" +
                                std::to_string(smallest_item) + " bytes)");
  }
  return config;
}

void check_priority(double priority) {
  if (!std::isfinite(priority) || priority < 0.0) {
    throw std::invalid_argument("replay: priority must be finite and >= 0, got " +
                                std::to_string(priority));
  }
}

}  // namespace

Table::Table(TableConfig config)
    : config_(checked(config)),
      observation_bytes_(config_.spec.observation.bytes()),
      action_bytes_(config_.spec.action.bytes()),
      item_bytes_(action_bytes_ + sizeof(float) + 1),
      slots_(config_.max_items),
      times_sampled_(new std::atomic<std::uint32_t>[config_.max_items]()),
      actions_(config_.max_items * action_bytes_),
      frames_(observation_bytes_, 2 * config_.max_items + kFrameSlack),
      selector_(make_selector(config_.selector, config_.max_items, config_.priority_exponent,
                              config_.binary_sum_tree)),
      limiter_(config_.rate_limiter),
      rng_(config_.seed) {
  pending_.reserve(kLazyBatch);
}

Table::~Table() { close(); }

void Table::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
  changed_.notify_all();
}

bool Table::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

std::size_t Table::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return committed_;
}

TableInfo Table::info() const {
  std::lock_guard<std::mutex> lock(mutex_);
  TableInfo info;
  info.size = committed_;
  info.bytes = bytes_;
  info.inserts = limiter_.inserts();
  info.sampled_items = limiter_.sampled_items();
  info.evictions = evictions_;
  info.next_key = next_key_;
  info.frames = frames_.live();
  info.shared_frames = shared_frames_;
  flush_pending();
  if (const auto* prioritized = dynamic_cast<const PrioritizedSelector*>(selector_.get())) {
    info.total_priority = prioritized->total();
  } else if (const auto* binary = dynamic_cast<const BinaryPrioritizedSelector*>(selector_.get())) {
    info.total_priority = binary->total();
  }
  return info;
}

bool Table::live(ItemKey key) const {
  if (key < oldest_key_ || key >= next_key_) return false;
  const Slot& slot = slots_[slot_of(key)];
  return slot.key == key && slot.state == SlotState::kReady;
}

double Table::priority(ItemKey key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!live(key)) return -1.0;
  const std::size_t index = slot_of(key);
  for (auto write = pending_.rbegin(); write != pending_.rend(); ++write) {
    if (write->slot == index) return write->priority;
  }
  return slots_[index].priority;
}

void Table::queue_write(std::size_t slot, double priority, bool insert) {
  pending_.push_back(SelectorWrite{slot, priority, insert});
  if (pending_.size() >= kLazyBatch) flush_pending();
}

void Table::flush_pending() const {
  if (pending_.empty()) return;
  std::lock_guard<WriterPriorityMutex> tree(tree_mutex_);
  apply_pending();
}

// An insert's slot fields were written at commit (its slot was in no selector then); an update's
// priority is written here, where no sampler reads the slot.
void Table::apply_pending() const {
  for (const SelectorWrite& write : pending_) {
    if (!write.insert) slots_[write.slot].priority = write.priority;
  }
  selector_->apply(pending_.data(), pending_.size());
  pending_.clear();
}

void Table::validate(const Transition& t) const {
  const auto fail = [&](const char* field, std::size_t got, std::size_t want) {
    throw std::invalid_argument("replay table '" + config_.name + "': " + field + " has " +
                                std::to_string(got) + " bytes, the table's spec says " +
                                std::to_string(want));
  };
  if (t.observation.size != observation_bytes_) {
    fail("observation", t.observation.size, observation_bytes_);
  }
  if (t.next_observation.size != observation_bytes_) {
    fail("next_observation", t.next_observation.size, observation_bytes_);
  }
  if (t.action.size != action_bytes_) fail("action", t.action.size, action_bytes_);
}

// Bytes an item gives back when evicted: its own fields, its observation (any earlier item that
// shared it is gone, eviction being FIFO), and its next observation unless a live later item
// uses that frame as its observation (then the later item accounts for it).
std::size_t Table::freed_bytes(const Slot& slot) const {
  return item_bytes_ + observation_bytes_ + (slot.next_shared ? 0 : observation_bytes_);
}

bool Table::room_ready(std::size_t new_bytes) const {
  std::size_t items = static_cast<std::size_t>(next_key_ - oldest_key_);
  std::size_t bytes = bytes_;
  ItemKey key = oldest_key_;
  while (items >= config_.max_items ||
         (config_.max_bytes != 0 && bytes + new_bytes > config_.max_bytes)) {
    const Slot& slot = slots_[slot_of(key)];
    if (slot.state != SlotState::kReady) return false;  // oldest still being written
    bytes -= freed_bytes(slot);
    --items;
    ++key;
  }
  return true;
}

// Evictions apply the queued writes first (a queued write may name the evicted slot) and happen
// under the exclusive tree lock: the slot is reused at once, and no sampler may be reading it.
void Table::make_room(std::size_t new_bytes) {
  const auto full = [&] {
    return static_cast<std::size_t>(next_key_ - oldest_key_) >= config_.max_items ||
           (config_.max_bytes != 0 && bytes_ + new_bytes > config_.max_bytes);
  };
  if (!full()) return;
  std::lock_guard<WriterPriorityMutex> tree(tree_mutex_);
  apply_pending();
  while (full()) evict_oldest();
}

void Table::evict_oldest() {
  Slot& slot = slots_[slot_of(oldest_key_)];
  selector_->remove(slot_of(oldest_key_));
  bytes_ -= freed_bytes(slot);
  frames_.release(slot.observation);
  frames_.release(slot.next_observation);
  slot = Slot{};
  times_sampled_[slot_of(oldest_key_)].store(0, std::memory_order_relaxed);
  --committed_;
  ++oldest_key_;
  ++evictions_;
}

ReplayStatus Table::insert(const Transition& transition, double priority,
                           std::chrono::milliseconds timeout, ItemKey* key) {
  return insert_impl(transition, priority, timeout, true, key, nullptr);
}

ReplayStatus Table::try_insert(const Transition& transition, double priority, ItemKey* key) {
  return insert_impl(transition, priority, std::chrono::milliseconds(0), false, key, nullptr);
}

// Lazy writing, in three steps:
//   1. under the mutex: wait for the rate limiter and for room, evict, reserve the slot (state
//      kWriting, invisible to selectors) and its frames;
//   2. without the lock: copy the observation bytes into the reserved frames and the action into
//      the slot's row, memory nobody else reads until step 3;
//   3. under the mutex: commit (kReady, a queued selector insert); the item can be sampled once
//      the queue is applied, at the latest by the next sample.
ReplayStatus Table::insert_impl(const Transition& transition, double priority,
                                std::chrono::milliseconds timeout, bool wait, ItemKey* key_out,
                                Stream* stream) {
  validate(transition);
  check_priority(priority);
  // The stream's frame is referenced by this writer, so its bytes are stable without the lock.
  const bool same_observation = stream != nullptr && stream->frame != kNoFrame &&
                                std::memcmp(frames_.data(stream->frame),
                                            transition.observation.data, observation_bytes_) == 0;
  const std::size_t worst_bytes = item_bytes_ + 2 * observation_bytes_;

  std::unique_lock<std::mutex> lock(mutex_);
  const bool ready = wait_until(lock, timeout, wait, [&] {
    return closed_ ||
           (!checkpointing_ && limiter_.can_insert(committed_) && room_ready(worst_bytes));
  });
  if (closed_) return ReplayStatus::kClosed;
  if (!ready) return ReplayStatus::kTimedOut;
  make_room(worst_bytes);

  const ItemKey key = next_key_++;
  const std::size_t index = slot_of(key);
  Slot& slot = slots_[index];
  slot.key = key;
  slot.state = SlotState::kWriting;
  slot.next_observation = frames_.allocate();
  std::size_t new_bytes = item_bytes_ + observation_bytes_;
  if (same_observation) {
    frames_.retain(stream->frame);
    slot.observation = stream->frame;
    ++shared_frames_;
    if (live(stream->key)) {
      slots_[slot_of(stream->key)].next_shared = true;
    } else {
      new_bytes += observation_bytes_;  // its first user is gone; this item accounts for it
    }
  } else {
    slot.observation = frames_.allocate();
    new_bytes += observation_bytes_;
  }
  bytes_ += new_bytes;
  limiter_.record_insert();
  const FrameId observation = slot.observation;
  const FrameId next_observation = slot.next_observation;
  lock.unlock();

  if (!same_observation) {
    std::memcpy(frames_.data(observation), transition.observation.data, observation_bytes_);
  }
  std::memcpy(frames_.data(next_observation), transition.next_observation.data, observation_bytes_);
  if (action_bytes_ > 0) {
    std::memcpy(actions_.data() + index * action_bytes_, transition.action.data, action_bytes_);
  }

  lock.lock();
  slot.reward = transition.reward;
  slot.done = transition.done ? 1 : 0;
  slot.priority = priority;
  slot.state = SlotState::kReady;
  ++committed_;
  queue_write(index, priority, true);
  if (stream != nullptr) {
    if (stream->frame != kNoFrame) frames_.release(stream->frame);
    frames_.retain(next_observation);
    stream->frame = next_observation;
    stream->key = key;
  }
  changed_.notify_all();
  lock.unlock();
  if (key_out != nullptr) *key_out = key;
  return ReplayStatus::kOk;
}

std::size_t Table::update_priorities(const std::vector<ItemKey>& keys,
                                     const std::vector<double>& priorities) {
  if (keys.size() != priorities.size()) {
    throw std::invalid_argument("replay: update_priorities got " + std::to_string(keys.size()) +
                                " keys and " + std::to_string(priorities.size()) + " priorities");
  }
  for (double priority : priorities) check_priority(priority);
  std::size_t applied = 0;
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!live(keys[i])) continue;
    queue_write(slot_of(keys[i]), priorities[i], false);
    ++applied;
  }
  if (applied > 0) changed_.notify_all();  // a table at total priority 0 may sample again
  return applied;
}

void Table::release_stream(Stream& stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stream.frame != kNoFrame) frames_.release(stream.frame);
  stream = Stream{};
}

}  // namespace tagflow::replay
