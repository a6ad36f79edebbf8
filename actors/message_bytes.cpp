#include "actors/message_bytes.hpp"

namespace tagflow::actors {
namespace {

/// Float observations are either absent (another element type carries them) or rows × size.
bool observations_fit(const std::vector<float>& observations, std::size_t rows,
                      std::uint32_t observation_size) {
  return observations.empty() || observations.size() == rows * observation_size;
}

}  // namespace

bool consistent(const nodes::TransitionsMessage& message) {
  const std::size_t rows = message.rows();
  return message.rewards.size() == rows && message.terminated.size() == rows &&
         message.observations.size() == message.next_observations.size() &&
         observations_fit(message.observations, rows, message.observation_size);
}

bool consistent(const nodes::SampleBatchMessage& message) {
  const std::size_t rows = message.rows();
  return message.actions.size() == rows && message.rewards.size() == rows &&
         message.terminated.size() == rows && message.importance_weights.size() == rows &&
         message.observations.size() == message.next_observations.size() &&
         observations_fit(message.observations, rows, message.observation_size);
}

bool consistent(const nodes::PriorityUpdateMessage& message) {
  return message.keys.size() == message.priorities.size();
}

bool consistent(const nodes::ObservationBatchMessage& message) {
  return message.observation_size > 0 &&
         message.observations.size() % message.observation_size == 0;
}

}  // namespace tagflow::actors
