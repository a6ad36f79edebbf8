// Same-host links without TCP (WIRE.md §1.1). A socket that listens on a TCP endpoint also listens
// on that endpoint's *local twin*, a Unix domain socket (ZeroMQ `ipc://`) whose path is made from
// the TCP address and port: `ipc:///tmp/tagflow-ipc-UID/NETNS/ADDRESS-PORT`. A process about to
// connect to `tcp://ADDRESS:PORT` connects to the twin instead when ADDRESS is one of its own
// network namespace's addresses (so the listener is on this machine, in this namespace) and the
// twin exists. Nothing is exchanged to decide it, so both ends need no protocol change, and a peer
// that has no twin is reached over TCP as before.
//
// The twins live in a directory only this user can enter (mode 0700), so only this user's
// processes reach them; CURVE, where the cluster has keys, runs over a twin as over TCP.
// TAGFLOW_LOCAL_LINKS=0 in a process's environment makes it connect over TCP always (it still
// listens on its twins).
// Thread-safety: the functions are safe to call from any thread.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include <zmq.hpp>

namespace tagflow::transport {

/// The local twin of `tcp_endpoint` ("tcp://ADDRESS:PORT", as ZMQ_LAST_ENDPOINT gives it), or
/// nothing when it is no TCP endpoint with a numeric port or the twins' directory cannot be made
/// private to this user.
std::optional<std::string> local_twin(const std::string& tcp_endpoint);

/// The first IPv4 address `name` (a host name or an address) resolves to, else its first IPv6 one,
/// as text (an IPv6 one without brackets); nothing when it does not resolve, and then, with
/// `error`, why (getaddrinfo's words).
std::optional<std::string> resolve_preferring_ipv4(const std::string& name,
                                                   std::string* error = nullptr);

/// `tcp_endpoint` ("tcp://ADDRESS:PORT") with a host name replaced by its first IPv4 address, or by
/// its first IPv6 address (in brackets) when it has no IPv4 one, as a listener binds it: ZeroMQ
/// resolves names when it connects but takes a name to bind as an interface's ("No such device"
/// for `localhost` or a machine's name). An IP address, `*`, and a name that does not resolve (an
/// interface name) are returned as they are.
std::string bindable_endpoint(const std::string& tcp_endpoint);

/// Turns ZMQ_IPV6 on for `socket` when `tcp_endpoint`, which it is about to bind or connect to, is
/// an IPv6 address (`tcp://[::1]:7600`) or a host name that has IPv6 addresses and no IPv4 one:
/// without it ZeroMQ binds and connects over IPv4 only ("No such device"). A name with an IPv4
/// address, an IPv4 address, `*` and any other endpoint (a twin's `ipc://`) leave the socket as
/// it is, IPv4, so a connection to a name reaches the address bindable_endpoint() bound.
void set_ipv6_for(zmq::socket_t& socket, const std::string& tcp_endpoint);

/// True when `tcp_endpoint`'s address is an address of this network namespace (a loopback or
/// wildcard address, or one an interface here holds). Hostnames are not resolved: false.
bool is_local_address(const std::string& tcp_endpoint);

/// Binds `socket` to its twin of `bound_tcp_endpoint` as well (an endpoint it is already bound
/// to). Returns the twin, or nothing when there is none or it could not be bound (a link to it then
/// simply stays TCP).
std::optional<std::string> bind_local_twin(zmq::socket_t& socket,
                                           const std::string& bound_tcp_endpoint);

/// The file of a twin this process bound, removed when the holder is destroyed (or by remove()):
/// ZeroMQ removes a stale file at the path when it binds, but leaves its own behind when the socket
/// closes. Destroy it while the socket still holds the TCP port, before closing the socket: no
/// other process can then have bound the same twin since.
class TwinFile {
 public:
  TwinFile() = default;
  TwinFile(const TwinFile&) = delete;
  TwinFile& operator=(const TwinFile&) = delete;
  ~TwinFile() { remove(); }

  /// Takes the twin bind_local_twin() returned ("ipc://PATH"; nothing: there is none to remove).
  void adopt(const std::optional<std::string>& twin);
  /// Removes the file now (a socket at the path that is not this process's own stays: it is only
  /// removed when it is still the file this process bound).
  void remove() noexcept;

 private:
  std::string path_;
  dev_t device_ = 0;
  ino_t inode_ = 0;
};

/// The endpoint to connect to for `endpoint`: its twin when local links are on, the address is
/// local and something listens at the twin (a probe connection, closed at once: a killed listener
/// leaves its file behind); otherwise `endpoint` itself.
std::string nearest_endpoint(const std::string& endpoint);

/// False when TAGFLOW_LOCAL_LINKS=0 (read once).
bool local_links_enabled();

}  // namespace tagflow::transport
