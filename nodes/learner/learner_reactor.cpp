#include "nodes/learner/learner_reactor.hpp"

#include <algorithm>
#include <chrono>

#include "common/fnv1a.hpp"

namespace tagflow::nodes {

LearnerReactor::LearnerReactor(std::string name, reactors::Environment& env,
                               const LearnerConfig& config, const LearnerPortWidths& widths,
                               std::unique_ptr<Evaluator> evaluator,
                               std::optional<double> target_return)
    : reactors::Reactor(std::move(name), env),
      batches("batches", this, widths.batches),
      priorities("priorities", this, widths.priorities),
      weights("weights", this, widths.weights),
      server_(config),
      evaluator_(std::move(evaluator)),
      target_return_(target_return),
      priorities_digest_(widths.priorities, env),
      weights_digest_(widths.weights, env) {
  reaction("initial_weights").triggers(startup()).effects(weights).body([this] {
    if (resumed_) return;
    send_weights(server_.weights());
    record_weights_hash();
  });
  if (widths.batches == 0) return;
  reaction("update").triggers(batches).effects(priorities, weights).body([this] {
    PriorityUpdateMessage all;
    std::optional<WeightsMessage> newest;
    bool updated = false;
    for (std::size_t c = 0; c < batches.size(); ++c) {
      if (!batches[c].is_present()) continue;
      for (const SampleBatchMessage& batch : batches[c].get()->value()) {
        if (target_reached_) break;
        const auto started = std::chrono::steady_clock::now();
        const auto newest_version = static_cast<std::uint64_t>(server_.updates());
        LearnerOutput out = server_.on_batch(batch);
        if (metrics_ != nullptr) {
          metrics_->set_policy_lag(policy_lag(newest_version, batch));
          metrics_->add_learner_update(
              out.loss,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
          metrics_->set_weights_version(static_cast<std::uint64_t>(server_.updates()));
        }
        updated = true;
        all.keys.insert(all.keys.end(), out.priorities.keys.begin(), out.priorities.keys.end());
        all.priorities.insert(all.priorities.end(), out.priorities.priorities.begin(),
                              out.priorities.priorities.end());
        if (out.weights) newest = std::move(out.weights);
        updates.store(server_.updates(), std::memory_order_relaxed);
        maybe_evaluate();
      }
    }
    if (!all.keys.empty()) {
      send_on_every_channel(priorities, priorities_digest_, tag(), make_encoded(std::move(all)));
    }
    if (newest) send_weights(std::move(*newest));
    if (updated) record_weights_hash();
  });
}

void LearnerReactor::record_weights_hash() {
  // Every 1,024 hashes, the ones no cutoff can need go, as in the channel digests
  // (channel_digest.hpp): the cutoff is after the floor (a federate's, from FLOOR) or, in a
  // program that is the whole run, at or after this tag.
  if (weights_hashes_.size() % 1024 == 1023) {
    const reactors::Environment& env = environment();
    const reactors::Tag floor = env.config().cutoff_never_behind ? tag() : env.cutoff_floor();
    const auto first_at_floor = std::partition_point(
        weights_hashes_.begin(), weights_hashes_.end(),
        [&floor](const std::pair<reactors::Tag, std::uint64_t>& e) { return e.first < floor; });
    // The newest hash before the floor stays: a cutoff right after it answers with it.
    if (first_at_floor - weights_hashes_.begin() >= 2) {
      weights_hashes_.erase(weights_hashes_.begin(), first_at_floor - 1);
    }
  }
  weights_hashes_.emplace_back(tag(), fnv1a64(encode(server_.weights())));
}

std::uint64_t LearnerReactor::weights_hash_before(reactors::Tag cutoff) const {
  std::uint64_t hash = weights_hashes_.empty() ? 0 : weights_hashes_.front().second;
  for (const auto& [at, h] : weights_hashes_) {
    if (!(at < cutoff)) break;
    hash = h;
  }
  return hash;
}

void LearnerReactor::send_weights(WeightsMessage message) {
  send_on_every_channel(weights, weights_digest_, tag(), make_encoded(std::move(message)));
}

void LearnerReactor::maybe_evaluate() {
  if (!evaluator_ || !target_return_) return;
  if (server_.updates() % server_.config().eval_every != 0) return;
  const double mean = evaluator_->mean_return(server_.weights().values);
  evaluations_.push_back(mean);
  last_evaluation.store(mean, std::memory_order_relaxed);
  if (metrics_ != nullptr) metrics_->add_evaluation(mean);
  if (mean >= *target_return_) {
    target_reached_ = true;
    request_stop();
  }
}

void LearnerReactor::save(StateWriter& out) const {
  server_.save(out);
  priorities_digest_.save(out);
  weights_digest_.save(out);
  out.f64_vector(evaluations_);
  out.boolean(target_reached_);
  out.u64(weights_hashes_.size());
  for (const auto& [at, hash] : weights_hashes_) {
    out.i64(at.time_ns());
    out.u32(at.microstep());
    out.u64(hash);
  }
}

void LearnerReactor::load(StateReader& in) {
  server_.load(in);
  priorities_digest_.load(in);
  weights_digest_.load(in);
  evaluations_ = in.f64_vector();
  target_reached_ = in.boolean();
  const std::uint64_t n = in.u64();
  if (n > in.left() / 20) in.fail("the weights history");
  weights_hashes_.clear();
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::int64_t time = in.i64();
    const std::uint32_t micro = in.u32();
    weights_hashes_.emplace_back(reactors::Tag(time, micro), in.u64());
  }
  resumed_ = true;
  updates.store(server_.updates(), std::memory_order_relaxed);
  if (!evaluations_.empty()) last_evaluation.store(evaluations_.back(), std::memory_order_relaxed);
}

}  // namespace tagflow::nodes
