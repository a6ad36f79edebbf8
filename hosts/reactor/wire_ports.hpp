// The wire side of a replica's ports in the federated placement: the fixed numbering of
// (input port, channel) as the uint32 port of the wire header, the byte encoding of each port's
// value type, and the reactors that move values between a replica and its ReactorFederate.
//
// Wire port of a link = (input port code << 16) | input channel at the receiving replica, with
// codes transitions 1, priorities 2, batches 3, weights 4, observations 5, actions 6
// (nodes/README.md). The receiver's channel is unique per (receiving replica, port), so
// (sending federate, wire port) names exactly one link. A data message's payload is the value's
// one encoding (nodes/encoded_value.hpp, messages.hpp; a list of minibatches is its batches'
// encodings one after the other).
//
// add_wire_input() adds a reactor that delivers what `from` sends on a wire port at the tag it
// carries, decoded straight from the received frame (which the value keeps as its bytes);
// add_wire_output() one that sends the bytes the writing reactor encoded to `to`, shared with
// ZeroMQ and with every other link of that output, never copied (`extra_delay`: a connection delay
// the federation link does not already add). A value whose header passed the transport's checks
// but whose payload does not decode (a peer's bug, or without CURVE a peer that is no tagflow
// node) is dropped: counted as tagflow_transport_invalid_messages_total{peer=PORT,
// reason="rejected_by_node"} when `metrics` is given, and the first one on each input logged on
// stderr. A message its grants counted is then missing from that tag, as any the node refuses.
// Errors: std::invalid_argument for an unknown port name. Thread-safety: as reactors.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "federate/reactor_federate.hpp"
#include "nodes/encoded_value.hpp"
#include "nodes/node_metrics.hpp"
#include "reactors/reactors.hpp"

namespace tagflow::hosts {

/// (input port name, channel) → wire port; throws std::invalid_argument for an unknown name.
[[nodiscard]] std::uint32_t wire_port(const std::string& input_port, std::size_t channel);

/// Adds the receiving reactor; returns its output port (connect it to the replica's input).
/// `agents`: a multi-agent cluster, whose observations and actions are the per-agent messages
/// (AgentObservationsMessage, AgentActionsMessage).
reactors::PortBase& add_wire_input(reactors::Environment& env,
                                   coordinator::ReactorFederate& federate,
                                   const std::string& input_port, std::size_t channel,
                                   const std::string& from, bool agents = false,
                                   nodes::NodeMetrics* metrics = nullptr);

class FederateCheckpoint;

/// Adds the sending reactor for a link into `to`'s `input_port` channel `channel`; returns its
/// input port (connect the replica's output to it). With `checkpoint`, every value sent is also
/// shown to it (FederateCheckpoint::record_sent: it keeps what may be in transit at a
/// checkpoint tag).
reactors::PortBase& add_wire_output(reactors::Environment& env,
                                    coordinator::ReactorFederate& federate,
                                    const std::string& output_port, const std::string& to,
                                    const std::string& input_port, std::size_t channel,
                                    std::optional<std::chrono::nanoseconds> extra_delay,
                                    bool agents = false, FederateCheckpoint* checkpoint = nullptr);

}  // namespace tagflow::hosts
