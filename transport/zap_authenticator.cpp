#include "transport/zap_authenticator.hpp"

#include <array>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>
#include <zmq.h>

#include "transport/connection_guard.hpp"

namespace tagflow::transport {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";

std::string z85_of(const zmq::message_t& key) {
  if (key.size() != 32) return {};
  std::array<char, 41> text{};
  if (zmq_z85_encode(text.data(), static_cast<const std::uint8_t*>(key.data()), 32) == nullptr) {
    return {};
  }
  return text.data();
}

}  // namespace

ZapAuthenticator::ZapAuthenticator(zmq::context_t& context, std::set<std::string> allowed,
                                   std::string socket_name)
    : context_(context),
      allowed_(std::move(allowed)),
      socket_name_(std::move(socket_name)),
      handler_(context, zmq::socket_type::rep) {
  handler_.bind(kZapEndpoint);
  stop_endpoint_ =
      "inproc://tagflow-zap-stop-" + std::to_string(reinterpret_cast<std::uintptr_t>(this));
  zmq::socket_t stop_receiver(context_, zmq::socket_type::pair);
  stop_receiver.bind(stop_endpoint_);
  thread_ = std::thread([this, receiver = std::move(stop_receiver)]() mutable {
    std::array<zmq::pollitem_t, 2> items{
        {{handler_.handle(), 0, ZMQ_POLLIN, 0}, {receiver.handle(), 0, ZMQ_POLLIN, 0}}};
    while (true) {
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(-1));
      if ((items[1].revents & ZMQ_POLLIN) != 0) break;
      if ((items[0].revents & ZMQ_POLLIN) != 0) answer(handler_);
    }
    handler_.close();
  });
}

ZapAuthenticator::~ZapAuthenticator() {
  zmq::socket_t stop(context_, zmq::socket_type::pair);
  stop.connect(stop_endpoint_);
  stop.send(zmq::str_buffer("stop"), zmq::send_flags::none);
  thread_.join();
}

void ZapAuthenticator::answer(zmq::socket_t& handler) {
  // Request frames (ZMQ RFC 27): version, request id, domain, address, identity, mechanism,
  // credentials...
  std::vector<zmq::message_t> frames;
  do {
    zmq::message_t frame;
    if (!handler.recv(frame, zmq::recv_flags::none)) return;
    frames.push_back(std::move(frame));
  } while (handler.get(zmq::sockopt::rcvmore) != 0 && frames.size() < 16);
  while (handler.get(zmq::sockopt::rcvmore) != 0) {
    zmq::message_t extra;
    (void)handler.recv(extra, zmq::recv_flags::none);
  }
  const std::string request_id = frames.size() > 1 ? frames[1].to_string() : std::string();
  const std::string address = frames.size() > 3 ? frames[3].to_string() : std::string();
  const std::string mechanism = frames.size() > 5 ? frames[5].to_string() : std::string();
  std::string key;
  if (mechanism == "CURVE" && frames.size() > 6) key = z85_of(frames[6]);
  const bool allowed = !key.empty() && allowed_.count(key) != 0;
  if (allowed) {
    accepted_.fetch_add(1, std::memory_order_relaxed);
  } else {
    count_refusal();
    const std::string shown =
        key.empty() ? "mechanism " + escape_for_log(mechanism, 32) : "client key " + key;
    if (logged_.allow(shown)) {
      spdlog::warn("security: refused connection from {} to {} ({}): not in the allow-list",
                   escape_for_log(address), socket_name_, shown);
    }
  }
  handler.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
  handler.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
  handler.send(zmq::buffer(std::string(allowed ? "200" : "400")), zmq::send_flags::sndmore);
  handler.send(zmq::buffer(std::string(allowed ? "OK" : "client key not allowed")),
               zmq::send_flags::sndmore);
  handler.send(zmq::buffer(key), zmq::send_flags::sndmore);  // user id: the client's key
  handler.send(zmq::str_buffer(""), zmq::send_flags::none);
}

void ZapAuthenticator::count_refusal() {
  refused_.fetch_add(1, std::memory_order_relaxed);
  const std::lock_guard<std::mutex> lock(observer_mutex_);
  if (refused_observer_) refused_observer_();
}

void ZapAuthenticator::note_failed_handshake(std::uint32_t protocol_error) {
  {
    const std::lock_guard<std::mutex> lock(observer_mutex_);
    log_failed_handshake(failed_kinds_, protocol_error, socket_name_);
  }
  count_refusal();
}

}  // namespace tagflow::transport
