#include "cli/launch/coordinator_link.hpp"

#include <exception>

#include <zmq.hpp>

#include "common/trace_recorder.hpp"
#include "federation/control_message.hpp"
#include "nodes/cluster/federation_plan.hpp"
#include "transport/curve_keys.hpp"
#include "transport/local_links.hpp"

namespace tagflow::cli {
namespace {

using coordinator::ControlMessage;
using coordinator::ControlType;

constexpr const char* kLauncherSuffix = "#up";

/// A DEALER connected to `address` as `federate#up` (with its key pair when `keys_dir`).
zmq::socket_t open_socket(zmq::context_t& context, const std::string& address,
                          const std::optional<std::string>& keys_dir, const std::string& federate,
                          std::chrono::milliseconds linger) {
  zmq::socket_t socket(context, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::routing_id, federate + kLauncherSuffix);
  socket.set(zmq::sockopt::linger, static_cast<int>(linger.count()));
  if (keys_dir) {
    const transport::CurveKeyPair mine = transport::read_key_pair(*keys_dir, federate);
    const transport::CurveKeyPair server = transport::read_key_pair(*keys_dir, "coordinator", true);
    transport::make_curve_client(socket, mine, server.public_key);
  }
  const std::string to = transport::nearest_endpoint(address);
  transport::set_ipv6_for(socket, to);
  socket.connect(to);
  return socket;
}

/// The next frame on `socket` decoded, or a CoordinatorLinkError after `timeout`.
ControlMessage await_answer(zmq::socket_t& socket, std::chrono::milliseconds timeout,
                            const std::string& address) {
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, timeout) <= 0) {
    throw CoordinatorLinkError("no answer from the coordinator at " + address + " within " +
                               std::to_string(timeout.count()) + " ms");
  }
  zmq::message_t reply;
  (void)socket.recv(reply, zmq::recv_flags::none);
  const std::optional<ControlMessage> answer =
      coordinator::decode_control(reply.data(), reply.size());
  if (!answer) throw CoordinatorLinkError("the coordinator answered with a malformed frame");
  return *answer;
}

}  // namespace

CoordinatorLink::CoordinatorLink(const cluster::ClusterConfig& config) {
  const coordinator::FederationSpec spec = cluster::federation_spec(config);
  address_ = spec.address;
  keys_dir_ = spec.keys_dir;
}

void CoordinatorLink::report_failure(const std::string& federate, const std::string& why,
                                     std::chrono::milliseconds linger) const noexcept {
  try {
    zmq::context_t context(1);
    zmq::socket_t socket = open_socket(context, address_, keys_dir_, federate, linger);
    ControlMessage failed;
    failed.type = ControlType::kFailed;
    failed.federate = federate;
    failed.text = why;  // encode_control cuts it to the 256 bytes a receiver reads
    const std::string frame = coordinator::encode_control(failed);
    (void)socket.send(zmq::buffer(frame), zmq::send_flags::dontwait);
    socket.close();  // waits up to `linger` for the frame to leave
  } catch (const std::exception&) {
    // Unreadable keys or no socket: the coordinator falls back on the heartbeat timeout.
  }
}

std::string CoordinatorLink::send_result(const std::string& federate, const std::string& process,
                                         const std::string& json,
                                         std::chrono::milliseconds timeout) const {
  try {
    zmq::context_t context(1);
    zmq::socket_t socket = open_socket(context, address_, keys_dir_, federate, timeout);
    ControlMessage result;
    result.type = ControlType::kResult;
    result.process = process;
    result.text = json;
    const std::string frame = coordinator::encode_control(result);
    if (frame.size() > 64 * 1024) {
      throw CoordinatorLinkError("the result of " + process + " (" + std::to_string(frame.size()) +
                                 " bytes) is over the 64 KiB control frame limit");
    }
    (void)socket.send(zmq::buffer(frame), zmq::send_flags::dontwait);
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
    const bool answered = zmq::poll(&item, 1, timeout) > 0;
    socket.set(zmq::sockopt::linger, 0);
    if (!answered) {
      throw CoordinatorLinkError("no answer from the coordinator at " + address_ + " within " +
                                 std::to_string(timeout.count()) + " ms");
    }
    zmq::message_t reply;
    (void)socket.recv(reply, zmq::recv_flags::none);
    const std::optional<ControlMessage> answer =
        coordinator::decode_control(reply.data(), reply.size());
    if (answer && answer->type == ControlType::kResultStored) return answer->text;
    if (answer && answer->type == ControlType::kRefused) {
      throw CoordinatorLinkError("the coordinator refused the result of " + process + ": " +
                                 answer->text);
    }
    throw CoordinatorLinkError("the coordinator answered the result of " + process +
                               " with something else than RESULT_STORED");
  } catch (const zmq::error_t& e) {
    throw CoordinatorLinkError(std::string("cannot reach the coordinator: ") + e.what());
  } catch (const transport::CurveKeyError& e) {
    throw CoordinatorLinkError(e.what());
  }
}

CoordinatorLink::ClockOffset CoordinatorLink::measure_clock(
    const std::string& federate, int rounds, std::chrono::milliseconds timeout) const {
  try {
    zmq::context_t context(1);
    zmq::socket_t socket = open_socket(context, address_, keys_dir_, federate, timeout);
    socket.set(zmq::sockopt::linger, 0);
    ControlMessage request;
    request.type = ControlType::kClockRequest;
    const std::string frame = coordinator::encode_control(request);
    ClockOffset best;
    std::int64_t best_round_trip = -1;
    for (int i = 0; i < rounds; ++i) {
      const std::int64_t sent = trace::TraceRecorder::now_ns();
      (void)socket.send(zmq::buffer(frame), zmq::send_flags::none);
      const ControlMessage answer = await_answer(socket, timeout, address_);
      const std::int64_t received = trace::TraceRecorder::now_ns();
      if (answer.type != ControlType::kClock) {
        throw CoordinatorLinkError(std::string("the coordinator answered CLOCK_REQUEST with ") +
                                   coordinator::control_type_name(answer.type));
      }
      const std::int64_t round_trip = received - sent;
      if (best_round_trip < 0 || round_trip < best_round_trip) {
        best_round_trip = round_trip;
        best.offset_ns = answer.clock_ns - (sent + round_trip / 2);
        best.error_ns = (round_trip + 1) / 2;
      }
    }
    return best;
  } catch (const zmq::error_t& e) {
    throw CoordinatorLinkError(std::string("cannot reach the coordinator: ") + e.what());
  } catch (const transport::CurveKeyError& e) {
    throw CoordinatorLinkError(e.what());
  }
}

void CoordinatorLink::send_trace_file(const std::string& federate, const std::string& name,
                                      const std::string& bytes,
                                      std::chrono::milliseconds timeout) const {
  try {
    zmq::context_t context(1);
    zmq::socket_t socket = open_socket(context, address_, keys_dir_, federate, timeout);
    socket.set(zmq::sockopt::linger, 0);
    std::size_t offset = 0;
    do {
      ControlMessage part;
      part.type = ControlType::kTracePart;
      part.process = name;
      part.offset = offset;
      part.total = bytes.size();
      part.text = bytes.substr(offset, kTracePieceBytes);
      (void)socket.send(zmq::buffer(coordinator::encode_control(part)), zmq::send_flags::none);
      const ControlMessage answer = await_answer(socket, timeout, address_);
      if (answer.type == ControlType::kRefused) {
        throw CoordinatorLinkError("the coordinator refused the trace file " + name + ": " +
                                   answer.text);
      }
      if (answer.type != ControlType::kTraceStored || answer.offset != offset + part.text.size()) {
        throw CoordinatorLinkError("the coordinator answered a piece of the trace file " + name +
                                   " with something else than TRACE_STORED of its end");
      }
      offset += part.text.size();
    } while (offset < bytes.size());
  } catch (const zmq::error_t& e) {
    throw CoordinatorLinkError(std::string("cannot reach the coordinator: ") + e.what());
  } catch (const transport::CurveKeyError& e) {
    throw CoordinatorLinkError(e.what());
  }
}

}  // namespace tagflow::cli
