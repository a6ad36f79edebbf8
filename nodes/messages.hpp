// The values that cross connections between node kinds, and their byte encoding.
//
// Every message is a plain value type (copy freely, no references into anyone's memory). The
// encoding is explicit and fixed so the transport can carry a message as raw bytes: a 4-byte
// type magic, a format byte, then u32/u64 counts in little-endian order and each array as one
// raw block of float32 / int64 / uint8 / uint64 elements (no per-element packing). Endianness:
// the machine's, which must be little-endian (checked at compile time).
//
// Observations come in two element types (ObservationType): float32 vectors (CartPole) in the
// `observations` arrays, or uint8 pixel frames (PixelPong-v0) in the `*_u8` arrays — the array
// of the other type stays empty. Frames stay uint8 on the wire and in replay (a quarter of the
// bytes of float32); only the code that feeds a network converts them (network_input.hpp).
//
// decode_*() never throws on bad bytes: it returns false and describes the problem in *error
// (wrong magic, truncated block, inconsistent counts, trailing bytes). encode_*() throws
// std::invalid_argument when the value itself is inconsistent (array lengths that do not match
// its counts), which is a programmer error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/sparse_floats.hpp"

namespace tagflow::nodes {

/// Element type of a message's observation arrays (one byte on the wire).
enum class ObservationType : std::uint8_t { kFloat32 = 0, kUInt8 = 1 };

[[nodiscard]] const char* observation_type_name(ObservationType type);

/// sampler.transitions → replay.transitions: one step of every env of a sampler (rows where an
/// env was not stepped are left out). `terminated` is 1 when the episode ended in a terminal
/// state (no bootstrap); time-limit truncations are 0 and next_observations holds the last
/// observation of the episode.
struct TransitionsMessage {
  std::uint32_t observation_size = 0;
  std::uint64_t weights_version = 0;  // the weights that chose the greedy actions (0: none yet)
  std::vector<float> observations;    // rows × observation_size
  std::vector<std::int64_t> actions;
  std::vector<float> rewards;
  std::vector<std::uint8_t> terminated;
  std::vector<float> next_observations;  // rows × observation_size
  // kUInt8: the observations are in these instead (the float arrays stay empty).
  ObservationType observation_type = ObservationType::kFloat32;
  std::vector<std::uint8_t> observations_u8{};
  std::vector<std::uint8_t> next_observations_u8{};

  [[nodiscard]] std::size_t rows() const { return actions.size(); }
};

/// replay.batches → learner.batches: one minibatch with the replay keys it came from.
struct SampleBatchMessage {
  std::uint32_t observation_size = 0;
  std::vector<std::uint64_t> keys;
  std::vector<float> observations;
  std::vector<std::int64_t> actions;
  std::vector<float> rewards;
  std::vector<std::uint8_t> terminated;
  std::vector<float> next_observations;
  std::vector<float> importance_weights;        // one per row (1 for uniform replay)
  std::vector<std::uint64_t> weights_versions;  // per row: the weights that acted for it
  // kUInt8: the observations are in these instead (the float arrays stay empty).
  ObservationType observation_type = ObservationType::kFloat32;
  std::vector<std::uint8_t> observations_u8{};
  std::vector<std::uint8_t> next_observations_u8{};

  [[nodiscard]] std::size_t rows() const { return keys.size(); }
};

/// learner.priorities → replay.priorities: new priorities for sampled keys.
struct PriorityUpdateMessage {
  std::vector<std::uint64_t> keys;
  std::vector<float> priorities;
};

/// learner.weights → sampler.weights / inference.weights: the online network's flat parameters
/// (MlpSpec layout) and the number of updates that produced them.
struct WeightsMessage {
  std::uint64_t version = 0;
  std::vector<float> values;
};

/// sampler.observations → inference.observations: the current observation of each env of one
/// sampler, for which it wants greedy actions.
struct ObservationBatchMessage {
  std::uint32_t source = 0;  // the sampler replica index; actions come back with it
  std::uint32_t observation_size = 0;
  std::vector<float> observations;  // rows × observation_size
  // kUInt8: the observations are in this instead (`observations` stays empty).
  ObservationType observation_type = ObservationType::kFloat32;
  std::vector<std::uint8_t> observations_u8{};

  [[nodiscard]] std::size_t rows() const {
    const std::size_t elements =
        observation_type == ObservationType::kUInt8 ? observations_u8.size() : observations.size();
    return observation_size == 0 ? 0 : elements / observation_size;
  }
};

/// inference.actions → sampler.actions: greedy actions for one ObservationBatchMessage.
struct ActionBatchMessage {
  std::uint32_t source = 0;
  std::uint64_t weights_version = 0;  // the weights that chose them
  std::vector<std::int64_t> actions;
};

/// multi_agent.observations → inference.observations: the observation of every agent whose policy
/// the receiving server hosts, one row per agent, in agent order. Rows are the env's raw per-agent
/// observations; a server adds the agent feature of a shared policy itself.
struct AgentObservationsMessage {
  std::uint32_t source = 0;  // the multi-agent replica index; actions come back with it
  std::uint32_t observation_size = 0;
  std::vector<std::uint32_t> agents;    // per row: the agent index
  std::vector<std::uint32_t> policies;  // per row: the policy index (cluster file order)
  std::vector<float> observations;      // rows × observation_size

  [[nodiscard]] std::size_t rows() const { return agents.size(); }
};

/// inference.actions → multi_agent.actions: the greedy action of every row of one
/// AgentObservationsMessage, with the policy and weights version that chose it.
struct AgentActionsMessage {
  std::uint32_t source = 0;
  std::vector<std::uint32_t> agents;    // per row, as in the request
  std::vector<std::uint32_t> policies;  // per row
  std::vector<std::uint64_t> versions;  // per row: the weights version of its policy
  std::vector<std::int64_t> actions;    // per row

  [[nodiscard]] std::size_t rows() const { return agents.size(); }
};

using Bytes = std::vector<std::uint8_t>;

/// Weights versions between `newest` and the mean version that acted for the rows of `batch`
/// (the learner's policy lag; 0 for an empty batch or one from the future).
[[nodiscard]] double policy_lag(std::uint64_t newest, const SampleBatchMessage& batch);

/// The size checks every decoded or received message passes before a node uses it: arrays of one
/// entry per row as long as the row count, observation arrays of the message's type rows ×
/// observation_size and the other type's empty. decode() applies them; actor bindings apply them
/// to what CAF delivers (a message that fails is dropped and counted, reason size_mismatch).
[[nodiscard]] bool consistent(const TransitionsMessage& message);
[[nodiscard]] bool consistent(const SampleBatchMessage& message);
[[nodiscard]] bool consistent(const PriorityUpdateMessage& message);
[[nodiscard]] bool consistent(const ObservationBatchMessage& message);
[[nodiscard]] inline bool consistent(const WeightsMessage& /*message*/) { return true; }
[[nodiscard]] inline bool consistent(const ActionBatchMessage& /*message*/) { return true; }
[[nodiscard]] bool consistent(const AgentObservationsMessage& message);
[[nodiscard]] bool consistent(const AgentActionsMessage& message);

/// What a replay sends on `batches` at one tag: the minibatches its rate limiter allowed.
using SampleBatchList = std::vector<SampleBatchMessage>;

[[nodiscard]] Bytes encode(const TransitionsMessage& message);
[[nodiscard]] Bytes encode(const SampleBatchMessage& message);
[[nodiscard]] Bytes encode(const PriorityUpdateMessage& message);
[[nodiscard]] Bytes encode(const WeightsMessage& message);
[[nodiscard]] Bytes encode(const ObservationBatchMessage& message);
[[nodiscard]] Bytes encode(const ActionBatchMessage& message);
[[nodiscard]] Bytes encode(const AgentObservationsMessage& message);
[[nodiscard]] Bytes encode(const AgentActionsMessage& message);
/// The same bytes as encode(message), written into `storage` (its contents dropped, its capacity
/// reused): what an EncodedRecycler (encoded_value.hpp) uses to write a value's bytes again.
[[nodiscard]] Bytes encode(const WeightsMessage& message, Bytes storage);
[[nodiscard]] Bytes encode(const AgentObservationsMessage& message, Bytes storage);
[[nodiscard]] Bytes encode(const AgentActionsMessage& message, Bytes storage);
/// A list of minibatches: their encodings one after the other (each says where it ends), so the
/// list's bytes are exactly what the digest of the per-batch encodings hashes; an empty list is
/// no bytes.
[[nodiscard]] Bytes encode(const SampleBatchList& batches);

/// Decodes `size` bytes at `data` (a received frame, decoded where it lies) into `out`; false
/// with *error on bad bytes, never throws.
[[nodiscard]] bool decode(const std::uint8_t* data, std::size_t size, TransitionsMessage& out,
                          std::string* error);
[[nodiscard]] bool decode(const std::uint8_t* data, std::size_t size, SampleBatchMessage& out,
                          std::string* error);
[[nodiscard]] bool decode(const std::uint8_t* data, std::size_t size, PriorityUpdateMessage& out,
                          std::string* error);
[[nodiscard]] bool decode(const std::uint8_t* data, std::size_t size, WeightsMessage& out,
                          std::string* error);
[[nodiscard]] bool decode(const std::uint8_t* data, std::size_t size, ObservationBatchMessage& out,
                          std::string* error);
[[nodiscard]] bool decode(const std::uint8_t* data, std::size_t size, ActionBatchMessage& out,
                          std::string* error);
[[nodiscard]] bool decode(const std::uint8_t* data, std::size_t size, SampleBatchList& out,
                          std::string* error);
[[nodiscard]] bool decode(const std::uint8_t* data, std::size_t size, AgentObservationsMessage& out,
                          std::string* error);
[[nodiscard]] bool decode(const std::uint8_t* data, std::size_t size, AgentActionsMessage& out,
                          std::string* error);

/// The non-zero floats of a sparse AgentObservations frame, read where they lie in it (the frame
/// must outlive the view); std::nullopt for a dense frame or for bytes that are no
/// AgentObservations frame at all. The positions index the rows' floats laid end to end; in a frame
/// that encode() made or decode() accepted they ascend strictly and stay below rows ×
/// observation_size. encode() lists every float whose bits are not all zero (-0.0 too); the values
/// of a frame from elsewhere may be zeros.
[[nodiscard]] std::optional<SparseFloats> sparse_observations(const std::uint8_t* data,
                                                              std::size_t size);

/// decode() of a whole byte vector.
template <class Message>
[[nodiscard]] bool decode(const Bytes& bytes, Message& out, std::string* error) {
  return decode(bytes.data(), bytes.size(), out, error);
}

}  // namespace tagflow::nodes
