#include "nodes/sampler/sampler_actor.hpp"

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

class SamplerActorImpl : public nodes::NodeActorBase<nodes::SamplerActor> {
 public:
  SamplerActorImpl(caf::actor_config& cfg, const SamplerConfig& config, SamplerActorOptions options)
      : NodeActorBase(cfg, options.name, options.report, options.metrics, options.recovery),
        server_(config),
        options_(std::move(options)) {
    restore_from_checkpoint();
  }

  behavior_type make_behavior() override {
    schedule_checkpoint();
    return traced<behavior_type>(
        replica_name(),
        [this](actors::connect_atom, const std::string& port, const std::string& peer_name,
               const caf::actor& peer) { connect(port, peer_name, peer); },
        [this](actors::connect_atom, const std::string& port, const caf::actor& peer) {
          connect(port, "", peer);
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
        [this](const ActionBatchMessage& actions) {
          if (!accept(actions) || done()) return;
          waiting_ = false;
          options_.report->weights_version.store(actions.weights_version,
                                                 std::memory_order_relaxed);
          if (options_.metrics != nullptr)
            options_.metrics->set_weights_version(actions.weights_version);
          send_transitions(server_.step(actions.actions, actions.weights_version));
          schedule_round();
        },
        [this](const WeightsMessage& weights) {
          if (!accept(weights) || done()) return;
          server_.on_weights(weights);
          if (server_.config().local_policy) {
            options_.report->weights_version.store(server_.weights_version(),
                                                   std::memory_order_relaxed);
            if (options_.metrics != nullptr)
              options_.metrics->set_weights_version(server_.weights_version());
          }
          if (auto peer = sender_handle()) send_to(peer, Credit{"weights", 1, replica_name()});
        },
        [this](actors::step_atom) {
          step_pending_ = false;
          try_round();
        },
        [this](actors::leave_atom) { leave(); },
        [this](actors::checkpoint_atom) { on_checkpoint(); },
        [this](const Leave& leave) { on_leave(leave); },
        // Nobody offers a sampler anything: its inputs are subscribed.
        [this](const Offer&) { reject(transport::DropReason::kUnknownKind); },
        [this](const StopRun& stop) { on_stop_run(stop); });
  }

 private:
  // The host links `port` to `peer` (nodes/actor_interfaces.hpp).
  void connect(const std::string& port, const std::string& peer_name, const caf::actor& peer) {
    add_peer(peer, false, peer_name);
    if (port == "transitions" || port == "observations") {
      send_to(peer, Offer{port, replica_name()});
    } else if (port == "weights") {
      server_.on_new_weights_source();
      send_to(peer, Credit{"weights", 1, replica_name()});
    }
  }

  // One round, if credits allow: request actions (inference) or step (local policy).
  void try_round() {
    if (done() || waiting_ || !transitions_.all_have_credit()) return;
    if (server_.config().local_policy) {
      send_transitions(server_.step_local());
      schedule_round();
      return;
    }
    for (auto& d : observations_.downstreams()) {
      if (d.credits == 0) continue;
      --d.credits;
      send_to(d.handle, server_.observations());
      waiting_ = true;
      asked_ = d.handle.address();
      return;
    }
  }

  void schedule_round() {
    if (done() || step_pending_) return;
    step_pending_ = true;
    send(this, actors::step_atom::value);
  }

  void send_transitions(const TransitionsMessage& message) {
    for (auto& d : transitions_.downstreams()) {
      if (transitions_.try_spend(d.handle.address())) send_to(d.handle, message);
    }
    auto& report = *options_.report;
    report.count.store(server_.env_steps(), std::memory_order_relaxed);
    const std::vector<double> returns = server_.take_finished_returns();
    if (options_.metrics != nullptr) {
      options_.metrics->add_env_steps(server_.env_steps() - steps_reported_);
      if (!returns.empty()) options_.metrics->add_episodes(returns);
    }
    steps_reported_ = server_.env_steps();
    if (!returns.empty()) {
      report.last_return.store(returns.back(), std::memory_order_relaxed);
      report.episodes.fetch_add(static_cast<std::int64_t>(returns.size()),
                                std::memory_order_relaxed);
      std::lock_guard<std::mutex> lock(report.mutex);
      report.episode_returns.add(returns);
    }
    if (options_.step_limit >= 0 && server_.env_steps() >= options_.step_limit) {
      stop_run("env_steps");
    }
  }

  void forget_peer_state(const caf::actor_addr& peer) override {
    transitions_.remove(peer);
    observations_.remove(peer);
    if (waiting_ && asked_ == peer) waiting_ = false;  // its answer will not come: ask again
  }

  std::int64_t unanswered_to(const caf::actor_addr& peer) const override {
    return transitions_.unanswered(peer) + observations_.unanswered(peer);
  }

  // The envs, generators, ε and policy copy (SamplerServer::save); the count is its env steps.
  std::int64_t save_checkpoint(StateWriter& out, const std::string& /*table_path*/) override {
    server_.save(out);
    return server_.env_steps();
  }
  void load_checkpoint(StateReader& in, const std::string& /*table_path*/) override {
    server_.load(in);
    steps_reported_ = server_.env_steps();  // the metrics count this process's steps
    options_.report->count.store(server_.env_steps(), std::memory_order_relaxed);
  }

  void drop_peer_handles() override {
    transitions_.downstreams().clear();
    observations_.downstreams().clear();
  }

  SamplerServer server_;
  SamplerActorOptions options_;
  actors::CreditLedger transitions_{"transitions"};
  actors::CreditLedger observations_{"observations"};
  bool waiting_ = false;             // observations sent, actions not back yet
  caf::actor_addr asked_;            // ...to this inference server
  bool step_pending_ = false;        // a step message to self is queued
  std::int64_t steps_reported_ = 0;  // env steps already added to the metrics
};

}  // namespace

nodes::SamplerActor spawn_sampler_actor(caf::actor_system& system, const SamplerConfig& config,
                                        SamplerActorOptions options) {
  return system.spawn<SamplerActorImpl>(config, std::move(options));
}

}  // namespace tagflow::nodes
