// PolicyBankReactor: the reactor binding of PolicyBank — the inference node of a multi-agent
// cluster (links LibTorch).
//
// Ports (configs/README.md): inputs `observations` (AgentObservationsMessage), `weights`; output
// `actions` (AgentActionsMessage). Multiports with one channel per linked replica; the request on
// observations channel c is answered on actions channel c, and weights channel c carries the
// policy of the learner at its end (`weight_policies[c]`).
//
// Output `experience` (TransitionsMessage, one channel per linked replay; `experience_policies[c]`
// the policies of the replay at its end): the transitions outside clients logged through the
// replica's gateway (nodes/gateway/PROTOCOL.md §4.3), taken from `set_experience_source` and sent
// at the tag of whichever reaction runs next — loading weights or answering observations — each
// channel getting its policies' rows. Which tag they enter at depends on wall-clock time: a run
// with logged experience has no reproducible digest.
//
// Per-tag protocol (logical time only): `weights` load first (declaration order), then every
// request present at the tag is answered together (PolicyBank::serve: batched per policy, same
// shapes stacked). A refused request is dropped, counted and logged once; the others are answered.
// Thread-safety: one reaction at a time (reactor runtime); counters are atomics.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

#include "nodes/channel_digest.hpp"
#include "nodes/encoded_value.hpp"
#include "nodes/inference/policy_bank.hpp"
#include "nodes/node_metrics.hpp"
#include "reactors/reactors.hpp"

namespace tagflow::nodes {

struct PolicyBankPortWidths {
  std::size_t observations = 0, actions = 0;
  std::vector<int> weight_policies;  // per weights channel: the policy its learner trains
  std::vector<std::vector<int>> experience_policies;  // per experience channel: its policies
};

class PolicyBankReactor : public reactors::Reactor {
 public:
  reactors::InputMultiport<Encoded<AgentObservationsMessage>> observations;
  reactors::InputMultiport<Encoded<WeightsMessage>> weights;
  reactors::OutputMultiport<Encoded<AgentActionsMessage>> actions;
  reactors::OutputMultiport<Encoded<TransitionsMessage>> experience;

  /// Throws std::invalid_argument when observations and actions have different widths, or a
  /// weights channel carries a policy the bank does not host; ParamError as PolicyBank.
  PolicyBankReactor(std::string name, reactors::Environment& env, const PolicyBankConfig& config,
                    const PolicyBankPortWidths& widths);

  [[nodiscard]] const PolicyBank& bank() const { return bank_; }
  [[nodiscard]] const ChannelDigests& actions_digest() const { return actions_digest_; }
  [[nodiscard]] const ChannelDigests& experience_digest() const { return experience_digest_; }
  void set_metrics(NodeMetrics* metrics) { metrics_ = metrics; }
  /// Called with every weights value the reaction loads (policy, weights), after the bank loaded
  /// it: how an inference service gateway beside the reactor gets the same weights.
  void set_weights_listener(std::function<void(int, const WeightsMessage&)> listener) {
    weights_listener_ = std::move(listener);
  }
  /// Where the `experience` port's transitions come from: everything waiting, by policy.
  using ExperienceSource = std::function<std::vector<std::pair<int, TransitionsMessage>>()>;
  void set_experience_source(ExperienceSource source) { experience_source_ = std::move(source); }
  /// Transitions sent on `experience` so far.
  std::atomic<std::int64_t> outside_transitions{0};
  std::atomic<std::int64_t> rows_served{0};
  std::atomic<std::uint64_t> weights_version{0};  // the lowest version over its policies
  std::atomic<std::int64_t> dropped_requests{0};

 private:
  void serve();
  void send_experience();

  PolicyBank bank_;
  std::vector<int> weight_policies_;
  ChannelDigests actions_digest_, experience_digest_;
  std::vector<const AgentObservationsMessage*> requests_;  // this tag's, read in place
  std::vector<std::optional<SparseFloats>> sparse_;        // their frames' non-zero floats
  std::vector<std::size_t> channels_, answered_;
  std::vector<AgentActionsMessage> answers_;  // lent to serve_into(), then sent
  /// Per actions channel: the storage of its answers once nobody reads them.
  std::vector<EncodedRecycler<AgentActionsMessage>> answer_storage_;
  NodeMetrics* metrics_ = nullptr;
  std::function<void(int, const WeightsMessage&)> weights_listener_;
  std::vector<std::vector<int>> experience_policies_;
  ExperienceSource experience_source_;
};

}  // namespace tagflow::nodes
