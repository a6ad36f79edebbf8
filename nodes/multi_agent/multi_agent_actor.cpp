#include "nodes/multi_agent/multi_agent_actor.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include "actors/credit_ledger.hpp"
#include "nodes/actor_binding_base.hpp"
#include "nodes/actor_trace.hpp"
#include "nodes/multi_agent/multi_agent_metrics.hpp"

namespace tagflow::nodes {
namespace {

using actors::Credit;
using actors::Leave;
using actors::Offer;
using actors::StopRun;

class MultiAgentActorImpl : public nodes::NodeActorBase<nodes::MultiAgentActor> {
 public:
  MultiAgentActorImpl(caf::actor_config& cfg, const MultiAgentNodeConfig& config,
                      MultiAgentActorOptions options)
      : NodeActorBase(cfg, options.name, options.report, options.metrics, options.recovery),
        server_(config),
        options_(std::move(options)) {}

  behavior_type make_behavior() override {
    return traced<behavior_type>(
        replica_name(),
        [this](actors::connect_atom, const std::string& port, const std::string& peer_name,
               const caf::actor& peer) { connect(port, peer_name, peer); },
        [this](actors::connect_atom, const std::string&, const caf::actor&) {
          reject(transport::DropReason::kUnknownPort);  // links need the peer's name (policies)
        },
        [this](const Credit& credit) {
          auto peer = sender_handle();
          if (!peer || done() || !from_peer()) return;
          count_received(credit);
          if (credit.port == "transitions") {
            transitions_.add_credit(peer, credit.amount);
          } else if (credit.port == "observations") {
            observations_.add_credit(peer, credit.amount);
          } else {
            reject(transport::DropReason::kUnknownPort);
          }
          if (!step_pending_) try_round();
        },
        [this](const AgentActionsMessage& answer) {
          if (!accept(answer) || done()) return;
          if (!server_.on_actions(answer, nullptr)) {
            reject(transport::DropReason::kSizeMismatch);
            return;
          }
          if (auto peer = sender_handle()) asked_.erase(peer.address());
          if (!waiting_ || !server_.ready()) return;
          waiting_ = false;
          asked_.clear();
          lost_.clear();
          step();
          schedule_round();
        },
        [this](actors::step_atom) {
          step_pending_ = false;
          try_round();
        },
        [this](const Offer&) { reject(transport::DropReason::kUnknownKind); },
        [this](const Leave& leave) { on_leave(leave); },
        [this](const StopRun& stop) { on_stop_run(stop); });
  }

 private:
  void connect(const std::string& port, const std::string& peer_name, const caf::actor& peer) {
    add_peer(peer, false, peer_name);
    const auto policies = options_.peer_policies.find(peer_name);
    if (policies == options_.peer_policies.end()) {
      reject(transport::DropReason::kUnknownPort);
      return;
    }
    if (port == "observations") {
      observation_policies_[peer.address()] = policies->second;
    } else if (port == "transitions") {
      transition_policies_[peer.address()] = policies->second;
    } else {
      return;
    }
    send_to(peer, Offer{port, replica_name()});
  }

  // One joint step's requests, once every link can take its part.
  void try_round() {
    if (waiting_) {
      ask_again();
      return;
    }
    if (done() || server_.finished() || observations_.empty()) return;
    if (transitions_.downstreams().size() < options_.transition_links) return;
    if (observations_.downstreams().size() < options_.observation_links) return;
    if (options_.transition_links > 0 && !transitions_.all_have_credit()) return;
    // Every server this node was linked to has granted its credit (a ledger entry appears with
    // the first credit): each agent's server gets its request in the same round.
    if (observations_.downstreams().size() < observation_policies_.size() ||
        !observations_.all_have_credit()) {
      return;
    }
    for (auto& d : observations_.downstreams()) {
      --d.credits;
      const std::vector<int>& policies = observation_policies_[d.handle.address()];
      send_to(d.handle, server_.observations(policies));
      asked_[d.handle.address()] = policies;
    }
    waiting_ = true;
  }

  // A server that was asked this round and went down (its process restarts: the others wait,
  // ActorRecovery::peers_return) never answers: its policies' rows go to the server that hosts
  // them once it is linked again and has credit. The rows are those of the same joint step.
  void ask_again() {
    if (done() || lost_.empty()) return;
    for (auto& d : observations_.downstreams()) {
      const std::vector<int>& policies = observation_policies_[d.handle.address()];
      const bool lost = std::any_of(policies.begin(), policies.end(),
                                    [this](int p) { return lost_.count(p) != 0; });
      if (!lost || d.credits == 0 || asked_.count(d.handle.address()) != 0) continue;
      --d.credits;
      send_to(d.handle, server_.observations(policies));
      asked_[d.handle.address()] = policies;
      for (const int p : policies) lost_.erase(p);
    }
  }

  void schedule_round() {
    if (done() || step_pending_) return;
    step_pending_ = true;
    send(this, actors::step_atom::value);
  }

  void step() {
    std::vector<TransitionsMessage> rows = server_.step(options_.transition_links > 0);
    const auto now = std::chrono::steady_clock::now();
    if (last_step_ != std::chrono::steady_clock::time_point{}) {
      intervals_.push_back(std::chrono::duration<float>(now - last_step_).count());
    }
    last_step_ = now;
    if (!rows.empty()) {
      for (auto& d : transitions_.downstreams()) {
        const std::vector<int>& policies = transition_policies_[d.handle.address()];
        if (policies.empty()) continue;
        TransitionsMessage& m = rows[static_cast<std::size_t>(policies.front())];
        if (m.rows() > 0 && transitions_.try_spend(d.handle.address())) send_to(d.handle, m);
      }
    }
    auto& report = *options_.report;
    report.count.store(server_.joint_steps(), std::memory_order_relaxed);
    const MultiAgentServer::Finished finished = published_.publish(server_, options_.metrics);
    if (!finished.returns.empty()) {
      report.last_return.store(finished.returns.back(), std::memory_order_relaxed);
      report.episodes.fetch_add(static_cast<std::int64_t>(finished.returns.size()),
                                std::memory_order_relaxed);
      std::lock_guard<std::mutex> lock(report.mutex);
      report.episode_returns.add(finished.returns);
    }
    if (options_.step_limit >= 0 && server_.joint_steps() >= options_.step_limit) server_.finish();
    if (server_.finished()) stop_run("env_steps");
  }

  void record_results(nodes::ReplicaReport& report) override {
    report.collisions = server_.collisions();
    report.evaluations = server_.evaluations();
    report.step_intervals = intervals_;
    if (server_.evaluations().empty()) return;
    report.mean_return = server_.last_evaluation().mean_return;
    report.collisions_per_episode = server_.last_evaluation().collisions_per_episode;
    report.random_return = server_.random_baseline().mean_return;
    report.random_collisions_per_episode = server_.random_baseline().collisions_per_episode;
    report.evaluation_episodes = server_.last_evaluation().episodes;
    report.success_rate = server_.last_evaluation().success_rate;
    report.random_success_rate = server_.random_baseline().success_rate;
    report.evaluated_at = server_.last_evaluation().joint_steps;
    report.final_evaluation = server_.last_evaluation().final_one;
  }

  void forget_peer_state(const caf::actor_addr& peer) override {
    transitions_.remove(peer);
    observations_.remove(peer);
    observation_policies_.erase(peer);
    transition_policies_.erase(peer);
    if (const auto asked = asked_.find(peer); asked != asked_.end()) {
      lost_.insert(asked->second.begin(), asked->second.end());
      asked_.erase(asked);
    }
  }

  void drop_peer_handles() override {
    transitions_.downstreams().clear();
    observations_.downstreams().clear();
  }

  MultiAgentServer server_;
  MultiAgentActorOptions options_;
  actors::CreditLedger transitions_{"transitions"};
  actors::CreditLedger observations_{"observations"};
  std::map<caf::actor_addr, std::vector<int>> observation_policies_, transition_policies_;
  /// This round's requests not answered yet (server → its policies), and the policies whose
  /// server went down before it answered (asked again once it is back).
  std::map<caf::actor_addr, std::vector<int>> asked_;
  std::set<int> lost_;
  bool waiting_ = false;
  bool step_pending_ = false;
  MultiAgentMetrics published_;
  std::vector<float> intervals_;
  std::chrono::steady_clock::time_point last_step_{};
};

}  // namespace

nodes::MultiAgentActor spawn_multi_agent_actor(caf::actor_system& system,
                                               const MultiAgentNodeConfig& config,
                                               MultiAgentActorOptions options) {
  return system.spawn<MultiAgentActorImpl>(config, std::move(options));
}

}  // namespace tagflow::nodes
