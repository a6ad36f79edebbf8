#include "nodes/gateway/policy_bank_backend.hpp"

#include <stdexcept>

namespace tagflow::gateway {

PolicyBankBackend::PolicyBankBackend(const std::string& server,
                                     const nodes::PolicyBankConfig& config,
                                     const std::map<std::string, std::vector<int>>& servers)
    : config_(config),
      model_(make_gateway_model(server, config.agents, config.hosted)),
      bank_(std::make_unique<nodes::PolicyBank>(config)),
      loaded_times_(file_times()) {
  for (const auto& [name, policies] : servers) {
    for (const int p : policies) {
      auto& slot = model_.policy_server.at(static_cast<std::size_t>(p));
      if (slot.empty()) slot = name;
    }
  }
}

std::vector<nodes::AgentActionsMessage> PolicyBankBackend::serve(
    const std::vector<nodes::AgentObservationsMessage>& requests) {
  std::vector<std::size_t> answered;
  std::vector<nodes::AgentActionsMessage> answers = bank_->serve(requests, &answered);
  if (answered.size() != requests.size()) {
    throw std::runtime_error("the policy bank refused a request: " + bank_->last_rejection());
  }
  if (!file_versions_.empty()) {
    for (nodes::AgentActionsMessage& a : answers) {
      for (std::size_t j = 0; j < a.rows(); ++j) {
        const auto it = file_versions_.find(static_cast<int>(a.policies[j]));
        if (it != file_versions_.end()) a.versions[j] += it->second;
      }
    }
  }
  return answers;
}

void PolicyBankBackend::load_weights(int policy, const nodes::WeightsMessage& weights) {
  bank_->on_weights(policy, weights);
  if (bank_->version(policy) == weights.version) last_weights_[policy] = weights;
}

std::uint64_t PolicyBankBackend::version(int policy) const {
  const auto it = file_versions_.find(policy);
  return bank_->version(policy) + (it == file_versions_.end() ? 0 : it->second);
}

std::map<int, std::filesystem::file_time_type> PolicyBankBackend::file_times() const {
  std::map<int, std::filesystem::file_time_type> times;
  for (const int p : config_.hosted) {
    const std::string& file = config_.agents.policies.at(static_cast<std::size_t>(p)).torchscript;
    if (file.empty()) continue;
    std::error_code error;
    times[p] = std::filesystem::last_write_time(file, error);  // min() when it is missing
  }
  return times;
}

std::string PolicyBankBackend::refresh() {
  const std::map<int, std::filesystem::file_time_type> now = file_times();
  if (now == loaded_times_) return {};
  std::vector<int> changed;
  for (const auto& [policy, time] : now) {
    if (loaded_times_[policy] != time) changed.push_back(policy);
  }
  loaded_times_ = now;  // a file that fails is tried again only once it changes again
  std::string names;
  for (const int p : changed) {
    names += (names.empty() ? "" : ", ") + model_.policy_names[static_cast<std::size_t>(p)];
  }
  try {
    auto fresh = std::make_unique<nodes::PolicyBank>(config_);
    for (const auto& [policy, weights] : last_weights_) fresh->on_weights(policy, weights);
    bank_ = std::move(fresh);
  } catch (const std::exception& e) {
    return model_.server + " gateway: the changed TorchScript file of " + names +
           " was not loaded (the previous one keeps serving): " + e.what();
  }
  for (const int p : changed) ++file_versions_[p];
  return model_.server + " gateway: reloaded the TorchScript file of " + names;
}

}  // namespace tagflow::gateway
