// ReactionGraph: the dependency graph of an assembled program, and its levels.
//
// Edges: (1) each reaction to the next one of the same reactor (priority order); (2) a reaction
// that sets an output to every reaction that triggers on or reads an input connected to that
// output without a delay. Delayed connections and actions add no edge (their events are at later
// tags). Levels are a longest-path layering: a reaction's level is one more than the highest
// level among its predecessors, so reactions of one level never depend on each other.
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

  /// Reactions grouped by level, each group in a stable order (reactor, then priority). Also
  /// stores each reaction's level in it.
  [[nodiscard]] std::vector<std::vector<Reaction*>> levels();

 private:
  struct Edge {
    std::size_t to;
    std::string via;  // "ping.out -> pong.in", or empty for priority order
  };
  [[nodiscard]] std::string describe_cycle(const std::vector<bool>& remaining) const;

  std::vector<Reaction*> reactions_;
  std::vector<std::vector<Edge>> edges_;
};

}  // namespace tagflow::reactors
