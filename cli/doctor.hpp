// tagflow doctor: a check of this machine that users run when something is off.
//
// Each check exercises the real library (an actor round trip for CAF, a CURVE key pair and a
// socket pair for ZeroMQ, a round trip for MessagePack, a metric rendered by prometheus-cpp, a
// matrix product in a LibTorch process) rather than only reading a version macro.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tagflow::cli {

enum class CheckStatus { ok, warn, fail };

/// One line of the doctor's report. `fail` on a `required` check makes the doctor exit non-zero.
struct Check {
  std::string name;
  CheckStatus status = CheckStatus::ok;
  std::string detail;
  bool required = true;
};

/// A TCP port that a cluster file asks for, and where in the file it was found.
struct ConfiguredPort {
  std::string where;  // e.g. "coordinator.address" or "nodes[2].metrics_port"
  std::string host;
  std::uint16_t port = 0;
};

/// Collects every port a cluster file names: integer values of keys named `port` or ending in
/// `_port` (under a node group with `replicas: N`, the N ports from that value on, one per
/// replica), and `tcp://host:port` strings. Throws std::runtime_error with file and line on a file
/// that does not parse.
std::vector<ConfiguredPort> collect_config_ports(const std::string& config_path);

/// Why a TCP listener cannot bind host:port now (host an IPv4 or IPv6 address or a name), as
/// strerror says it ("Address already in use": another socket is bound there; "Cannot assign
/// requested address": no address of this machine), or "" when it can. The bind is made with
/// SO_REUSEADDR, as ZeroMQ and the metrics endpoints make theirs, and closed at once.
std::string tcp_bind_error(const std::string& host, std::uint16_t port);

/// Why a port tcp_bind_error() found "Address already in use" is in use: "another program
/// listens there" when a TCP socket of this machine listens on it (/proc/net/tcp, tcp6), else
/// that a socket that is no listener holds it — most often a port the kernel gave an outgoing
/// connection, which blocks a listener while it is open and in TIME_WAIT after — naming the
/// kernel's range for those (/proc/sys/net/ipv4/ip_local_port_range) when the port is in it.
std::string port_in_use_reason(std::uint16_t port);

/// True when no socket is bound to host:port (tcp_bind_error() finds nothing; a host that is not
/// an IPv4 address is checked at 127.0.0.1).
bool tcp_port_is_free(const std::string& host, std::uint16_t port);

struct DoctorOptions {
  std::string config_path;  // cluster file whose ports are checked
  std::string host;         // the file's host this machine plays (`tagflow up --host`); "": as up
  std::string torch_probe;  // path of the tagflow-torch executable
};

/// Runs every check. Never throws: a check that cannot run reports `fail` with the reason.
std::vector<Check> run_doctor(const DoctorOptions& options);

/// True when no required check failed.
bool doctor_passed(const std::vector<Check>& checks);

std::string render_doctor_table(const std::vector<Check>& checks);
std::string render_doctor_json(const std::vector<Check>& checks);

}  // namespace tagflow::cli
