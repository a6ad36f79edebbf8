// PolicyBank: the inference node's logic in a multi-agent cluster — greedy actions for the agents
// of the policies one server hosts (nodes/cluster/policy_config.hpp). No threads, no sockets, no
// clock: a binding calls it.
//
// serve(requests) answers every request of one tag together: rows are gathered per policy, and
// policies of the same network shape are evaluated together, stacked (rl/learning/stacked_mlp.hpp:
// one batched product per layer over every such policy's rows). Each stacked pass has a fixed
// number of rows per policy — the largest agent count of any policy of that shape in the file — so
// the numbers never depend on which policies share a server or how many rows are in use: the
// digest is the same for every grouping of policies into servers.
//
// Weights: a learner's WeightsMessage for policy p replaces p's slot (older or equal versions are
// ignored). A policy with `torchscript: FILE` serves that file and ignores weights (counted): when
// the module's parameters are a Linear/ReLU stack that reproduces the module's own scores it is
// stacked like the others, otherwise the module runs on its own (counted in unstacked()). Files
// are checked at start against the policy's input width and the env's actions.
//
// Errors: ParamError naming the policy for a file that does not load or does not fit; requests
// with a row for a policy this bank does not host, or observations of the wrong width, are
// refused by serve() (no answer for that request, the reason in rejected()) and change nothing.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nodes/cluster/cluster_config.hpp"
#include "nodes/messages.hpp"
#include "rl/learning/mlp_spec.hpp"

namespace tagflow::learning {
class StackedMlp;
class TorchScriptPolicy;
}  // namespace tagflow::learning

namespace tagflow::nodes {

struct PolicyBankConfig {
  cluster::MultiAgentConfig agents;  // the env, every policy, which agent each serves
  std::vector<int> hosted;           // the policies this server hosts (ascending)
  std::uint64_t seed = 0;            // initial weights: policy p starts from seed + p
  // Rows per policy per stacked pass. 0 (the cluster's inference): the fixed count described
  // above, so the numbers never depend on the grouping. N > 0 (the gateway, whose requests come
  // from outside and promise no digest): up to N rows of each policy in one pass (the rows in use
  // rounded up to a power of two), so a batch of many clients is one pass, not one per row.
  std::int64_t rows_per_pass = 0;

  /// The network of policy `policy`: its input width, its hidden sizes, the env's actions.
  [[nodiscard]] learning::MlpSpec network(int policy) const;
};

class PolicyBank {
 public:
  /// Throws ParamError when a policy's TorchScript file cannot be loaded or does not fit.
  explicit PolicyBank(const PolicyBankConfig& config);
  ~PolicyBank();
  PolicyBank(PolicyBank&&) noexcept;
  PolicyBank& operator=(PolicyBank&&) noexcept;
  PolicyBank(const PolicyBank&) = delete;
  PolicyBank& operator=(const PolicyBank&) = delete;

  /// Loads newer weights for `policy` (a hosted policy; std::invalid_argument otherwise or for
  /// weights of the wrong length). Older or equal versions are ignored, except just after
  /// on_new_weights_source(policy).
  void on_weights(int policy, const WeightsMessage& weights);
  /// The learner of hosted `policy` linked (again): its next weights load whatever their version
  /// (a learner restarted in actor mode counts from its checkpoint's version, or from 1).
  void on_new_weights_source(int policy);
  /// One answer per valid request, in request order (`answered` gets the indices of the requests
  /// answered when not null).
  [[nodiscard]] std::vector<AgentActionsMessage> serve(
      const std::vector<AgentObservationsMessage>& requests,
      std::vector<std::size_t>* answered = nullptr);
  /// The same over requests that live elsewhere (a reactor's input ports), read in place.
  /// `sparse`, when given, holds per request the non-zero floats of its sparse frame
  /// (sparse_observations(), std::nullopt for a dense one): a stacked pass over one request's
  /// consecutive rows then reads those instead of scanning the rows. The answers are the same.
  [[nodiscard]] std::vector<AgentActionsMessage> serve(
      const std::vector<const AgentObservationsMessage*>& requests,
      std::vector<std::size_t>* answered = nullptr,
      const std::vector<std::optional<SparseFloats>>* sparse = nullptr);
  /// The same answers, written into `answers`: the messages it holds lend their storage (the
  /// i-th answer is written over answers[i], whose vectors keep their capacity), so a caller
  /// that passes its messages back each time allocates nothing for them. `answers` ends with
  /// one message per answered request.
  void serve_into(const std::vector<const AgentObservationsMessage*>& requests,
                  std::vector<AgentActionsMessage>& answers,
                  std::vector<std::size_t>* answered = nullptr,
                  const std::vector<std::optional<SparseFloats>>* sparse = nullptr);

  [[nodiscard]] bool hosts(int policy) const;
  [[nodiscard]] std::uint64_t version(int policy) const;
  [[nodiscard]] std::uint64_t rows_served() const { return rows_served_; }
  [[nodiscard]] std::uint64_t stacked_passes() const { return stacked_passes_; }
  /// Stacked passes that read a request's non-zero floats from its frame (serve()'s `sparse`).
  [[nodiscard]] std::uint64_t passes_from_frames() const { return passes_from_frames_; }
  [[nodiscard]] std::uint64_t rejected() const { return rejected_; }
  [[nodiscard]] const std::string& last_rejection() const { return last_rejection_; }
  [[nodiscard]] std::uint64_t weights_ignored() const { return weights_ignored_; }
  /// Hosted policies whose TorchScript module runs on its own (not stackable).
  [[nodiscard]] std::size_t unstacked() const;
  /// Shape groups stacked together (one batched product per layer each).
  [[nodiscard]] std::size_t stacked_groups() const;

 private:
  struct Group;
  struct Hosted;
  struct Answers;
  using Requests = std::vector<const AgentObservationsMessage*>;
  using SparseRequests = std::vector<std::optional<SparseFloats>>;
  /// Policy name → the parameters of a TorchScript file that the stacked MLP computes alike.
  using FileParameters = std::map<std::string, std::vector<float>>;

  /// Hosted policy `policy`: its network, and its TorchScript module when it has a file.
  [[nodiscard]] Hosted make_hosted(int policy, FileParameters& file_parameters) const;
  /// Stacks the hosted policies (all but the unstackable files) in one group per shape.
  void stack_groups(const FileParameters& file_parameters);
  [[nodiscard]] std::string invalid(const AgentObservationsMessage& request) const;
  /// An answer per valid request (`answered` gets their indices), and each hosted policy's rows.
  void assign_rows(const Requests& requests, std::vector<std::size_t>* answered, Answers& answers);
  /// The stacked passes of group `g` over its policies' rows.
  void serve_group(Group& g, const Requests& requests, const SparseRequests* sparse,
                   Answers& answers);
  /// The stacked input of the pass of `g` over rows from..from+rows of each slot, copied.
  const float* stacked_input(const Group& g, const Requests& requests, std::int64_t rows,
                             std::size_t width, std::size_t from);
  /// One pass of `h`'s own TorchScript module over its rows.
  void serve_unstacked(const Hosted& h, const Requests& requests, Answers& answers);
  /// Row `j`'s observation in `request`.
  [[nodiscard]] const float* observation(const AgentObservationsMessage& request,
                                         std::size_t j) const;

  PolicyBankConfig config_;
  std::vector<Hosted> hosted_;  // by position in config.hosted
  std::vector<int> position_;   // policy index → position in hosted_, or -1
  std::vector<Group> groups_;
  /// Rows per slot of a stacked pass over `net` when a policy of it has `most` rows queued.
  [[nodiscard]] std::int64_t rows_per_pass(const learning::StackedMlp& net, std::size_t most) const;
  /// Where the stacked input of one pass of `g` already lies, as (request, first row), or
  /// std::nullopt: one row per slot, the rows of one request in slot order, nothing added to them
  /// (per-agent policies of one env node, the serve files' shape). The pass then reads the
  /// request instead of a copy.
  [[nodiscard]] std::optional<std::pair<std::size_t, std::size_t>> in_place_row(
      const Group& g, std::int64_t rows, std::size_t width) const;
  std::vector<float> input_;
  std::vector<std::size_t> index_of_;  // serve_into()'s request → answer map, kept between calls
  std::uint64_t rows_served_ = 0, stacked_passes_ = 0, passes_from_frames_ = 0, rejected_ = 0,
                weights_ignored_ = 0;
  std::string last_rejection_;
};

}  // namespace tagflow::nodes
