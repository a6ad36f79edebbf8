#include "reactors/reaction_graph.hpp"

#include <algorithm>
#include <map>

#include "reactors/errors.hpp"
#include "reactors/port.hpp"

namespace tagflow::reactors {

ReactionGraph::ReactionGraph(const std::vector<Reactor*>& reactors) {
  std::map<const Reaction*, std::size_t> index;
  for (Reactor* reactor : reactors) {
    for (const auto& reaction : reactor->reactions()) {
      index[reaction.get()] = reactions_.size();
      reactions_.push_back(reaction.get());
    }
  }
  edges_.resize(reactions_.size());
  // Readers of each input: reactions that declare it as a trigger or a source.
  std::map<const TriggerBase*, std::vector<std::size_t>> readers;
  for (std::size_t i = 0; i < reactions_.size(); ++i) {
    for (TriggerBase* t : reactions_[i]->declared_triggers()) readers[t].push_back(i);
    for (TriggerBase* t : reactions_[i]->declared_sources()) readers[t].push_back(i);
  }
  for (std::size_t i = 0; i < reactions_.size(); ++i) {
    const Reaction& reaction = *reactions_[i];
    const auto& siblings = reaction.owner().reactions();
    if (reaction.priority() + 1 < siblings.size()) {
      edges_[i].push_back(Edge{index.at(siblings[reaction.priority() + 1].get()), ""});
    }
    for (TriggerBase* effect : reaction.declared_effects()) {
      if (effect->kind() != ElementKind::kOutput) continue;
      for (PortBase* input : static_cast<PortBase*>(effect)->downstream()) {
        if (input->has_delay()) continue;
        const auto found = readers.find(input);
        if (found == readers.end()) continue;
        for (std::size_t reader : found->second) {
          edges_[i].push_back(Edge{reader, effect->full_name() + " -> " + input->full_name()});
        }
      }
    }
  }
}

std::size_t ReactionGraph::index_of(const Reaction& reaction) const {
  const auto found = std::find(reactions_.begin(), reactions_.end(), &reaction);
  if (found == reactions_.end()) {
    throw AssemblyError("ordering hint names reaction " + reaction.full_name() +
                        ", which is not part of this program");
  }
  return static_cast<std::size_t>(found - reactions_.begin());
}

bool ReactionGraph::leads_to(std::size_t from, std::size_t to) const {
  std::vector<bool> seen(reactions_.size(), false);
  std::vector<std::size_t> stack{from};
  seen[from] = true;
  while (!stack.empty()) {
    const std::size_t at = stack.back();
    stack.pop_back();
    if (at == to) return true;
    for (const Edge& e : edges_[at]) {
      if (!seen[e.to]) {
        seen[e.to] = true;
        stack.push_back(e.to);
      }
    }
  }
  return false;
}

bool ReactionGraph::add_ordering_hint(const Reaction& first, const Reaction& second) {
  const std::size_t from = index_of(first);
  const std::size_t to = index_of(second);
  if (from == to || leads_to(to, from)) return false;
  edges_[from].push_back(Edge{to, "(ordering hint)"});
  return true;
}

std::vector<std::vector<Reaction*>> ReactionGraph::levels() {
  const std::size_t n = reactions_.size();
  std::vector<std::size_t> in_degree(n, 0);
  for (const auto& out : edges_) {
    for (const Edge& e : out) ++in_degree[e.to];
  }
  std::vector<std::size_t> level(n, 0);
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (in_degree[i] == 0) ready.push_back(i);
  }
  std::vector<bool> remaining(n, true);
  std::size_t done = 0;
  while (!ready.empty()) {
    const std::size_t i = ready.back();
    ready.pop_back();
    remaining[i] = false;
    ++done;
    for (const Edge& e : edges_[i]) {
      level[e.to] = std::max(level[e.to], level[i] + 1);
      if (--in_degree[e.to] == 0) ready.push_back(e.to);
    }
  }
  if (done != n) throw AssemblyError(describe_cycle(remaining));

  std::vector<std::vector<Reaction*>> result;
  for (std::size_t i = 0; i < n; ++i) {
    if (level[i] >= result.size()) result.resize(level[i] + 1);
    result[level[i]].push_back(reactions_[i]);
    reactions_[i]->level_ = level[i];
  }
  return result;
}

std::string ReactionGraph::describe_cycle(const std::vector<bool>& remaining) const {
  // Every remaining reaction lies on or downstream of a cycle; walking remaining edges from any
  // of them must revisit a reaction, and the walk from that first revisit is a cycle.
  std::size_t start = 0;
  while (!remaining[start]) ++start;
  std::vector<std::size_t> path;
  std::vector<const Edge*> via;
  std::vector<long> position(reactions_.size(), -1);
  std::size_t at = start;
  while (position[at] < 0) {
    position[at] = static_cast<long>(path.size());
    path.push_back(at);
    const Edge* next = nullptr;
    for (const Edge& e : edges_[at]) {
      if (remaining[e.to]) {
        next = &e;
        break;
      }
    }
    via.push_back(next);
    at = next->to;
  }
  std::string text = "cycle with no delay: ";
  for (auto i = static_cast<std::size_t>(position[at]); i < path.size(); ++i) {
    text += reactions_[path[i]]->full_name();
    text += via[i]->via.empty() ? " -> (priority order) -> " : " -> [" + via[i]->via + "] -> ";
  }
  text += reactions_[at]->full_name();
  text += "; add an `after` delay to one of these connections or break the cycle with an action";
  return text;
}

}  // namespace tagflow::reactors
