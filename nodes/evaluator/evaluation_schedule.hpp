// EvaluationSchedule: what an evaluator replica does with the weights it receives, the same in
// both modes — every `every` weights versions it plays `episodes` greedy episodes of its env on
// fixed seeds (nodes/learner/evaluator.hpp) and records their mean return; once a mean reaches
// the target return (when the file's stop has one), it says so.
// Deterministic: the same weights stream gives the same evaluations.
// Not thread-safe (the reactor or actor that owns it calls it).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "nodes/kind/replica_config.hpp"
#include "nodes/learner/evaluator.hpp"
#include "nodes/messages.hpp"

namespace tagflow::nodes {

struct EvaluatorSettings {
  EvaluationConfig evaluation;          // env, network, episodes, step cap, seed
  std::uint64_t every = 100;            // weights versions between evaluations
  std::optional<double> target_return;  // stop.target_return, when the evaluator stops the run

  /// From an evaluator replica's configuration (its params read by evaluator_kind.cpp).
  [[nodiscard]] static EvaluatorSettings of(const ReplicaConfig& replica);
};

class EvaluationSchedule {
 public:
  explicit EvaluationSchedule(EvaluatorSettings settings);

  /// Takes weights; returns the mean return when this version is due an evaluation. Versions
  /// that go back (a learner restarted in actor mode counts from its checkpoint's version, or
  /// from 1) are counted from anew: the next evaluation is the first version at or past `every`.
  std::optional<double> on_weights(const WeightsMessage& weights);

  [[nodiscard]] const std::vector<double>& evaluations() const { return evaluations_; }
  [[nodiscard]] bool target_reached() const { return target_reached_; }
  [[nodiscard]] std::uint64_t weights_version() const { return version_; }

 private:
  EvaluatorSettings settings_;
  std::unique_ptr<Evaluator> evaluator_;
  std::vector<double> evaluations_;
  std::optional<std::uint64_t> last_evaluated_;
  std::uint64_t version_ = 0;
  bool target_reached_ = false;
};

}  // namespace tagflow::nodes
