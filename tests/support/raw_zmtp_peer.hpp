// RawZmtpPeer: a hostile ZeroMQ peer for tests, speaking ZMTP 3.0 (NULL mechanism) over a plain
// TCP socket, so it can do what libzmq never lets a client do: send frames of a multipart
// message without ever sending the last one, or claim any routing id.
//
// Blocking I/O with a send/receive timeout; errors are returned, not thrown. One thread.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>

namespace tagflow::testing {

class RawZmtpPeer {
 public:
  /// Connects to 127.0.0.1:`port` and completes the handshake as a DEALER with `routing_id`.
  /// `timeout_after`: how long one send or receive may wait for the peer.
  RawZmtpPeer(std::uint16_t port, const std::string& routing_id,
              std::chrono::seconds timeout_after = std::chrono::seconds(10)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{static_cast<time_t>(timeout_after.count()), 0};
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address),  // NOLINT
                  sizeof address) != 0) {
      return;
    }
    std::string greeting(64, '\0');
    greeting[0] = '\xff';
    greeting[9] = '\x7f';
    greeting[10] = 3;  // ZMTP 3.0
    greeting.replace(12, 4, "NULL");
    if (!send_all(greeting)) return;
    std::string theirs(64, '\0');
    if (!receive_all(theirs)) return;
    std::string ready = "\x05READY";
    add_property(ready, "Socket-Type", "DEALER");
    add_property(ready, "Identity", routing_id);
    connected_ = send_all(frame(ready, false, true));
  }
  ~RawZmtpPeer() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawZmtpPeer(const RawZmtpPeer&) = delete;
  RawZmtpPeer& operator=(const RawZmtpPeer&) = delete;

  [[nodiscard]] bool connected() const { return connected_; }

  /// Sends one data frame; `more` says another frame of the same message follows.
  bool send_frame(const std::string& body, bool more) { return send_all(frame(body, more, false)); }

  /// True when the other side closed the connection (reads until end of stream or an error,
  /// discarding what the server sent, for at most the receive timeout).
  bool closed_by_peer() {
    char buffer[4096];
    while (true) {
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n == 0) return true;
      if (n < 0) return errno != EAGAIN;  // EWOULDBLOCK is the same on Linux
    }
  }

  /// Bytes written so far, handshake included.
  [[nodiscard]] std::uint64_t bytes_sent() const { return sent_; }

 private:
  static void add_property(std::string& body, const std::string& name, const std::string& value) {
    body += static_cast<char>(name.size());
    body += name;
    const std::uint32_t length = htonl(static_cast<std::uint32_t>(value.size()));
    body.append(reinterpret_cast<const char*>(&length), sizeof length);  // NOLINT
    body += value;
  }
  static std::string frame(const std::string& body, bool more, bool command) {
    std::string out;
    const bool is_long = body.size() > 255;
    out += static_cast<char>((more ? 1 : 0) | (is_long ? 2 : 0) | (command ? 4 : 0));
    if (is_long) {
      for (int shift = 56; shift >= 0; shift -= 8) {
        out += static_cast<char>((static_cast<std::uint64_t>(body.size()) >> shift) & 0xff);
      }
    } else {
      out += static_cast<char>(body.size());
    }
    out += body;
    return out;
  }
  /// False once the peer took nothing for the send timeout: a blocking send returns short only
  /// when its timeout ran out (or with an error), so a short send ends it too. Sending on into
  /// a connection the peer cut but still holds (its kernel queues what arrives until the window
  /// closes) would wait out the timeout once more.
  bool send_all(const std::string& bytes) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) sent_ += static_cast<std::uint64_t>(n);
    return n >= 0 && static_cast<std::size_t>(n) == bytes.size();
  }
  bool receive_all(std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::recv(fd_, bytes.data() + done, bytes.size() - done, 0);
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::uint64_t sent_ = 0;
};

/// A multipart message without end sent at a known top speed: frames of `frame_bytes` with the
/// MORE flag, at least `pace` apart, until the connection is cut or `max_frames` went out.
/// A connection guard promises a bound relative to its checks (the cap plus what arrives within
/// a few check intervals), so a test can only hold it to a number if the sender's speed is
/// bounded: this one sends at most frame_bytes / pace bytes per second.
struct EndlessMessage {
  std::size_t frame_bytes = std::size_t{4} << 20;
  std::chrono::milliseconds pace{4};
  int max_frames = 512;

  /// Sends through `peer`; returns the frames that went out (max_frames: never cut).
  int send(RawZmtpPeer& peer) const {
    const std::string frame(frame_bytes, 'x');
    int frames = 0;
    while (frames < max_frames && peer.send_frame(frame, true)) {
      ++frames;
      std::this_thread::sleep_for(pace);
    }
    return frames;
  }

  /// The most the sender can have sent before a guard with `max_held_bytes` cut it, when that
  /// guard checks at least every `check_interval`: the cap, three intervals at top speed (the
  /// crossing may fall just after a check, and the cut comes at the second check over the cap),
  /// one frame, and 32 MiB for both kernels' socket buffers (sent, but not yet received).
  [[nodiscard]] std::uint64_t bound(std::size_t max_held_bytes,
                                    std::chrono::duration<double> check_interval) const {
    const double per_second =
        static_cast<double>(frame_bytes) / std::chrono::duration<double>(pace).count();
    return static_cast<std::uint64_t>(static_cast<double>(max_held_bytes) +
                                      3 * check_interval.count() * per_second) +
           frame_bytes + (std::uint64_t{32} << 20);
  }
};

}  // namespace tagflow::testing
