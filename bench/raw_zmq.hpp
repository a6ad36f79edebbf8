// The raw ZeroMQ ceilings benchmarks compare against, measured in the same run.
#pragma once

#include <cstddef>

namespace tagflow::bench {

/// Bytes per second of `messages` messages of `size` bytes streamed from a DEALER to a ROUTER in
/// another context over TCP loopback, each sent zero-copy from one buffer (the ceiling of a link).
double raw_zmq_stream_bytes_per_second(int messages, std::size_t size);

}  // namespace tagflow::bench
