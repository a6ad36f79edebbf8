// LearnerState: a learner's complete training state as plain floats — online and target
// weights, Adam's two moment vectors and step count, and the update count — so that training
// continues bit-for-bit after a restore. Saved and loaded by learner_checkpoint.hpp.
// A value type; not synchronized.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tagflow::learning {

struct LearnerState {
  std::string network;  // MlpSpec::to_string() of the network it belongs to
  std::int64_t updates = 0;
  std::int64_t adam_step = 0;
  std::vector<float> online;
  std::vector<float> target;
  std::vector<float> adam_m;
  std::vector<float> adam_v;
};

/// A state that cannot be used: wrong network, truncated or corrupt checkpoint, I/O failure.
class LearnerStateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tagflow::learning
