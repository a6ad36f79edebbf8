// Messages as text for people: what `tagflow diff` prints of a value two runs sent differently
// (tracing/README.md). The payload's first four bytes name its type (messages.cpp, "Magics");
// it is decoded with messages.hpp's decode() and shown field by field.
//
// describe_payload(): the type, its counts and the first few elements of each field ("ABSENT"
// for no bytes; "N bytes, unknown type (magic ...)" for a magic it does not know).
// first_difference(): the first field and element where two payloads of one type differ, with
// both values (integers exactly, floats to 9 digits and as their bits, so that a difference in
// the last bit shows); "byte for byte the same"; or, when the fields cannot say (other types,
// bytes that do not decode, the same fields encoded differently), the first byte that differs.
// wire_port_name(): a wire port (hosts/reactor/wire_ports.hpp: code << 16 | channel) as
// "transitions[0]". message_cap_advice(): what in a cluster file makes the values of that port
// smaller, for a value over the message cap. Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tagflow::nodes {

[[nodiscard]] std::string describe_payload(const std::uint8_t* data, std::size_t size);
[[nodiscard]] std::string first_difference(const std::uint8_t* a, std::size_t a_size,
                                           const std::uint8_t* b, std::size_t b_size);
[[nodiscard]] std::string wire_port_name(std::uint32_t port);
/// For a value of wire port `port` too large for one message between processes: the params that
/// make such values smaller, and the placements that keep them in one process.
[[nodiscard]] std::string message_cap_advice(std::uint32_t port);

}  // namespace tagflow::nodes
