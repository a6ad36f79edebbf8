#include "cli/doctor_checks.hpp"

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <yaml-cpp/yaml.h>
#include <caf/all.hpp>
#include <msgpack.hpp>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "cli/doctor.hpp"
#include "cli/launch/launch_plan.hpp"
#include "federation/federation_spec.hpp"
#include "hosts/replica_params_check.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/yaml_reader.hpp"
#include "tagflow/build_info.hpp"

namespace tagflow::cli {
namespace {

Check fail(std::string name, std::string detail, bool required = true) {
  return Check{std::move(name), CheckStatus::fail, std::move(detail), required};
}

/// The doctor's line for each listener a cluster file plans on this machine (those whose address
/// only the process can tell are left out), as `tagflow up` checks them before it starts.
std::vector<Check> check_listeners(const std::vector<PlannedListener>& listeners,
                                   const std::string& path) {
  std::vector<Check> checks;
  for (const PlannedListener& l : listeners) {
    if (l.address.empty() || l.port < 1 || l.port > 65535) continue;
    const std::string name = "port " + std::to_string(l.port);
    const std::string where = l.key + " in " + path + ":" + std::to_string(l.line);
    const std::string why = tcp_bind_error(l.address, static_cast<std::uint16_t>(l.port));
    if (why.empty()) {
      checks.push_back(
          Check{name, CheckStatus::ok, "free on " + l.address + " (" + where + ")", false});
    } else if (why == std::strerror(EADDRINUSE)) {
      checks.push_back(Check{name, CheckStatus::warn,
                             "TAKEN on " + l.address + ": " +
                                 port_in_use_reason(static_cast<std::uint16_t>(l.port)) + " (" +
                                 where + ")",
                             false});
    } else if (why == std::strerror(EADDRNOTAVAIL)) {
      checks.push_back(Check{name, CheckStatus::warn,
                             l.address + " is no address of this machine (" + l.address_key +
                                 " in " + path + ":" + std::to_string(l.address_line) + ", where " +
                                 l.key + " listens)",
                             false});
    } else {
      checks.push_back(Check{name, CheckStatus::warn,
                             "cannot listen on " + l.address + ": " + why + " (" + where + ")",
                             false});
    }
  }
  if (checks.empty()) {
    checks.push_back(Check{
        "ports", CheckStatus::warn,
        "the addresses " + path + "'s processes listen on are known only where they run", false});
  }
  return checks;
}

/// Answers an int with the int plus one. A class rather than a spawned lambda: CAF 0.17 binds a
/// reference through a null pointer when it starts a function actor without arguments, which
/// UBSan rejects.
class Adder : public caf::event_based_actor {
 public:
  explicit Adder(caf::actor_config& config) : caf::event_based_actor(config) {}
  caf::behavior make_behavior() override {
    return {[](int x) { return x + 1; }};
  }
};

/// Runs a shell command and returns its standard output; `exit_code` receives its status.
std::string run_command(const std::string& command, int& exit_code) {
  std::string output;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) {
    exit_code = -1;
    return output;
  }
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0) {
    output.append(buffer.data(), n);
  }
  const int status = pclose(pipe.release());
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

}  // namespace

Check check_caf() {
  const std::string version = std::to_string(CAF_VERSION / 10000) + "." +
                              std::to_string(CAF_VERSION / 100 % 100) + "." +
                              std::to_string(CAF_VERSION % 100);
  try {
    caf::actor_system_config config;
    config.set("scheduler.max-threads", static_cast<size_t>(1));
    caf::actor_system system{config};
    auto adder = system.spawn<Adder>();
    caf::scoped_actor self{system};
    int answer = 0;
    std::string error;
    self->request(adder, std::chrono::seconds(5), 41)
        .receive([&](int reply) { answer = reply; },
                 [&](caf::error& err) { error = system.render(err); });
    self->send_exit(adder, caf::exit_reason::user_shutdown);
    if (answer != 42) return fail("CAF", version + ": actor round trip failed: " + error);
    return Check{"CAF", CheckStatus::ok, version + " (actor round trip ok)", true};
  } catch (const std::exception& e) {
    return fail("CAF", version + ": " + e.what());
  }
}

Check check_zeromq() {
  int major = 0, minor = 0, patch = 0;
  zmq_version(&major, &minor, &patch);
  std::string version =
      std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  if (zmq_has("curve") != 1) {
    return fail("ZeroMQ",
                version + ": CURVE security is NOT available (libzmq built without libsodium)");
  }
  try {
    std::array<char, 41> server_public{}, server_secret{}, client_public{}, client_secret{};
    if (zmq_curve_keypair(server_public.data(), server_secret.data()) != 0 ||
        zmq_curve_keypair(client_public.data(), client_secret.data()) != 0) {
      return fail("ZeroMQ", version + ": CURVE key generation failed");
    }
    zmq::context_t context;
    zmq::socket_t server(context, zmq::socket_type::pair);
    server.set(zmq::sockopt::curve_server, 1);
    server.set(zmq::sockopt::curve_secretkey, server_secret.data());
    server.set(zmq::sockopt::linger, 0);
    server.bind("tcp://127.0.0.1:*");
    const std::string endpoint = server.get(zmq::sockopt::last_endpoint);
    zmq::socket_t client(context, zmq::socket_type::pair);
    client.set(zmq::sockopt::curve_serverkey, server_public.data());
    client.set(zmq::sockopt::curve_publickey, client_public.data());
    client.set(zmq::sockopt::curve_secretkey, client_secret.data());
    client.set(zmq::sockopt::linger, 0);
    client.connect(endpoint);
    client.send(zmq::str_buffer("ping"), zmq::send_flags::none);
    server.set(zmq::sockopt::rcvtimeo, 5000);
    zmq::message_t message;
    if (!server.recv(message) || message.to_string() != "ping") {
      return fail("ZeroMQ", version + ": CURVE-encrypted loopback message did not arrive in 5 s");
    }
    return Check{"ZeroMQ", CheckStatus::ok,
                 version + ", CURVE available (encrypted loopback round trip ok)", true};
  } catch (const std::exception& e) {
    return fail("ZeroMQ", version + ": " + e.what());
  }
}

Check check_msgpack() {
  const std::string version = MSGPACK_VERSION;
  try {
    std::vector<float> weights(1024, 0.5F);
    msgpack::sbuffer buffer;
    msgpack::packer<msgpack::sbuffer> packer(buffer);
    packer.pack_array(2);
    packer.pack(std::string("weights"));
    packer.pack_bin(static_cast<uint32_t>(weights.size() * sizeof(float)));
    packer.pack_bin_body(reinterpret_cast<const char*>(weights.data()),
                         static_cast<uint32_t>(weights.size() * sizeof(float)));
    const msgpack::object_handle handle = msgpack::unpack(buffer.data(), buffer.size());
    const msgpack::object& root = handle.get();
    if (root.type != msgpack::type::ARRAY || root.via.array.size != 2 ||
        root.via.array.ptr[1].type != msgpack::type::BIN ||
        root.via.array.ptr[1].via.bin.size != weights.size() * sizeof(float)) {
      return fail("MessagePack", version + ": binary round trip came back different");
    }
    return Check{"MessagePack", CheckStatus::ok, version + " (binary round trip ok)", true};
  } catch (const std::exception& e) {
    return fail("MessagePack", version + ": " + e.what());
  }
}

Check check_prometheus_cpp() {
  std::string version = build_info::kPrometheusCppVersion;
  if (version.empty()) version = "unknown version";
  try {
    prometheus::Registry registry;
    auto& family = prometheus::BuildCounter()
                       .Name("tagflow_doctor_checks_total")
                       .Help("Doctor self-check")
                       .Register(registry);
    family.Add({{"node", "doctor"}}).Increment();
    const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
    if (text.find("tagflow_doctor_checks_total{node=\"doctor\"} 1") == std::string::npos) {
      return fail("prometheus-cpp", version + ": rendered metrics text is wrong: " + text);
    }
    return Check{"prometheus-cpp", CheckStatus::ok, version + " (metric rendered ok)", true};
  } catch (const std::exception& e) {
    return fail("prometheus-cpp", version + ": " + e.what());
  }
}

std::vector<Check> check_libtorch(const std::string& torch_probe) {
  int exit_code = 0;
  const auto start = std::chrono::steady_clock::now();
  const std::string output = run_command("'" + torch_probe + "' probe 2>&1", exit_code);
  const double probe_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (exit_code != 0) {
    return {fail("LibTorch", "`" + torch_probe + " probe` failed (exit " +
                                 std::to_string(exit_code) + "): " + output.substr(0, 400))};
  }
  nlohmann::json probe;
  try {
    probe = nlohmann::json::parse(output);
  } catch (const std::exception& e) {
    return {fail("LibTorch", std::string("probe printed no JSON: ") + e.what())};
  }
  std::vector<Check> checks;
  std::ostringstream torch_detail;
  torch_detail << probe.value("torch_version", "?") << ", " << probe.value("intra_op_threads", 0)
               << " intra-op threads; a LibTorch process started and probed in "
               << static_cast<int>(probe_ms) << " ms";
  checks.push_back(Check{"LibTorch", CheckStatus::ok, torch_detail.str(), true});

  const std::string blas = probe.value("blas_library", "");
  const std::string kind = probe.value("blas_kind", "unknown");
  std::ostringstream blas_detail;
  blas_detail << kind << " (" << (blas.empty() ? "no BLAS library mapped" : blas)
              << "), 1350x64 matmul at batch 64: " << probe.value("matmul_us", 0.0) << " us";
  if (kind == "openblas") {
    checks.push_back(Check{"BLAS", CheckStatus::ok, blas_detail.str(), true});
  } else {
    checks.push_back(Check{"BLAS", CheckStatus::warn,
                           "!!! NOT OpenBLAS: " + blas_detail.str() +
                               ". LibTorch will be ~25x slower; install libopenblas0-pthread "
                               "(scripts/setup does)",
                           false});
  }
  // The kernels the digest depends on (common/numerics.hpp): pinned, or why not.
  const std::string kernels = probe.value("numerics", "not reported");
  if (probe.value("numerics_portable", false)) {
    checks.push_back(Check{"numerics", CheckStatus::ok,
                           kernels + ": the same digests as every x86-64-v3 machine", false});
  } else {
    checks.push_back(Check{"numerics", CheckStatus::warn,
                           kernels + ": digests of this machine differ from x86-64-v3 machines'",
                           false});
  }
  return checks;
}

Check check_cores() {
  const unsigned cores = std::thread::hardware_concurrency();
  const std::string detail = std::to_string(cores) + " hardware threads";
  if (cores < 2) {
    return Check{"cores", CheckStatus::warn,
                 detail + ": reactor workers and node processes will share one core", false};
  }
  return Check{"cores", CheckStatus::ok, detail, false};
}

std::string huge_page_mode(const std::string& enabled_text) {
  const std::size_t open = enabled_text.find('[');
  const std::size_t close = enabled_text.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return "";
  return enabled_text.substr(open + 1, close - open - 1);
}

Check check_huge_pages() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(in, text);
  const std::string mode = huge_page_mode(text);
  if (mode == "always" || mode == "madvise") {
    return Check{"huge pages", CheckStatus::ok,
                 "transparent huge pages: " + mode +
                     " (LibTorch processes fault their heap in 2 MiB pages as they load)",
                 false};
  }
  return Check{"huge pages", CheckStatus::warn,
               "transparent huge pages: " + (mode.empty() ? std::string("not offered") : mode) +
                   ": each LibTorch process faults its heap in 4 KiB pages as it loads (about "
                   "0.1 CPU s more per start)",
               false};
}

Check check_prometheus_server() {
  int exit_code = 0;
  const std::string output = run_command("prometheus --version 2>&1", exit_code);
  if (exit_code != 0) {
    return Check{"prometheus server", CheckStatus::warn,
                 "`prometheus` not found: monitoring integration tests will not run "
                 "(scripts/setup installs it)",
                 false};
  }
  return Check{"prometheus server", CheckStatus::ok, output.substr(0, output.find('\n')), false};
}

std::vector<Check> check_ports(const std::string& config_path, const std::string& host) {
  // A cluster file (it names its `cluster:`) or a bare federation file is first loaded and
  // checked as `tagflow up` or `tagflow coordinator` would: one they refuse is no machine's fault,
  // and its ports would be read from keys they do not take. A cluster file's ports are then those
  // `tagflow up FILE [--host NAME]` would listen on here, each at its address, checked as its
  // launcher checks them before it starts anything. Other YAML, and a multi-host file whose
  // host here is not given, is only looked through for ports.
  std::optional<std::vector<PlannedListener>> planned;
  try {
    // What no file of ports can be (a directory, a device, bytes that are not text, nothing at
    // all, no file) is refused as `tagflow up` refuses it.
    const YAML::Node root = [&config_path] {
      const std::string text = cluster::read_cluster_file(config_path);
      cluster::check_cluster_text(text, config_path);
      YAML::Node loaded;
      try {
        loaded = YAML::Load(text);
      } catch (const YAML::ParserException&) {
        (void)cluster::parse_cluster_config(text, config_path);  // the line and key, as `up` says
        throw;
      }
      if (loaded.IsNull()) (void)cluster::parse_cluster_config(text, config_path);  // "empty: ..."
      return loaded;
    }();
    if (root.IsMap() && root["federation"] && !root["nodes"]) {
      (void)coordinator::load_federation_spec(config_path);
    } else if (root.IsMap() && root["cluster"]) {
      const cluster::ClusterConfig config = cluster::load_cluster_config(config_path);
      hosts::check_replica_params(config);
      try {
        planned =
            planned_listeners(config, make_launch_plan(config, config_path, std::nullopt, host));
      } catch (const LaunchError& e) {
        if (!host.empty()) return {fail("hosts", e.what())};
      }
    }
  } catch (const cluster::ConfigError& e) {
    return {fail("cluster file", e.what())};
  } catch (const coordinator::FederationConfigError& e) {
    return {fail("cluster file", e.what())};
  } catch (const YAML::Exception&) {
    // Not YAML, or not readable: collect_config_ports() below says which, with the line.
  }
  if (planned) return check_listeners(*planned, config_path);
  std::vector<ConfiguredPort> ports;
  try {
    ports = collect_config_ports(config_path);
  } catch (const std::exception& e) {  // the file cannot be read, or is not YAML
    return {fail("cluster file", e.what())};
  }
  std::vector<Check> checks;
  for (const ConfiguredPort& p : ports) {
    const std::string name = "port " + std::to_string(p.port);
    const std::string where = p.where + " in " + config_path;
    if (tcp_port_is_free(p.host, p.port)) {
      checks.push_back(Check{name, CheckStatus::ok, "free (" + where + ")", false});
    } else {
      checks.push_back(Check{name, CheckStatus::warn,
                             "TAKEN on " + p.host + ": " +
                                 port_in_use_reason(static_cast<std::uint16_t>(p.port)) + " (" +
                                 where + ")",
                             false});
    }
  }
  if (checks.empty()) {
    checks.push_back(Check{"ports", CheckStatus::warn, "no ports found in " + config_path, false});
  }
  return checks;
}

}  // namespace tagflow::cli
