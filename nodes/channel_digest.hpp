// ChannelDigests: a running 64-bit hash per output channel of a node reactor, over the tag and
// the encoded bytes of every value it sent, in tag order (FNV-1a over the 12 tag bytes, then
// fnv1a64_wide over the value: common/fnv1a.hpp). The bytes are the value's one encoding
// (EncodedValue::bytes(), encoded_value.hpp): the very bytes a federated link sends.
//
// Each channel has exactly one writer (the reactor that owns the output), so the sequence each
// hash sees depends only on logical time, never on worker threads: the cluster folds the
// channel hashes in connection order into the run's digest (docs/ARCHITECTURE.md, Determinism).
// The digest covers only what was sent at tags before the run's cutoff (the earliest stop
// proposal, nodes/README.md), which is known only after the run: each channel keeps the hash and
// count after every record (32 bytes per value sent, in blocks of 4,096 that never move) so
// hash_before()/count_before() can answer for any cutoff after the floor. Where the cutoff can
// never be a tag already processed (a program that is the whole run: reactors::EnvironmentConfig::
// cutoff_never_behind), it keeps only the records of the newest tag and the one before them, so a
// long run's memory stays flat. In a federate, the coordinator's FLOOR (federation/PROTOCOL.md
// §5.1, Environment::cutoff_floor()) says which tags no cutoff can still fall before: each time a
// block fills, the records only such a cutoff would need are dropped, so the history spans the
// federation's spread in logical time, not the run. Not thread-safe on its own: one channel is
// written only by its owner's reactions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/fnv1a.hpp"
#include "common/state_stream.hpp"
#include "nodes/messages.hpp"
#include "reactors/environment.hpp"
#include "reactors/tag.hpp"
#include "transport/payload.hpp"

namespace tagflow::nodes {

class ChannelDigests {
 public:
  /// `recent_only`: the cutoff will be at or after every tag recorded before it was proposed
  /// (EnvironmentConfig::cutoff_never_behind), so older records are dropped.
  explicit ChannelDigests(std::size_t channels = 0, bool recent_only = false)
      : hashes_(channels, kInitial),
        counts_(channels, 0),
        history_(channels),
        recent_only_(recent_only) {}
  /// A reactor's channels: recent records only when `env` is the whole run
  /// (cutoff_never_behind), else the records after `env`'s cutoff floor (and the one before it).
  ChannelDigests(std::size_t channels, const reactors::Environment& env)
      : ChannelDigests(channels, env.config().cutoff_never_behind) {
    if (!recent_only_) env_ = &env;
  }

  void record(std::size_t channel, reactors::Tag tag, const transport::Payload& bytes) {
    // The tag's 12 bytes: time (8) and microstep (4), little-endian.
    std::uint64_t hash = fnv1a64_u64(static_cast<std::uint64_t>(tag.time_ns()), hashes_[channel]);
    hash = fnv1a64_le<4>(tag.microstep(), hash);
    hashes_[channel] = fnv1a64_wide(bytes.data, bytes.size, hash);
    ++counts_[channel];
    History& history = history_[channel];
    // A cutoff after this tag needs only this record; one at it, the newest one before it.
    if (recent_only_) {
      history.keep_from(tag);
    } else if (env_ != nullptr && history.block_full()) {
      // A cutoff is after the floor: it needs the records after it and the newest one below.
      const reactors::Tag floor = env_->cutoff_floor();
      if (floor != reactors::Tag::never()) history.keep_from(floor);
    }
    history.push_back({tag, hashes_[channel], counts_[channel]});
  }
  /// The hash over the values sent at tags < cutoff.
  [[nodiscard]] std::uint64_t hash_before(std::size_t channel, reactors::Tag cutoff) const {
    const Entry* e = last_before(channel, cutoff);
    return e == nullptr ? kInitial : e->hash;
  }
  /// The number of values sent at tags < cutoff.
  [[nodiscard]] std::uint64_t count_before(std::size_t channel, reactors::Tag cutoff) const {
    const Entry* e = last_before(channel, cutoff);
    return e == nullptr ? 0 : e->count;
  }
  [[nodiscard]] std::uint64_t hash(std::size_t channel) const { return hashes_[channel]; }
  [[nodiscard]] std::uint64_t count(std::size_t channel) const { return counts_[channel]; }
  [[nodiscard]] std::size_t size() const { return hashes_.size(); }
  /// The records `channel` keeps for cutoffs (32 bytes each).
  [[nodiscard]] std::size_t records_kept(std::size_t channel) const {
    return history_[channel].size();
  }

  /// Checkpoints: every channel's hash, count and history (so any later cutoff still answers).
  void save(StateWriter& out) const {
    out.u64(hashes_.size());
    for (std::size_t c = 0; c < hashes_.size(); ++c) {
      out.u64(hashes_[c]);
      out.u64(counts_[c]);
      out.u64(history_[c].size());
      for (std::size_t i = 0; i < history_[c].size(); ++i) {
        const Entry& e = history_[c][i];
        out.i64(e.tag.time_ns());
        out.u32(e.tag.microstep());
        out.u64(e.hash);
        out.u64(e.count);
      }
    }
  }
  /// Throws StateError when the bytes do not fit (another number of channels).
  void load(StateReader& in) {
    if (in.u64() != hashes_.size()) in.fail(std::to_string(hashes_.size()) + " digest channels");
    for (std::size_t c = 0; c < hashes_.size(); ++c) {
      hashes_[c] = in.u64();
      counts_[c] = in.u64();
      const std::uint64_t n = in.u64();
      if (n > in.left() / 28) in.fail("a digest history");
      history_[c].clear();
      for (std::uint64_t i = 0; i < n; ++i) {
        const std::int64_t time = in.i64();
        const std::uint32_t micro = in.u32();
        const std::uint64_t hash = in.u64();
        const std::uint64_t count = in.u64();
        history_[c].push_back({reactors::Tag(time, micro), hash, count});
      }
    }
  }

 private:
  static constexpr std::uint64_t kInitial = kFnv1aOffset;
  struct Entry {
    reactors::Tag tag;
    std::uint64_t hash;
    std::uint64_t count;
  };
  /// One channel's entries in blocks of kBlock that never move: a record appends in place, with
  /// no copy of what came before as a growing vector makes (a run records hundreds of thousands).
  class History {
   public:
    static constexpr std::size_t kBlock = 4096;  // 128 KiB
    void push_back(const Entry& e) {
      if (size_ == blocks_.size() * kBlock) blocks_.push_back(std::make_unique<Entry[]>(kBlock));
      blocks_[size_ / kBlock][size_ % kBlock] = e;
      ++size_;
    }
    [[nodiscard]] const Entry& operator[](std::size_t i) const {
      return blocks_[i / kBlock][i % kBlock];
    }
    Entry& at(std::size_t i) { return blocks_[i / kBlock][i % kBlock]; }
    [[nodiscard]] std::size_t size() const { return size_; }
    /// True when the next push_back starts a new block.
    [[nodiscard]] bool block_full() const { return size_ != 0 && size_ % kBlock == 0; }
    /// Drops the entries a cutoff after `tag` cannot need: all before the newest one below it.
    void keep_from(reactors::Tag tag) {
      const std::size_t first = lower_bound(tag);  // the first entry at or after `tag`
      if (first <= 1) return;
      const std::size_t keep = size_ - (first - 1);
      for (std::size_t i = 0; i < keep; ++i) at(i) = (*this)[first - 1 + i];
      size_ = keep;
      blocks_.resize(std::min(blocks_.size(), (size_ + kBlock - 1) / kBlock));
    }
    void clear() {
      blocks_.clear();
      size_ = 0;
    }
    /// The number of entries with a tag before `tag` (the tags ascend).
    [[nodiscard]] std::size_t lower_bound(reactors::Tag tag) const {
      std::size_t low = 0, high = size_;
      while (low < high) {
        const std::size_t mid = low + (high - low) / 2;
        if ((*this)[mid].tag < tag) {
          low = mid + 1;
        } else {
          high = mid;
        }
      }
      return low;
    }

   private:
    std::vector<std::unique_ptr<Entry[]>> blocks_;
    std::size_t size_ = 0;
  };

  const Entry* last_before(std::size_t channel, reactors::Tag cutoff) const {
    const History& h = history_[channel];
    const std::size_t low = h.lower_bound(cutoff);
    return low == 0 ? nullptr : &h[low - 1];
  }

  std::vector<std::uint64_t> hashes_;
  std::vector<std::uint64_t> counts_;
  std::vector<History> history_;  // per channel, in tag order
  bool recent_only_ = false;
  const reactors::Environment* env_ = nullptr;  // a federate's: its cutoff floor
};

/// Sets `value` (a shared, encoded message: Encoded<T>) on every channel of `port`, an output
/// multiport, and records it in `digests` at `tag`. Each channel but the last takes a count of
/// the one value; the last takes the caller's, moved rather than copied and dropped (two locked
/// operations less per message).
template <class OutputMultiport, class Value>
void send_on_every_channel(OutputMultiport& port, ChannelDigests& digests, reactors::Tag tag,
                           Value value) {
  const std::size_t channels = port.size();
  for (std::size_t c = 0; c < channels; ++c) {
    digests.record(c, tag, value->bytes());
    port[c].set(c + 1 == channels ? std::move(value) : value);
  }
}

}  // namespace tagflow::nodes
