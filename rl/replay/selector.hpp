// Selector: how a table picks the items of a sample. One interface, four strategies (uniform,
// prioritized, FIFO, LIFO); the table owns one selector.
//
// A selection runs in two phases so that several samplers can share the expensive part:
//   1. draw(): consumes the random source (the only phase that does), with the selector's state
//      stable — the table calls it under its mutex, so a table's samples do not depend on how
//      the samplers' threads interleave;
//   2. resolve(): turns the draws into slots and probabilities, reading the selector's state only
//      (the prioritized selector's tree descent). The table calls it under the shared side of its
//      tree lock, from any number of threads at once.
//
// Items are named by slot, an index in [0, capacity) that the table assigns; a slot holds at most
// one item at a time. A selector sees only committed items: the table calls insert() when an
// item's data is fully written, remove() when it is evicted, update() when its priority changes.
//
// Thread-safety: const methods may run concurrently with each other; insert/update/remove/apply
// need exclusive access (Table holds its mutex and the exclusive side of its tree lock).
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

/// One sample's draws and, once resolved, its slots and their probabilities.
struct Selection {
  std::vector<double> uniforms;  // phase 1 of a selector that descends a tree, one per draw
  std::vector<std::size_t> slots;
  std::vector<double> probabilities;
};

/// A deferred selector change (Table's lazy writing): insert a slot, or set a present slot's
/// priority.
struct SelectorWrite {
  std::size_t slot = 0;
  double priority = 0.0;
  bool insert = false;
};

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
  /// Applies `count` inserts and updates as if one by one in order (a slot may be inserted and
  /// then updated in one batch); the prioritized selector propagates the sums once per batch.
  virtual void apply(const SelectorWrite* writes, std::size_t count);
  /// Makes `slot` unselectable.
  virtual void remove(std::size_t slot) = 0;
  /// The selector's own order of its slots where its draws depend on it (the uniform selector's
  /// dense list, which removals permute), for a checkpoint: a table restored with
  /// restore_draw_order() then draws what the saved one would have. Empty when the draws depend
  /// only on which slots are present and their priorities.
  [[nodiscard]] virtual std::vector<std::size_t> draw_order() const { return {}; }
  /// Puts the slots in `order`, a permutation of the present slots as draw_order() gave them;
  /// false (and nothing changed) when it is not one.
  virtual bool restore_draw_order(const std::vector<std::size_t>& order) { return order.empty(); }
  /// Number of selectable items.
  [[nodiscard]] virtual std::size_t size() const = 0;
  /// Whether a draw can succeed now (size() > 0, and for the prioritized selector a positive
  /// total priority).
  [[nodiscard]] virtual bool can_select() const = 0;
  /// Phase 1: draws `batch_size` items' random numbers from `rng` into `selection` (selectors
  /// without a resolve phase fill slots and probabilities here). Requires can_select().
  virtual void draw(std::size_t batch_size, ReplayRng& rng, Selection& selection) const = 0;
  /// Phase 2: fills selection.slots and selection.probabilities (both batch_size long) from the
  /// draws; the selector's state must be the one draw() saw, or later changes that keep
  /// can_select() true.
  virtual void resolve(Selection& /*selection*/) const {}
  /// Both phases: draws `batch_size` slots into `slots`, with the probability of each draw in
  /// `probabilities`. Requires can_select().
  void select(std::size_t batch_size, ReplayRng& rng, std::vector<std::size_t>& slots,
              std::vector<double>& probabilities);
};

/// A selector for slots in [0, capacity). `priority_exponent` (α) is used by kPrioritized only,
/// over the K-ary SumTree, or the textbook binary tree with `binary_sum_tree`.
[[nodiscard]] std::unique_ptr<Selector> make_selector(SelectorKind kind, std::size_t capacity,
                                                      double priority_exponent,
                                                      bool binary_sum_tree = false);

}  // namespace tagflow::replay
