#include "nodes/inference/policy_bank_reactor.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <stdexcept>

namespace tagflow::nodes {

PolicyBankReactor::PolicyBankReactor(std::string name, reactors::Environment& env,
                                     const PolicyBankConfig& config,
                                     const PolicyBankPortWidths& widths)
    : reactors::Reactor(std::move(name), env),
      observations("observations", this, widths.observations),
      weights("weights", this, widths.weight_policies.size()),
      actions("actions", this, widths.actions),
      experience("experience", this, widths.experience_policies.size()),
      bank_(config),
      weight_policies_(widths.weight_policies),
      actions_digest_(widths.actions, env),
      experience_digest_(widths.experience_policies.size(), env),
      answer_storage_(widths.actions),
      experience_policies_(widths.experience_policies) {
  if (widths.observations != widths.actions) {
    throw std::invalid_argument("inference " + this->name() + ": " +
                                std::to_string(widths.observations) + " observation channels but " +
                                std::to_string(widths.actions) + " action channels");
  }
  for (const int policy : weight_policies_) {
    if (!bank_.hosts(policy)) {
      throw std::invalid_argument("inference " + this->name() + ": weights of policy " +
                                  std::to_string(policy) + " reach it, but it does not host it");
    }
  }
  if (!weight_policies_.empty()) {
    reaction("load_weights").triggers(weights).effects(experience).body([this] {
      for (std::size_t c = 0; c < weights.size(); ++c) {
        if (!weights[c].is_present()) continue;
        bank_.on_weights(weight_policies_[c], weights[c].get()->value());
        if (weights_listener_) weights_listener_(weight_policies_[c], weights[c].get()->value());
      }
      std::uint64_t lowest = UINT64_MAX;
      for (const int policy : weight_policies_) lowest = std::min(lowest, bank_.version(policy));
      weights_version.store(lowest, std::memory_order_relaxed);
      if (metrics_ != nullptr) metrics_->set_weights_version(lowest);
      send_experience();
    });
  }
  if (widths.observations > 0) {
    reaction("serve").triggers(observations).effects(actions, experience).body([this] {
      serve();
      send_experience();
    });
  }
}

void PolicyBankReactor::send_experience() {
  if (experience.size() == 0 || !experience_source_) return;
  for (std::size_t c = 0; c < experience.size(); ++c) {
    if (experience[c].is_present()) return;  // sent at this tag already: the rest waits a tag
  }
  std::vector<std::pair<int, TransitionsMessage>> waiting = experience_source_();
  if (waiting.empty()) return;
  for (std::size_t c = 0; c < experience.size(); ++c) {
    TransitionsMessage out;
    for (auto& [policy, rows] : waiting) {
      const std::vector<int>& mine = experience_policies_[c];
      if (std::find(mine.begin(), mine.end(), policy) == mine.end() || rows.rows() == 0) continue;
      if (out.rows() != 0) {
        // One replay per policy is the rule (a learner trains one policy); never merge shapes.
        std::cerr << name() << ": experience channel " << c
                  << " links several policies; only the first is sent\n";
        break;
      }
      out = std::move(rows);
    }
    if (out.rows() == 0) continue;
    outside_transitions.fetch_add(static_cast<std::int64_t>(out.rows()), std::memory_order_relaxed);
    auto sent = make_encoded(std::move(out));
    experience_digest_.record(c, tag(), sent->bytes());
    experience[c].set(std::move(sent));
  }
}

void PolicyBankReactor::serve() {
  requests_.clear();
  sparse_.clear();
  channels_.clear();
  answered_.clear();
  for (std::size_t c = 0; c < observations.size(); ++c) {
    if (!observations[c].is_present()) continue;
    const EncodedValue<AgentObservationsMessage>& request = *observations[c].get();
    requests_.push_back(&request.value());
    // The encoding already found the non-zero floats of a mostly-zero request: the first layer
    // reads them from its frame instead of scanning the rows again.
    sparse_.push_back(sparse_observations(request.bytes().bytes(), request.bytes().size));
    channels_.push_back(c);
  }
  // The clock is read only for the metrics (a single-process cluster has none).
  const auto started = metrics_ != nullptr ? std::chrono::steady_clock::now()
                                           : std::chrono::steady_clock::time_point{};
  const std::uint64_t rejected = bank_.rejected();
  // Each channel's storage is lent to serve_into() and comes back filled, maybe another
  // channel's: the vectors go round, their capacity kept.
  answers_.resize(channels_.size());
  for (std::size_t k = 0; k < channels_.size(); ++k) {
    std::swap(answers_[k], answer_storage_[channels_[k]].next());
  }
  bank_.serve_into(requests_, answers_, &answered_, &sparse_);
  const auto dropped = static_cast<std::int64_t>(bank_.rejected() - rejected);
  if (dropped > 0 && dropped_requests.fetch_add(dropped) == 0) {
    std::cerr << name() << ": dropped a request: " << bank_.last_rejection()
              << " (further drops are only counted)\n";
  }
  if (metrics_ != nullptr) {
    std::size_t rows = 0;
    for (const auto& a : answers_) rows += a.rows();
    metrics_->add_inference_batch(
        rows, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  for (std::size_t i = 0; i < answers_.size(); ++i) {
    const std::size_t c = channels_[answered_[i]];
    std::swap(answer_storage_[c].next(), answers_[i]);
    auto answer = answer_storage_[c].share();
    actions_digest_.record(c, tag(), answer->bytes());
    actions[c].set(std::move(answer));  // moved: no count taken and dropped again
  }
  rows_served.store(static_cast<std::int64_t>(bank_.rows_served()), std::memory_order_relaxed);
}

}  // namespace tagflow::nodes
