// Test helper: two network namespaces joined by a veth pair, each with its own addresses
// (10.X.Y.1 and .2, X and Y from the test's pid, and fd00:Z::1 and ::2), removed with every
// process inside on destruction, even when a check failed. Optionally the pair goes through a
// third namespace where tests/support/delay_bridge.py passes the frames on after a delay (this
// kernel has no netem). Needs root and `ip` (iproute2): create() says why not. Header-only, like
// run_command.hpp.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/run_command.hpp"

namespace tagflow::testing {

/// Runs a shell command through /bin/sh; its output (stdout and stderr) and exit code.
inline CommandResult sh(const std::string& command) {
  return testing::run_command(command + " 2>&1");
}

/// Two network namespaces joined by a veth pair; removed (processes inside killed) on destruction.
class NamespacePair {
 public:
  /// `prefix` starts the namespaces' names (NAMEa, NAMEb) and the veth pair's.
  explicit NamespacePair(const std::string& prefix = "tfmh") {
    const int id = static_cast<int>(::getpid() % 100000);
    stem_ = prefix + std::to_string(id);
    const std::string net =
        "10." + std::to_string(100 + id % 100) + "." + std::to_string(id / 100 % 250) + ".";
    address_a = net + "1";
    address_b = net + "2";
    char v6_net[32];
    std::snprintf(v6_net, sizeof v6_net, "fd00:%x::", id);
    ipv6_a = std::string(v6_net) + "1";
    ipv6_b = std::string(v6_net) + "2";
    ns_a = stem_ + "a";
    ns_b = stem_ + "b";
  }
  ~NamespacePair() { remove(); }
  NamespacePair(const NamespacePair&) = delete;
  NamespacePair& operator=(const NamespacePair&) = delete;

  /// Creates both; returns "" or why it could not. With `bridge` (the path of
  /// tests/support/delay_bridge.py) the two are joined through a third namespace, NAMEm, where
  /// that bridge passes every frame on (start_bridge() sets its delay); without it, directly.
  std::string create(const std::string& bridge = "") {
    if (::geteuid() != 0) return "network namespaces need root";
    if (sh("command -v ip").exit_code != 0) return "no `ip` command (iproute2)";
    if (!bridge.empty() && sh("command -v python3").exit_code != 0) return "no python3";
    remove();  // left over from a killed run with the same pid
    const CommandResult added = sh("ip netns add " + ns_a);
    if (added.exit_code != 0) return "`ip netns add` failed: " + added.output;
    created_ = true;
    bridge_ = bridge;
    const std::string va = veth_a();
    const std::string vb = veth_b();
    std::vector<std::string> commands{"ip netns add " + ns_b};
    if (bridge.empty()) {
      commands.push_back("ip link add " + va + " type veth peer name " + vb);
    } else {
      commands.insert(commands.end(), {"ip netns add " + ns_m(),
                                       "ip link add " + va + " type veth peer name " + stem_ + "ma",
                                       "ip link add " + vb + " type veth peer name " + stem_ + "mb",
                                       "ip link set " + stem_ + "ma netns " + ns_m(),
                                       "ip link set " + stem_ + "mb netns " + ns_m(),
                                       "ip -n " + ns_m() + " link set " + stem_ + "ma up",
                                       "ip -n " + ns_m() + " link set " + stem_ + "mb up"});
    }
    commands.insert(
        commands.end(),
        {"ip link set " + va + " netns " + ns_a, "ip link set " + vb + " netns " + ns_b,
         "ip -n " + ns_a + " addr add " + address_a + "/24 dev " + va,
         "ip -n " + ns_b + " addr add " + address_b + "/24 dev " + vb,
         // nodad: usable at once, without duplicate address detection's wait.
         "ip -n " + ns_a + " addr add " + ipv6_a + "/64 dev " + va + " nodad",
         "ip -n " + ns_b + " addr add " + ipv6_b + "/64 dev " + vb + " nodad",
         "ip -n " + ns_a + " link set " + va + " up", "ip -n " + ns_b + " link set " + vb + " up",
         "ip -n " + ns_a + " link set lo up", "ip -n " + ns_b + " link set lo up"});
    for (const std::string& command : commands) {
      const CommandResult result = sh(command);
      if (result.exit_code != 0) return "`" + command + "` failed: " + result.output;
    }
    return bridge.empty() ? "" : start_bridge(0);
  }

  /// (Re)starts the bridge of a namespace pair created with one, holding every frame for
  /// `delay_ms` each way; "" once it forwards, or why not.
  std::string start_bridge(int delay_ms) {
    (void)sh("for p in $(ip netns pids " + ns_m() + " 2>/dev/null); do kill -9 $p; done");
    const std::string ready = "/tmp/" + stem_ + "-bridge.out";
    (void)sh("rm -f " + ready);
    (void)sh("ip netns exec " + ns_m() + " python3 " + bridge_ + " " + stem_ + "ma " + stem_ +
             "mb " + std::to_string(delay_ms) + " > " + ready + " 2>&1 &");
    for (int i = 0; i < 100; ++i) {
      if (sh("grep -q ready " + ready).exit_code == 0) return "";
      ::usleep(50 * 1000);
    }
    return "the delay bridge did not start: " + sh("cat " + ready).output;
  }

  std::string ns_a, ns_b, address_a, address_b;
  /// Each end's IPv6 address too (fd00:X::1 and ::2, X from the pid), on the same veth ends.
  std::string ipv6_a, ipv6_b;

  /// The veth ends in ns_a and ns_b (for `ip -n NS link set ... down`, `tc -n NS qdisc ...`).
  std::string veth_a() const { return stem_ + "va"; }
  std::string veth_b() const { return stem_ + "vb"; }
  /// The middle namespace of a bridged pair.
  std::string ns_m() const { return stem_ + "m"; }

 private:
  void remove() {
    for (const std::string& ns : {ns_a, ns_b, ns_m()}) {
      (void)sh("for p in $(ip netns pids " + ns +
               " 2>/dev/null); do kill -9 $p; done; ip netns del " + ns + " 2>/dev/null");
    }
    (void)sh("ip link del " + stem_ + "va 2>/dev/null; ip link del " + stem_ + "vb 2>/dev/null");
    (void)sh("rm -f /tmp/" + stem_ + "-bridge.out");
    created_ = false;
  }

  std::string stem_;
  std::string bridge_;
  bool created_ = false;
};

}  // namespace tagflow::testing
