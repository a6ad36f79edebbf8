// Test helper: two network namespaces joined by a veth pair, each with its own address
// (10.X.Y.1 and .2, X and Y from the test's pid), removed with every process inside on
// destruction, even when a check failed. Needs root and `ip` (iproute2): create() says why not.
// Header-only, like run_command.hpp.
#pragma once

#include <unistd.h>

#include <string>

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
    ns_a = stem_ + "a";
    ns_b = stem_ + "b";
  }
  ~NamespacePair() { remove(); }
  NamespacePair(const NamespacePair&) = delete;
  NamespacePair& operator=(const NamespacePair&) = delete;

  /// Creates both; returns "" or why it could not.
  std::string create() {
    if (::geteuid() != 0) return "network namespaces need root";
    if (sh("command -v ip").exit_code != 0) return "no `ip` command (iproute2)";
    remove();  // left over from a killed run with the same pid
    const CommandResult added = sh("ip netns add " + ns_a);
    if (added.exit_code != 0) return "`ip netns add` failed: " + added.output;
    created_ = true;
    const std::string va = stem_ + "va";
    const std::string vb = stem_ + "vb";
    for (const std::string& command :
         {"ip netns add " + ns_b, "ip link add " + va + " type veth peer name " + vb,
          "ip link set " + va + " netns " + ns_a, "ip link set " + vb + " netns " + ns_b,
          "ip -n " + ns_a + " addr add " + address_a + "/24 dev " + va,
          "ip -n " + ns_b + " addr add " + address_b + "/24 dev " + vb,
          "ip -n " + ns_a + " link set " + va + " up", "ip -n " + ns_b + " link set " + vb + " up",
          "ip -n " + ns_a + " link set lo up", "ip -n " + ns_b + " link set lo up"}) {
      const CommandResult result = sh(command);
      if (result.exit_code != 0) return "`" + command + "` failed: " + result.output;
    }
    return "";
  }

  std::string ns_a, ns_b, address_a, address_b;

  /// The veth ends in ns_a and ns_b (for `ip -n NS link set ... down`, `tc -n NS qdisc ...`).
  std::string veth_a() const { return stem_ + "va"; }
  std::string veth_b() const { return stem_ + "vb"; }

 private:
  void remove() {
    for (const std::string& ns : {ns_a, ns_b}) {
      (void)sh("for p in $(ip netns pids " + ns +
               " 2>/dev/null); do kill -9 $p; done; ip netns del " + ns + " 2>/dev/null");
    }
    (void)sh("ip link del " + stem_ + "va 2>/dev/null");
    created_ = false;
  }

  std::string stem_;
  bool created_ = false;
};

}  // namespace tagflow::testing
