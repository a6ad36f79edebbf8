#include "nodes/inference/policy_bank_actor.hpp"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "actors/credit_ledger.hpp"
#include "nodes/actor_binding_base.hpp"
#include "nodes/actor_trace.hpp"

namespace tagflow::nodes {
namespace {

using actors::Credit;
using actors::Leave;
using actors::Offer;
using actors::StopRun;

class PolicyBankActorImpl : public nodes::NodeActorBase<nodes::PolicyBankActor> {
 public:
  PolicyBankActorImpl(caf::actor_config& cfg, const PolicyBankConfig& config,
                      PolicyBankActorOptions options)
      : NodeActorBase(cfg, options.name, options.report, options.metrics, options.recovery),
        bank_(config),
        hosted_(config.hosted),
        options_(std::move(options)) {}

  behavior_type make_behavior() override {
    return traced<behavior_type>(
        replica_name(),
        [this](actors::connect_atom, const std::string& port, const std::string& peer_name,
               const caf::actor& peer) {
          if (port == "experience") connect_experience(peer_name, peer);
        },
        [this](actors::flush_atom) {
          send_experience();
          if (!done()) delayed_send(this, options_.experience_period, actors::flush_atom::value);
        },
        [](actors::connect_atom, const std::string&, const caf::actor&) {},
        [this](const Offer& offer) {
          auto peer = sender_handle();
          if (!peer || done()) return;
          if (offer.port == "weights") {
            const auto policy = options_.weight_policies.find(offer.from);
            if (policy == options_.weight_policies.end() || !bank_.hosts(policy->second)) {
              reject(transport::DropReason::kUnknownPort);
              return;
            }
            weight_policy_[peer.address()] = policy->second;
            bank_.on_new_weights_source(policy->second);
          } else if (offer.port != "observations") {
            reject(transport::DropReason::kUnknownPort);
            return;
          }
          add_peer(peer, offer.port == "observations", offer.from);
          count_received(offer);
          send_to(peer, Credit{offer.port, 1, replica_name()});
        },
        [this](const Credit& credit) {
          auto peer = sender_handle();
          if (!peer || done()) return;
          if (credit.port != "transitions" ||
              experience_policies_.find(peer.address()) == experience_policies_.end()) {
            reject(transport::DropReason::kUnknownKind);
            return;
          }
          count_received(credit);
          experience_.add_credit(peer, credit.amount);
          send_experience();
        },
        [this](const WeightsMessage& weights) {
          auto peer = sender_handle();
          if (!peer || !accept(weights) || done()) return;
          const auto policy = weight_policy_.find(peer.address());
          if (policy == weight_policy_.end()) {
            reject(transport::DropReason::kUnknownPort);
            return;
          }
          try {
            bank_.on_weights(policy->second, weights);
          } catch (const std::invalid_argument&) {
            reject(transport::DropReason::kSizeMismatch);
            return;
          }
          if (options_.weights_listener) options_.weights_listener(policy->second, weights);
          std::uint64_t lowest = UINT64_MAX;
          for (const int p : hosted_) lowest = std::min(lowest, bank_.version(p));
          options_.report->weights_version.store(lowest, std::memory_order_relaxed);
          if (options_.metrics != nullptr) options_.metrics->set_weights_version(lowest);
          send_to(peer, Credit{"weights", 1, replica_name()});
        },
        [this](const AgentObservationsMessage& request) {
          auto peer = sender_handle();
          if (!peer || !accept(request) || done()) return;
          requests_.push_back(request);
          requesters_.push_back(peer);
          serve_when_everyone_waits();
        },
        [this](const Leave& leave) { on_leave(leave); },
        [this](const StopRun& stop) { on_stop_run(stop); });
  }

 private:
  void serve_when_everyone_waits() {
    if (requests_.empty() || done()) return;
    if (static_cast<long>(requests_.size()) < peers().transients()) return;
    const auto started = std::chrono::steady_clock::now();
    std::vector<std::size_t> answered;
    const std::uint64_t rejected = bank_.rejected();
    std::vector<AgentActionsMessage> answers = bank_.serve(requests_, &answered);
    for (std::uint64_t i = rejected; i < bank_.rejected(); ++i) {
      reject(transport::DropReason::kSizeMismatch);
    }
    if (options_.metrics != nullptr) {
      std::size_t rows = 0;
      for (const auto& a : answers) rows += a.rows();
      options_.metrics->add_inference_batch(
          rows, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    options_.report->count.store(static_cast<std::int64_t>(bank_.rows_served()),
                                 std::memory_order_relaxed);
    for (std::size_t i = 0; i < answers.size(); ++i) {
      send_to(requesters_[answered[i]], std::move(answers[i]));
    }
    // Every requester may ask again, answered or refused.
    for (const caf::actor& waiting : requesters_) {
      send_to(waiting, Credit{"observations", 1, replica_name()});
    }
    requests_.clear();
    requesters_.clear();
  }

  void connect_experience(const std::string& peer_name, const caf::actor& peer) {
    const auto policies = options_.peer_policies.find(peer_name);
    if (policies == options_.peer_policies.end() || !options_.experience_source) {
      reject(transport::DropReason::kUnknownPort);
      return;
    }
    add_peer(peer, false, peer_name);
    const bool first = experience_policies_.empty();
    experience_policies_[peer.address()] = policies->second;
    send_to(peer, Offer{"transitions", replica_name()});
    if (first) delayed_send(this, options_.experience_period, actors::flush_atom::value);
  }

  /// Sends each replay with credit its policies' waiting rows (taken from the source only once
  /// everything taken before is sent, so what waits stays within the source's bound).
  void send_experience() {
    if (!options_.experience_source || done()) return;
    if (unsent_.empty()) {
      for (auto& [policy, rows] : options_.experience_source()) unsent_[policy] = std::move(rows);
    }
    for (auto& d : experience_.downstreams()) {
      for (const int policy : experience_policies_[d.handle.address()]) {
        const auto rows = unsent_.find(policy);
        if (rows == unsent_.end() || !experience_.try_spend(d.handle.address())) continue;
        options_.report->outside_transitions.fetch_add(
            static_cast<std::int64_t>(rows->second.rows()), std::memory_order_relaxed);
        send_to(d.handle, std::move(rows->second));
        unsent_.erase(rows);
      }
    }
  }

  void forget_peer_state(const caf::actor_addr& peer) override {
    experience_.remove(peer);
    experience_policies_.erase(peer);
    for (std::size_t i = requesters_.size(); i-- > 0;) {
      if (requesters_[i].address() != peer) continue;
      requesters_.erase(requesters_.begin() + static_cast<std::ptrdiff_t>(i));
      requests_.erase(requests_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    weight_policy_.erase(peer);
    serve_when_everyone_waits();
  }

  void drop_peer_handles() override {
    requesters_ = {};
    experience_.downstreams().clear();
  }

  PolicyBank bank_;
  std::vector<int> hosted_;
  PolicyBankActorOptions options_;
  std::map<caf::actor_addr, int> weight_policy_;
  std::vector<AgentObservationsMessage> requests_;
  std::vector<caf::actor> requesters_;
  actors::CreditLedger experience_{"transitions"};
  std::map<caf::actor_addr, std::vector<int>> experience_policies_;  // replay → its policies
  std::map<int, TransitionsMessage> unsent_;                         // taken, waiting for credit
};

}  // namespace

nodes::PolicyBankActor spawn_policy_bank_actor(caf::actor_system& system,
                                               const PolicyBankConfig& config,
                                               PolicyBankActorOptions options) {
  return system.spawn<PolicyBankActorImpl>(config, std::move(options));
}

}  // namespace tagflow::nodes
