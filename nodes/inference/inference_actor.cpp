#include "nodes/inference/inference_actor.hpp"

#include <chrono>
#include <utility>
#include <vector>

#include "nodes/actor_binding_base.hpp"

namespace tagflow::nodes {
namespace {

using actors::Credit;
using actors::Leave;
using actors::Offer;
using actors::StopRun;

class InferenceActorImpl : public nodes::NodeActorBase<nodes::InferenceActor> {
 public:
  InferenceActorImpl(caf::actor_config& cfg, const InferenceConfig& config,
                     InferenceActorOptions options)
      : NodeActorBase(cfg, options.name, options.report, options.metrics),
        server_(config),
        max_batch_(config.max_batch),
        max_wait_(config.max_wait),
        options_(std::move(options)) {}

  behavior_type make_behavior() override {
    return {
        [](actors::connect_atom, const std::string&, const std::string&, const caf::actor&) {},
        [](actors::connect_atom, const std::string&, const caf::actor&) {},
        [this](const Offer& offer) {
          auto peer = sender_handle();
          if (!peer || done()) return;
          add_peer(peer, offer.port == "observations", offer.from);
          count_received(offer);
          send_to(peer, Credit{offer.port, 1, replica_name()});
        },
        [this](const Credit&) { reject(transport::DropReason::kUnknownKind); },
        [this](const WeightsMessage& weights) {
          if (!accept(weights) || done()) return;
          server_.on_weights(weights);
          options_.report->weights_version.store(server_.weights_version(),
                                                 std::memory_order_relaxed);
          if (options_.metrics != nullptr)
            options_.metrics->set_weights_version(server_.weights_version());
          if (auto peer = sender_handle()) send_to(peer, Credit{"weights", 1, replica_name()});
        },
        [this](const ObservationBatchMessage& request) {
          auto peer = sender_handle();
          if (!peer || !accept(request) || done()) return;
          rows_waiting_ += request.rows();
          requests_.push_back(request);
          requesters_.push_back(peer);
          if (rows_waiting_ >= max_batch_ ||
              static_cast<long>(requests_.size()) >= peers().samplers() || max_wait_.count() == 0) {
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
        [this](const Leave& leave) { on_leave(leave); },
        [this](const StopRun& stop) { on_stop_run(stop); },
    };
  }

 private:
  void serve() {
    if (requests_.empty() || done()) return;
    const auto started = std::chrono::steady_clock::now();
    std::vector<ActionBatchMessage> answers = server_.serve(requests_);
    if (options_.metrics != nullptr) {
      options_.metrics->add_inference_batch(
          rows_waiting_,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    for (std::size_t i = 0; i < answers.size(); ++i) {
      send_to(requesters_[i], std::move(answers[i]));
      send_to(requesters_[i], Credit{"observations", 1, replica_name()});
    }
    options_.report->count.store(static_cast<std::int64_t>(server_.rows_served()),
                                 std::memory_order_relaxed);
    requests_.clear();
    requesters_.clear();
    rows_waiting_ = 0;
  }

  void forget_peer_state(const caf::actor_addr& peer) override {
    for (std::size_t i = requesters_.size(); i-- > 0;) {
      if (requesters_[i].address() != peer) continue;
      rows_waiting_ -= requests_[i].rows();
      requests_.erase(requests_.begin() + static_cast<std::ptrdiff_t>(i));
      requesters_.erase(requesters_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    // The samplers still here may all be waiting already.
    if (!requests_.empty() && static_cast<long>(requests_.size()) >= peers().samplers()) serve();
  }

  void drop_peer_handles() override { requesters_ = {}; }

  InferenceServer server_;
  std::size_t max_batch_;
  std::chrono::nanoseconds max_wait_;
  InferenceActorOptions options_;
  std::vector<ObservationBatchMessage> requests_;
  std::vector<caf::actor> requesters_;
  std::size_t rows_waiting_ = 0;
  bool flush_pending_ = false;
};

}  // namespace

nodes::InferenceActor spawn_inference_actor(caf::actor_system& system,
                                            const InferenceConfig& config,
                                            InferenceActorOptions options) {
  return system.spawn<InferenceActorImpl>(config, std::move(options));
}

}  // namespace tagflow::nodes
