// ReactionGraph: the dependency graph of an assembled program, and its levels.
//
// Edges: (1) each reaction to the next one of the same reactor (priority order); (2) a reaction
// that sets an output to every reaction that triggers on or reads an input connected to that
// output without a delay. Delayed connections and actions add no edge (their events are at later
// tags). Levels are a longest-path layering: a reaction's level is one more than the highest
// level among its predecessors, so reactions of one level never depend on each other.
//
// (3) ordering hints (add_ordering_hint): `first` before `second` at the same tag, added only
// when `second` does not already lead to `first` (a hint never creates a cycle; one that would is
// skipped). Federation uses them to run a federate's own outputs on a zero-delay cycle before it
// waits for the cycle's inputs (federate/reactor_federate.hpp).
//
// Contract: built once by Environment::assemble() from bound ports; pure computation, no
// threads. levels() throws AssemblyError naming the reactions and ports of a cycle with no delay.
#pragma once

#include <string>
#include <vector>

#include "reactors/reaction.hpp"
#include "reactors/reactor.hpp"

namespace tagflow::reactors {

class ReactionGraph {
 public:
  explicit ReactionGraph(const std::vector<Reactor*>& reactors);

  /// Orders `first` before `second` unless `second` already leads to `first` (then returns false
  /// and adds nothing). Both must belong to the reactors given to the constructor.
  bool add_ordering_hint(const Reaction& first, const Reaction& second);

  /// Reactions grouped by level, each group in a stable order (reactor, then priority). Also
  /// stores each reaction's level in it.
  [[nodiscard]] std::vector<std::vector<Reaction*>> levels();

 private:
  struct Edge {
    std::size_t to;
    std::string via;  // "ping.out -> pong.in", or empty for priority order
  };
  [[nodiscard]] std::string describe_cycle(const std::vector<bool>& remaining) const;
  [[nodiscard]] bool leads_to(std::size_t from, std::size_t to) const;
  [[nodiscard]] std::size_t index_of(const Reaction& reaction) const;

  std::vector<Reaction*> reactions_;
  std::vector<std::vector<Edge>> edges_;
};

}  // namespace tagflow::reactors
