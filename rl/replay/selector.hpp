// Selector: how a table picks the items of a sample. One interface, four strategies (uniform,
// prioritized, FIFO, LIFO); the table owns one selector and calls it under the table's lock.
//
// Items are named by slot, an index in [0, capacity) that the table assigns; a slot holds at most
// one item at a time. A selector sees only committed items: the table calls insert() when an
// item's data is fully written, remove() when it is evicted, update() when its priority changes.
//
// Thread-safety: none; the caller serializes every call (Table holds its mutex).
// Errors: calling insert() on a slot already present, or remove()/update() on an absent one, is a
// programmer error (checked with assertions in debug builds only: these run per item).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace tagflow::replay {

enum class SelectorKind : std::uint8_t { kUniform = 0, kPrioritized = 1, kFifo = 2, kLifo = 3 };

/// "uniform", "prioritized", "fifo", "lifo".
[[nodiscard]] const char* selector_name(SelectorKind kind);
/// Inverse of selector_name; throws std::invalid_argument naming the unknown value.
[[nodiscard]] SelectorKind parse_selector(const std::string& name);

/// The random source selectors draw from.
using ReplayRng = std::mt19937_64;

class Selector {
 public:
  virtual ~Selector() = default;

  /// Makes `slot` selectable with `priority` (already validated by the table: finite, ≥ 0).
  virtual void insert(std::size_t slot, double priority) = 0;
  /// Changes the priority of a present slot. Non-prioritized selectors ignore it.
  virtual void update(std::size_t slot, double priority) = 0;
  /// update() for `count` slots at once (the prioritized selector recomputes each affected tree
  /// node once).
  virtual void update_batch(const std::size_t* slots, const double* priorities, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) update(slots[i], priorities[i]);
  }
  /// Makes `slot` unselectable.
  virtual void remove(std::size_t slot) = 0;
  /// Number of selectable items.
  [[nodiscard]] virtual std::size_t size() const = 0;
  /// Whether a draw can succeed now (size() > 0, and for the prioritized selector a positive
  /// total priority).
  [[nodiscard]] virtual bool can_select() const = 0;
  /// Draws `batch_size` slots into `slots`, with the probability of each draw in `probabilities`
  /// (both resized to batch_size). Requires can_select().
  virtual void select(std::size_t batch_size, ReplayRng& rng, std::vector<std::size_t>& slots,
                      std::vector<double>& probabilities) = 0;
};

/// A selector for slots in [0, capacity). `priority_exponent` (α) is used by kPrioritized only.
[[nodiscard]] std::unique_ptr<Selector> make_selector(SelectorKind kind, std::size_t capacity,
                                                      double priority_exponent);

}  // namespace tagflow::replay
