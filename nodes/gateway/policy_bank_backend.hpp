// PolicyBankBackend: a GatewayBackend over a PolicyBank (nodes/inference/policy_bank.hpp) — the
// gateway of an inference replica serves the replica's policies with its own bank, built from the
// same configuration (same seeded weights, same TorchScript files), so that outside clients and
// the cluster's own env see the same policies. Weights reach it through the gateway
// (ServiceGateway::offer_weights), from the replica's weights ports. Links LibTorch.
//
// Hot reload of files: refresh() looks at the modification time of every hosted policy's
// `torchscript` file; when one changed, it builds a new bank from the configuration (which loads
// the files and checks them as at start), loads into it the last weights each learned policy got,
// and swaps it in — between forward passes, so a request runs on one bank. The version of a file's
// policy counts its reloads. A file that does not load or fit is reported and the old bank keeps
// serving. Write a new file next to the old one and rename it over it, so that no half-written
// file is read.
// Errors: ParamError as PolicyBank's constructor. Not thread-safe (the gateway's thread only).
#pragma once

#include <filesystem>
#include <map>
#include <memory>

#include "nodes/gateway/gateway_backend.hpp"
#include "nodes/inference/policy_bank.hpp"

namespace tagflow::gateway {

class PolicyBankBackend : public GatewayBackend {
 public:
  /// `server`: the replica's name; `servers`: every replica hosting policies → its policies (to
  /// name, in a refusal, the gateway that serves an agent); may be empty.
  PolicyBankBackend(const std::string& server, const nodes::PolicyBankConfig& config,
                    const std::map<std::string, std::vector<int>>& servers = {});

  [[nodiscard]] const GatewayModel& model() const override { return model_; }
  [[nodiscard]] std::vector<nodes::AgentActionsMessage> serve(
      const std::vector<nodes::AgentObservationsMessage>& requests) override;
  void load_weights(int policy, const nodes::WeightsMessage& weights) override;
  [[nodiscard]] std::uint64_t version(int policy) const override;
  [[nodiscard]] std::string refresh() override;

 private:
  [[nodiscard]] std::map<int, std::filesystem::file_time_type> file_times() const;

  nodes::PolicyBankConfig config_;
  GatewayModel model_;
  std::unique_ptr<nodes::PolicyBank> bank_;
  std::map<int, std::filesystem::file_time_type> loaded_times_;  // policy → its file's time
  std::map<int, std::uint64_t> file_versions_;                   // policy → reloads of its file
  std::map<int, nodes::WeightsMessage> last_weights_;            // for a rebuilt bank
};

}  // namespace tagflow::gateway
