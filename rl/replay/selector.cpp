#include "rl/replay/selector.hpp"

#include <stdexcept>

#include "rl/replay/ordered_selector.hpp"
#include "rl/replay/prioritized_selector.hpp"
#include "rl/replay/uniform_selector.hpp"

namespace tagflow::replay {

const char* selector_name(SelectorKind kind) {
  switch (kind) {
    case SelectorKind::kUniform:
      return "uniform";
    case SelectorKind::kPrioritized:
      return "prioritized";
    case SelectorKind::kFifo:
      return "fifo";
    case SelectorKind::kLifo:
      return "lifo";
  }
  return "unknown";
}

SelectorKind parse_selector(const std::string& name) {
  for (SelectorKind kind : {SelectorKind::kUniform, SelectorKind::kPrioritized, SelectorKind::kFifo,
                            SelectorKind::kLifo}) {
    if (name == selector_name(kind)) return kind;
  }
  throw std::invalid_argument("unknown replay selector '" + name +
                              "' (expected uniform, prioritized, fifo or lifo)");
}

void Selector::apply(const SelectorWrite* writes, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    if (writes[i].insert) {
      insert(writes[i].slot, writes[i].priority);
    } else {
      update(writes[i].slot, writes[i].priority);
    }
  }
}

void Selector::select(std::size_t batch_size, ReplayRng& rng, std::vector<std::size_t>& slots,
                      std::vector<double>& probabilities) {
  Selection selection;
  selection.slots = std::move(slots);
  selection.probabilities = std::move(probabilities);
  draw(batch_size, rng, selection);
  resolve(selection);
  slots = std::move(selection.slots);
  probabilities = std::move(selection.probabilities);
}

std::unique_ptr<Selector> make_selector(SelectorKind kind, std::size_t capacity,
                                        double priority_exponent, bool binary_sum_tree) {
  switch (kind) {
    case SelectorKind::kUniform:
      return std::make_unique<UniformSelector>(capacity);
    case SelectorKind::kPrioritized:
      if (binary_sum_tree) {
        return std::make_unique<BinaryPrioritizedSelector>(capacity, priority_exponent);
      }
      return std::make_unique<PrioritizedSelector>(capacity, priority_exponent);
    case SelectorKind::kFifo:
      return std::make_unique<OrderedSelector>(capacity, false);
    case SelectorKind::kLifo:
      return std::make_unique<OrderedSelector>(capacity, true);
  }
  throw std::invalid_argument("make_selector: unknown selector kind");
}

}  // namespace tagflow::replay
