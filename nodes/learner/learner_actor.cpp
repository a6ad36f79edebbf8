#include "nodes/learner/learner_actor.hpp"

#include <chrono>
#include <utility>

#include "actors/credit_ledger.hpp"
#include "actors/peer_set.hpp"

namespace tagflow::nodes {
namespace {

using actors::Credit;
using actors::Leave;
using actors::Offer;
using actors::StopRun;

class LearnerActorImpl : public actors::LearnerActor::base {
 public:
  LearnerActorImpl(caf::actor_config& cfg, const LearnerConfig& config, LearnerActorOptions options)
      : actors::LearnerActor::base(cfg),
        server_(config),
        options_(std::move(options)),
        latest_(server_.weights()) {
    set_down_handler([this](caf::down_msg& down) { on_down(down); });
  }

  behavior_type make_behavior() override {
    return {
        [this](actors::connect_atom, const std::string& port, const caf::actor& peer) {
          if (port != "priorities" && port != "weights") return;
          if (peers_.add(peer, false)) monitor(peer);
          send(actors::as_peer(peer), Offer{port, options_.name});
        },
        [this](const Offer& offer) {
          auto peer = caf::actor_cast<caf::actor>(current_sender());
          if (!peer || done_ || offer.port != "batches") return;
          if (peers_.add(peer, false)) monitor(peer);
          send(actors::as_peer(peer), Credit{"batches", actors::kDefaultCreditWindow});
        },
        [this](const Credit& credit) { on_credit(credit); },
        [this](const SampleBatchMessage& batch) { on_batch(batch); },
        [this](const Leave&) { forget(sender_address()); },
        [this](const StopRun& stop) { stop_run(stop.reason); },
    };
  }

  // Terminated actors that still hold each other's handles would keep each other alive:
  // drop every peer handle on exit.
  void on_exit() override {
    priorities_.downstreams().clear();
    weights_.downstreams().clear();
    peers_ = {};
  }

 private:
  caf::actor_addr sender_address() {
    return current_sender() ? current_sender()->address() : caf::actor_addr{};
  }

  void on_credit(const Credit& credit) {
    auto peer = caf::actor_cast<caf::actor>(current_sender());
    if (!peer || done_) return;
    if (credit.port == "priorities") {
      priorities_.add_credit(peer, credit.amount);
      flush_priorities();
    } else if (credit.port == "weights") {
      // A Credit from an actor this learner never offered weights to is a sampler subscribing.
      if (peers_.add(peer, true)) monitor(peer);
      const bool added = weights_.add_credit(peer, credit.amount);
      for (auto& d : weights_.downstreams()) {
        if (d.handle.address() == peer.address() && (added || d.dirty)) send_weights(d);
      }
      options_.report->peers.store(peers_.samplers(), std::memory_order_relaxed);
    }
  }

  void on_batch(const SampleBatchMessage& batch) {
    if (done_) return;
    if (auto peer = caf::actor_cast<caf::actor>(current_sender()))
      send(actors::as_peer(peer), Credit{"batches", 1});
    const auto started = std::chrono::steady_clock::now();
    const auto newest_version = static_cast<std::uint64_t>(server_.updates());
    LearnerOutput out = server_.on_batch(batch);
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
    send(actors::as_peer(d.handle), latest_);
  }

  void flush_priorities() {
    if (pending_.keys.empty()) return;
    for (auto& d : priorities_.downstreams()) {
      if (d.credits == 0) return;  // merged into one update until every replay has credit
    }
    for (auto& d : priorities_.downstreams()) {
      --d.credits;
      send(actors::as_peer(d.handle), pending_);
    }
    if (!priorities_.empty()) pending_ = PriorityUpdateMessage{};
  }

  void maybe_evaluate() {
    if (!options_.evaluator || !options_.target_return) return;
    if (server_.updates() % server_.config().eval_every != 0) return;
    const double mean = options_.evaluator->mean_return(server_.weights().values);
    options_.report->last_evaluation.store(mean, std::memory_order_relaxed);
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

  void forget(const caf::actor_addr& peer) {
    peers_.remove(peer);
    priorities_.remove(peer);
    weights_.remove(peer);
    demonitor(peer);
    options_.report->peers.store(peers_.samplers(), std::memory_order_relaxed);
  }

  void on_down(const caf::down_msg& down) {
    if (!peers_.contains(down.source)) return;
    const bool sampler = peers_.is_sampler(down.source);
    forget(down.source);
    if (!sampler) stop_run("");
  }

  void stop_run(const std::string& reason) {
    if (done_) return;
    const caf::actor_addr from = sender_address();
    for (const auto& p : peers_.all()) {
      if (p.handle.address() != from) send(actors::as_peer(p.handle), StopRun{reason});
    }
    done_ = true;
    {
      std::lock_guard<std::mutex> lock(options_.report->mutex);
      options_.report->stop_reason = reason;
      options_.report->final_weights = server_.weights();
    }
    options_.report->done.store(true);
    quit();
  }

  LearnerServer server_;
  LearnerActorOptions options_;
  WeightsMessage latest_;
  PriorityUpdateMessage pending_;
  actors::CreditLedger priorities_{"priorities"};
  actors::CreditLedger weights_{"weights"};
  actors::PeerSet peers_;
  bool done_ = false;
};

}  // namespace

actors::LearnerActor spawn_learner_actor(caf::actor_system& system, const LearnerConfig& config,
                                         LearnerActorOptions options) {
  return system.spawn<LearnerActorImpl>(config, std::move(options));
}

}  // namespace tagflow::nodes
