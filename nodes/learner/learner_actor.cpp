#include "nodes/learner/learner_actor.hpp"

#include <chrono>
#include <stdexcept>
#include <utility>

#include "actors/credit_ledger.hpp"
#include "nodes/actor_binding_base.hpp"
#include "nodes/actor_trace.hpp"

namespace tagflow::nodes {
namespace {

using actors::Credit;
using actors::Leave;
using actors::Offer;
using actors::StopRun;

class LearnerActorImpl : public nodes::NodeActorBase<nodes::LearnerActor> {
 public:
  LearnerActorImpl(caf::actor_config& cfg, const LearnerConfig& config, LearnerActorOptions options)
      : NodeActorBase(cfg, options.name, options.report, options.metrics, options.recovery),
        server_(config),
        options_(std::move(options)),
        latest_(server_.weights()) {
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
        [this](const Offer& offer) {
          auto peer = sender_handle();
          if (!peer || done()) return;
          if (offer.port != "batches") return reject(transport::DropReason::kUnknownPort);
          add_peer(peer, false, offer.from);
          count_received(offer);
          send_to(peer, Credit{"batches", actors::kDefaultCreditWindow, replica_name()});
        },
        [this](const Credit& credit) { on_credit(credit); },
        [this](const SampleBatchMessage& batch) { on_batch(batch); },
        [this](const Leave& leave) { on_leave(leave); },
        [this](const StopRun& stop) { on_stop_run(stop); },
        [this](actors::checkpoint_atom) { on_checkpoint(); });
  }

 private:
  // The host links `port` to `peer` (nodes/actor_interfaces.hpp).
  void connect(const std::string& port, const std::string& peer_name, const caf::actor& peer) {
    if (port != "priorities" && port != "weights") return;
    add_peer(peer, false, peer_name);
    send_to(peer, Offer{port, replica_name()});
  }

  void on_credit(const Credit& credit) {
    auto peer = sender_handle();
    if (!peer || done()) return;
    if (credit.port == "priorities") {
      if (!from_peer()) return;
      count_received(credit);
      priorities_.add_credit(peer, credit.amount);
      flush_priorities();
    } else if (credit.port == "weights") {
      // A Credit from an actor this learner never offered weights to is a sampler subscribing.
      add_peer(peer, true, credit.from);
      count_received(credit);
      const bool added = weights_.add_credit(peer, credit.amount);
      for (auto& d : weights_.downstreams()) {
        if (d.handle.address() == peer.address() && (added || d.dirty)) send_weights(d);
      }
    } else {
      reject(transport::DropReason::kUnknownPort);
    }
  }

  void on_batch(const SampleBatchMessage& batch) {
    if (!accept(batch) || done()) return;
    if (auto peer = sender_handle()) send_to(peer, Credit{"batches", 1, replica_name()});
    const auto started = std::chrono::steady_clock::now();
    const auto newest_version = static_cast<std::uint64_t>(server_.updates());
    LearnerOutput out;
    try {
      out = server_.on_batch(batch);
    } catch (const std::invalid_argument&) {  // rows of another network's width: refuse, count
      reject(transport::DropReason::kSizeMismatch);
      return;
    }
    if (options_.metrics != nullptr) {
      options_.metrics->set_policy_lag(policy_lag(newest_version, batch));
      options_.metrics->add_learner_update(
          out.loss,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      options_.metrics->set_weights_version(static_cast<std::uint64_t>(server_.updates()));
    }
    options_.report->count.store(server_.updates(), std::memory_order_relaxed);
    pending_.keys.insert(pending_.keys.end(), out.priorities.keys.begin(),
                         out.priorities.keys.end());
    pending_.priorities.insert(pending_.priorities.end(), out.priorities.priorities.begin(),
                               out.priorities.priorities.end());
    flush_priorities();
    if (out.weights) {
      latest_ = std::move(*out.weights);
      options_.report->weights_version.store(latest_.version, std::memory_order_relaxed);
      for (auto& d : weights_.downstreams()) send_weights(d);
    }
    maybe_evaluate();
  }

  void send_weights(actors::CreditLedger::Downstream& d) {
    if (d.credits == 0) {
      d.dirty = true;
      return;
    }
    --d.credits;
    d.dirty = false;
    send_to(d.handle, latest_);
  }

  void flush_priorities() {
    if (pending_.keys.empty()) return;
    for (auto& d : priorities_.downstreams()) {
      if (d.credits == 0) return;  // merged into one update until every replay has credit
    }
    for (auto& d : priorities_.downstreams()) {
      --d.credits;
      send_to(d.handle, pending_);
    }
    if (!priorities_.empty()) pending_ = PriorityUpdateMessage{};
  }

  void maybe_evaluate() {
    if (!options_.evaluator || !options_.target_return) return;
    if (server_.updates() % server_.config().eval_every != 0) return;
    const double mean = options_.evaluator->mean_return(server_.weights().values);
    options_.report->last_evaluation.store(mean, std::memory_order_relaxed);
    if (options_.metrics != nullptr) options_.metrics->add_evaluation(mean);
    {
      std::lock_guard<std::mutex> lock(options_.report->mutex);
      options_.report->evaluations.push_back(mean);
    }
    if (mean >= *options_.target_return) {
      {
        std::lock_guard<std::mutex> lock(options_.report->mutex);
        options_.report->target_reached = true;
      }
      stop_run("target_return");
    }
  }

  void forget_peer_state(const caf::actor_addr& peer) override {
    priorities_.remove(peer);
    weights_.remove(peer);
    // Priorities wait until every replay has credit; with none left they are for a table that
    // is gone (a restarted replay starts from its checkpoint's).
    if (priorities_.empty()) pending_ = PriorityUpdateMessage{};
  }

  std::int64_t unanswered_to(const caf::actor_addr& peer) const override {
    return priorities_.unanswered(peer) + weights_.unanswered(peer);
  }

  // Weights, optimizer, target network, generators and update count (LearnerServer::save).
  std::int64_t save_checkpoint(StateWriter& out, const std::string& /*table_path*/) override {
    server_.save(out);
    return server_.updates();
  }
  void load_checkpoint(StateReader& in, const std::string& /*table_path*/) override {
    server_.load(in);
    latest_ = server_.weights();
    options_.report->count.store(server_.updates(), std::memory_order_relaxed);
    options_.report->weights_version.store(latest_.version, std::memory_order_relaxed);
  }

  void drop_peer_handles() override {
    priorities_.downstreams().clear();
    weights_.downstreams().clear();
  }

  void record_results(nodes::ReplicaReport& report) override {
    report.final_weights = server_.weights();
    if (!options_.policy_file.empty()) {
      server_.export_torchscript(options_.policy_file);
      report.policy_file = options_.policy_file;
    }
  }

  LearnerServer server_;
  LearnerActorOptions options_;
  WeightsMessage latest_;
  PriorityUpdateMessage pending_;
  actors::CreditLedger priorities_{"priorities"};
  actors::CreditLedger weights_{"weights"};
};

}  // namespace

nodes::LearnerActor spawn_learner_actor(caf::actor_system& system, const LearnerConfig& config,
                                        LearnerActorOptions options) {
  return system.spawn<LearnerActorImpl>(config, std::move(options));
}

}  // namespace tagflow::nodes
