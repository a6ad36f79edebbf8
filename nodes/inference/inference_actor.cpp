#include "nodes/inference/inference_actor.hpp"

#include <chrono>
#include <utility>
#include <vector>

#include "actors/credit_ledger.hpp"
#include "actors/peer_set.hpp"

namespace tagflow::nodes {
namespace {

using actors::Credit;
using actors::Leave;
using actors::Offer;
using actors::StopRun;

class InferenceActorImpl : public actors::InferenceActor::base {
 public:
  InferenceActorImpl(caf::actor_config& cfg, const InferenceConfig& config,
                     InferenceActorOptions options)
      : actors::InferenceActor::base(cfg),
        server_(config),
        max_batch_(config.max_batch),
        max_wait_(config.max_wait),
        options_(std::move(options)) {
    set_down_handler([this](caf::down_msg& down) { on_down(down); });
  }

  behavior_type make_behavior() override {
    return {
        [](actors::connect_atom, const std::string&, const caf::actor&) {},
        [this](const Offer& offer) {
          auto peer = caf::actor_cast<caf::actor>(current_sender());
          if (!peer || done_) return;
          const bool sampler = offer.port == "observations";
          if (peers_.add(peer, sampler, offer.from)) monitor(peer);
          if (sampler && options_.metrics != nullptr)
            options_.metrics->set_sampler_member(offer.from, true);
          options_.report->peers.store(peers_.samplers(), std::memory_order_relaxed);
          send(actors::as_peer(peer), Credit{offer.port, 1});
        },
        [](const Credit&) {},
        [this](const WeightsMessage& weights) {
          if (done_) return;
          server_.on_weights(weights);
          options_.report->weights_version.store(server_.weights_version(),
                                                 std::memory_order_relaxed);
          if (options_.metrics != nullptr)
            options_.metrics->set_weights_version(server_.weights_version());
          if (auto peer = caf::actor_cast<caf::actor>(current_sender()))
            send(actors::as_peer(peer), Credit{"weights", 1});
        },
        [this](const ObservationBatchMessage& request) {
          auto peer = caf::actor_cast<caf::actor>(current_sender());
          if (!peer || done_) return;
          rows_waiting_ += request.rows();
          requests_.push_back(request);
          requesters_.push_back(peer);
          if (rows_waiting_ >= max_batch_ ||
              static_cast<long>(requests_.size()) >= peers_.samplers() || max_wait_.count() == 0) {
            serve();
          } else if (!flush_pending_) {
            flush_pending_ = true;
            delayed_send(this, max_wait_, actors::flush_atom::value);
          }
        },
        [this](actors::flush_atom) {
          flush_pending_ = false;
          serve();
        },
        [this](const Leave&) { forget(sender_address()); },
        [this](const StopRun& stop) { stop_run(stop.reason); },
    };
  }

  // Terminated actors that still hold each other's handles would keep each other alive:
  // drop every peer handle on exit.
  void on_exit() override {
    peers_ = {};
    requesters_ = {};
  }

 private:
  caf::actor_addr sender_address() {
    return current_sender() ? current_sender()->address() : caf::actor_addr{};
  }

  void serve() {
    if (requests_.empty() || done_) return;
    const auto started = std::chrono::steady_clock::now();
    std::vector<ActionBatchMessage> answers = server_.serve(requests_);
    if (options_.metrics != nullptr) {
      options_.metrics->add_inference_batch(
          rows_waiting_,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    for (std::size_t i = 0; i < answers.size(); ++i) {
      send(actors::as_peer(requesters_[i]), std::move(answers[i]));
      send(actors::as_peer(requesters_[i]), Credit{"observations", 1});
    }
    options_.report->count.store(static_cast<std::int64_t>(server_.rows_served()),
                                 std::memory_order_relaxed);
    requests_.clear();
    requesters_.clear();
    rows_waiting_ = 0;
  }

  void forget(const caf::actor_addr& peer) {
    const std::string name = peers_.name_of(peer);
    if (peers_.is_sampler(peer) && !name.empty() && options_.metrics != nullptr)
      options_.metrics->set_sampler_member(name, false);
    peers_.remove(peer);
    demonitor(peer);
    for (std::size_t i = requesters_.size(); i-- > 0;) {
      if (requesters_[i].address() != peer) continue;
      rows_waiting_ -= requests_[i].rows();
      requests_.erase(requests_.begin() + static_cast<std::ptrdiff_t>(i));
      requesters_.erase(requesters_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    options_.report->peers.store(peers_.samplers(), std::memory_order_relaxed);
    // The samplers still here may all be waiting already.
    if (!requests_.empty() && static_cast<long>(requests_.size()) >= peers_.samplers()) serve();
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
    }
    options_.report->done.store(true);
    quit();
  }

  InferenceServer server_;
  std::size_t max_batch_;
  std::chrono::nanoseconds max_wait_;
  InferenceActorOptions options_;
  actors::PeerSet peers_;
  std::vector<ObservationBatchMessage> requests_;
  std::vector<caf::actor> requesters_;
  std::size_t rows_waiting_ = 0;
  bool flush_pending_ = false;
  bool done_ = false;
};

}  // namespace

actors::InferenceActor spawn_inference_actor(caf::actor_system& system,
                                             const InferenceConfig& config,
                                             InferenceActorOptions options) {
  return system.spawn<InferenceActorImpl>(config, std::move(options));
}

}  // namespace tagflow::nodes
