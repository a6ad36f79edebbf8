#include "cli/doctor.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "cli/doctor_checks.hpp"
#include "common/log_text.hpp"
#include "nodes/cluster/yaml_reader.hpp"

namespace tagflow::cli {
namespace {

/// Splits "tcp://HOST:PORT" (PORT of 1 to 5 digits); false for anything else.
bool split_tcp_endpoint(const std::string& text, std::string& host, long& port) {
  const std::string scheme = "tcp://";
  if (text.compare(0, scheme.size(), scheme) != 0) return false;
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon <= scheme.size()) return false;
  host = text.substr(scheme.size(), colon - scheme.size());
  const std::string digits = text.substr(colon + 1);
  if (host.find_first_of(":/") != std::string::npos || digits.empty() || digits.size() > 5 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  port = std::stol(digits);
  return true;
}

bool is_port_key(const std::string& key) {
  return key == "port" || (key.size() > 5 && key.compare(key.size() - 5, 5, "_port") == 0);
}

void add_port(std::vector<ConfiguredPort>& out, const std::string& where, const std::string& host,
              long value, const YAML::Node& node, const std::string& path) {
  if (value < 1 || value > 65535) {
    throw std::runtime_error(path + ":" + std::to_string(node.Mark().line + 1) + ": key '" + where +
                             "': port " + std::to_string(value) + " is outside 1..65535");
  }
  out.push_back(ConfiguredPort{where, host, static_cast<std::uint16_t>(value)});
}

/// The replica count of the node group `node` at `where` ("nodes.NAME"): its `replicas` when that
/// is a whole number the file may give (1 to 1024), else 1 (the file's own check names it).
long group_replicas(const YAML::Node& node, const std::string& where) {
  const std::string prefix = "nodes.";
  if (where.compare(0, prefix.size(), prefix) != 0 ||
      where.find('.', prefix.size()) != std::string::npos || !node["replicas"]) {
    return 1;
  }
  long replicas = 1;
  if (!YAML::convert<long>::decode(node["replicas"], replicas)) return 1;
  return replicas >= 1 && replicas <= 1024 ? replicas : 1;
}

/// `replicas`: the replica count of the node group being walked; replica i of a group listens on
/// each of the group's ports + i (configs/README.md).
void walk(const YAML::Node& node, const std::string& where, const std::string& key,
          const std::string& path, long replicas, std::vector<ConfiguredPort>& out) {
  if (node.IsMap()) {
    const long group = std::max(replicas, group_replicas(node, where));
    for (const auto& entry : node) {
      const std::string child_key = entry.first.as<std::string>();
      walk(entry.second, where.empty() ? child_key : where + "." + child_key, child_key, path,
           group, out);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      walk(node[i], where + "[" + std::to_string(i) + "]", key, path, replicas, out);
    }
  } else if (node.IsScalar()) {
    const std::string& text = node.Scalar();
    std::string host;
    long endpoint_port = 0;
    if (is_port_key(key)) {
      long value = 0;
      if (!YAML::convert<long>::decode(node, value)) {
        throw std::runtime_error(path + ":" + std::to_string(node.Mark().line + 1) + ": key '" +
                                 where + "': expected a port number, got '" + text + "'");
      }
      add_port(out, where, "127.0.0.1", value, node, path);
      for (long i = 1; i < replicas; ++i) {
        add_port(out, where + " + " + std::to_string(i), "127.0.0.1", value + i, node, path);
      }
    } else if (split_tcp_endpoint(text, host, endpoint_port)) {
      if (host == "*" || host == "localhost") host = "127.0.0.1";
      add_port(out, where, host, endpoint_port, node, path);
    }
  }
}

const char* status_word(CheckStatus status) {
  switch (status) {
    case CheckStatus::ok:
      return "ok";
    case CheckStatus::warn:
      return "warn";
    case CheckStatus::fail:
      return "fail";
  }
  return "?";
}

/// The table shouts failures so that they stand out among many "ok" lines.
std::string table_word(CheckStatus status) {
  return status == CheckStatus::fail ? "FAIL" : status_word(status);
}

}  // namespace

std::vector<ConfiguredPort> collect_config_ports(const std::string& config_path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(config_path);
  } catch (const YAML::BadFile&) {
    throw std::runtime_error(config_path + ": cannot open the cluster file");
  } catch (const YAML::ParserException& e) {
    throw std::runtime_error(config_path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  // As the cluster loader reads it: merge keys resolved, top-level x- keys unread.
  cluster::resolve_merge_keys(root, config_path);
  std::vector<ConfiguredPort> ports;
  if (!root.IsMap()) {
    walk(root, "", "", config_path, 1, ports);
    return ports;
  }
  const std::string unread = cluster::kUnreadKeyPrefix;
  for (const auto& entry : root) {
    const std::string key = entry.first.as<std::string>();
    if (key.compare(0, unread.size(), unread) == 0) continue;
    walk(entry.second, key, key, config_path, 1, ports);
  }
  return ports;
}

std::string tcp_bind_error(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
      rc != 0) {
    return std::string("cannot resolve ") + host + ": " + ::gai_strerror(rc);
  }
  // A name binds at its first IPv4 address, else its first IPv6 one, as the federation's
  // listeners bind it (transport::resolve_preferring_ipv4, transport/local_links.hpp).
  const addrinfo* chosen = found;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      chosen = a;
      break;
    }
  }
  std::string error;
  const int fd = ::socket(chosen->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::strerror(errno);
  } else {
    // SO_REUSEADDR, as ZeroMQ and the metrics server set it: a port whose last connections wait
    // in TIME_WAIT after a run is free for the next one; only a socket bound there takes it.
    const int reuse = 1;
    (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof reuse);
    if (::bind(fd, chosen->ai_addr, chosen->ai_addrlen) != 0) error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return error;
}

namespace {

/// Whether /proc/net/FILE lists a socket in LISTEN state (0A) on local port `port`.
bool listed_as_listening(const char* file, std::uint16_t port) {
  std::ifstream table(std::string("/proc/net/") + file);
  std::string line;
  std::getline(table, line);  // the header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    if (!(fields >> slot >> local >> remote >> state)) continue;
    const std::size_t colon = local.rfind(':');
    if (colon == std::string::npos || state != "0A") continue;
    if (std::strtoul(local.c_str() + colon + 1, nullptr, 16) == port) return true;
  }
  return false;
}

}  // namespace

std::string port_in_use_reason(std::uint16_t port) {
  if (listed_as_listening("tcp", port) || listed_as_listening("tcp6", port)) {
    return "another program listens there";
  }
  std::string reason =
      "no program listens there: a socket of this machine that is no listener holds the port "
      "(a connection's, while it is open and up to 60 s after, in TIME_WAIT)";
  unsigned long low = 0, high = 0;
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  if (range >> low >> high && port >= low && port <= high) {
    reason += "; ports " + std::to_string(low) + "-" + std::to_string(high) +
              " are those the kernel gives outgoing connections "
              "(/proc/sys/net/ipv4/ip_local_port_range): choose ports outside them";
  }
  return reason;
}

bool tcp_port_is_free(const std::string& host, std::uint16_t port) {
  in_addr parsed{};
  return tcp_bind_error(::inet_pton(AF_INET, host.c_str(), &parsed) == 1 ? host : "127.0.0.1", port)
      .empty();
}

std::vector<Check> run_doctor(const DoctorOptions& options) {
  std::vector<Check> checks;
  checks.push_back(check_caf());
  checks.push_back(check_zeromq());
  checks.push_back(check_msgpack());
  for (Check& c : check_libtorch(options.torch_probe)) checks.push_back(std::move(c));
  checks.push_back(check_prometheus_cpp());
  checks.push_back(check_prometheus_server());
  checks.push_back(check_cores());
  checks.push_back(check_huge_pages());
  for (Check& c : check_ports(options.config_path, options.host)) checks.push_back(std::move(c));
  return checks;
}

bool doctor_passed(const std::vector<Check>& checks) {
  for (const Check& c : checks) {
    if (c.required && c.status == CheckStatus::fail) return false;
  }
  return true;
}

std::string render_doctor_table(const std::vector<Check>& checks) {
  std::size_t width = 0;
  for (const Check& c : checks) width = std::max(width, c.name.size());
  std::ostringstream out;
  for (const Check& c : checks) {
    // One line per check: what it quotes (a file name, a host, a value of the file) escaped.
    out << std::left << std::setw(5) << table_word(c.status) << " "
        << std::setw(static_cast<int>(width)) << c.name << "  " << single_line(c.detail) << "\n";
  }
  out << (doctor_passed(checks) ? "doctor: everything required is in place"
                                : "doctor: a required piece is missing or broken (FAIL above)")
      << "\n";
  return out.str();
}

std::string render_doctor_json(const std::vector<Check>& checks) {
  nlohmann::json report;
  report["passed"] = doctor_passed(checks);
  report["checks"] = nlohmann::json::array();
  for (const Check& c : checks) {
    report["checks"].push_back({{"name", c.name},
                                {"status", status_word(c.status)},
                                {"detail", c.detail},
                                {"required", c.required}});
  }
  return report.dump(2) + "\n";
}

}  // namespace tagflow::cli
