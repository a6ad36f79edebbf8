// TorchScript policies: export an MLP's weights as a TorchScript module file, and load any
// TorchScript module (ours, or one scripted and saved from Python) on the inference path.
//
// The contract of a policy module: forward(x: Tensor[batch, observation_size] float32) returns
// Tensor[batch, actions] of scores (Q-values or logits); the action is the argmax (ties: lowest).
// The exported module holds the layers as parameters w0, b0, w1, b1, ... (torch.nn.Linear's
// shapes) and computes relu(x·w0ᵀ + b0) ... x·wLᵀ + bL.
//
// TorchScriptPolicy is not thread-safe (one caller at a time); it owns its module. Errors:
// TorchScriptError with the path and LibTorch's message.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rl/learning/mlp_spec.hpp"

namespace tagflow::learning {

class TorchScriptError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Writes a TorchScript module for the MLP `spec` with the flat `parameters` (MlpSpec layout)
/// to `path` (atomically). Throws TorchScriptError, std::invalid_argument on a size mismatch.
void export_torchscript(const MlpSpec& spec, const std::vector<float>& parameters,
                        const std::string& path);

class TorchScriptPolicy {
 public:
  /// Loads a module saved with torch.jit.save / export_torchscript. Throws TorchScriptError.
  explicit TorchScriptPolicy(const std::string& path);
  ~TorchScriptPolicy();
  TorchScriptPolicy(TorchScriptPolicy&&) noexcept;
  TorchScriptPolicy& operator=(TorchScriptPolicy&&) noexcept;
  TorchScriptPolicy(const TorchScriptPolicy&) = delete;
  TorchScriptPolicy& operator=(const TorchScriptPolicy&) = delete;

  /// Scores for `batch` rows of `observation_size` floats: batch × actions floats, row-major.
  [[nodiscard]] std::vector<float> scores(const float* observations, std::int64_t batch,
                                          std::int64_t observation_size);
  /// The module's parameters as the flat MlpSpec layout of `spec`, when they are exactly its
  /// layers' weights and biases in order (ours, or torch.nn.Sequential of Linear and ReLU saved
  /// from Python); empty otherwise. Says nothing about forward(): callers compare scores.
  [[nodiscard]] std::vector<float> mlp_parameters(const MlpSpec& spec) const;
  /// The argmax action of each row.
  [[nodiscard]] std::vector<std::int64_t> act(const float* observations, std::int64_t batch,
                                              std::int64_t observation_size);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tagflow::learning
