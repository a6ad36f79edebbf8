// Other CPUs, emulated (common/numerics.hpp): `tagflow up`'s environment names the kernels other
// machines' libraries would pick — OpenBLAS core types Sandybridge, Haswell and Zen, ATen's
// default and avx2 kernels, glibc's libm without FMA — and under `numerics: portable` (every
// file's default) each of configs/local.yaml (one process and six), configs/atari.yaml and
// configs/marl-serve.yaml, shortened, ends with one digest under all of them. Under
// `numerics: native` the same settings reach the libraries: a Sandybridge/default run of the
// local file ends with another digest and its summary says the digest is specific to the CPU,
// which shows the emulation is real.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/numerics.hpp"
#include "tests/support/cluster_files.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/shipped_config.hpp"

namespace tagflow::cli {
namespace {

namespace fs = std::filesystem;

/// One emulated machine: environment assignments for `tagflow up`.
struct Machine {
  std::string name;
  std::string env;  // "VAR=value VAR=value", or "" for this machine as it is
};

/// The combinations of the issue: three OpenBLAS core types by two ATen capabilities, and
/// glibc's libm with FMA hidden.
std::vector<Machine> emulated_machines() {
  std::vector<Machine> machines{{"this machine", ""}};
  for (const char* core : {"Sandybridge", "Haswell", "Zen"}) {
    for (const char* aten : {"default", "avx2"}) {
      machines.push_back({std::string(core) + "/" + aten, std::string("OPENBLAS_CORETYPE=") + core +
                                                              " ATEN_CPU_CAPABILITY=" + aten});
    }
  }
  machines.push_back({"libm without FMA", "GLIBC_TUNABLES=glibc.cpu.hwcaps=-FMA"});
  return machines;
}

class EmulatedCpus : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference need tagflow-torch";
    if (!numerics::this_cpu().x86_64_v3) {
      GTEST_SKIP() << "this CPU (" << numerics::this_cpu().model
                   << ") has no AVX2/FMA: the pinned kernels cannot run here";
    }
    dir_ = fs::path(::testing::TempDir()) / ("tagflow_numerics_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  /// `source` (a file under configs/) with its `stop:` section replaced by `stop` and each
  /// `from` → `to` of `edits` applied (each must be found), written as DIR/NAME on free ports of
  /// its own (the tests run beside others).
  std::string shortened(const std::string& source, const std::string& name, const std::string& stop,
                        const std::vector<std::pair<std::string, std::string>>& edits = {}) {
    std::ifstream in(fs::path(TAGFLOW_SOURCE_DIR) / "configs" / source);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_FALSE(text.empty()) << source;
    const std::size_t at = text.find("\nstop:\n");
    EXPECT_NE(at, std::string::npos) << source << " has no stop section";
    if (at != std::string::npos) {
      std::size_t end = at + 7;
      while (end < text.size() && text[end] == ' ') {
        const std::size_t line_end = text.find('\n', end);
        end = line_end == std::string::npos ? text.size() : line_end + 1;
      }
      text.replace(at + 1, end - at - 1, "stop:\n  " + stop + "\n");
    }
    for (const auto& [from, to] : edits) {
      const std::size_t where = text.find(from);
      EXPECT_NE(where, std::string::npos) << source << " no longer contains " << from;
      if (where != std::string::npos) text.replace(where, from.size(), to);
    }
    std::ofstream(dir_ / name) << testing::on_free_ports(text, source);
    return (dir_ / name).string();
  }

  /// Runs `tagflow up FILE ARGS` on `machine`; returns the summary (null when the run failed).
  nlohmann::json up(const std::string& file, const Machine& machine, const std::string& args) {
    const fs::path summary = dir_ / "summary.json";
    fs::remove(summary);
    // Processes write their logs under DIR/logs-N, a new directory per run (one process has none).
    const std::string logs =
        args.find("single") == std::string::npos
            ? " --log-dir " + (dir_ / ("logs-" + std::to_string(++runs_))).string()
            : std::string();
    const auto result =
        testing::run_command((machine.env.empty() ? "" : "env " + machine.env + " ") +
                             testing::tagflow_binary() + " up " + file + " " + args + " --quiet" +
                             logs + " --summary " + summary.string() + " 2>&1");
    EXPECT_EQ(result.exit_code, 0) << machine.name << ": " << result.output;
    if (result.exit_code != 0 || !fs::exists(summary)) return nullptr;
    std::ifstream in(summary);
    return nlohmann::json::parse(in, nullptr, false);
  }

  /// The digest of `file` on every emulated machine is the one on this machine, and every
  /// summary reports the pinned kernels.
  void expect_one_digest(const std::string& file, const std::string& args,
                         const std::vector<Machine>& machines) {
    std::map<std::string, std::string> digests;
    for (const Machine& machine : machines) {
      const nlohmann::json summary = up(file, machine, args);
      ASSERT_TRUE(summary.is_object()) << machine.name;
      digests[machine.name] = summary.value("digest", "");
      const nlohmann::json& n = summary["numerics"];
      EXPECT_EQ(n.value("mode", ""), "portable") << machine.name;
      EXPECT_TRUE(n.value("portable", false)) << machine.name << ": " << n.dump();
      EXPECT_EQ(n.value("blas_core", ""), "Haswell") << machine.name;
      EXPECT_EQ(n.value("aten_capability", ""), "avx2") << machine.name;
      EXPECT_EQ(n.value("libm", ""), "plain") << machine.name;
    }
    const std::string expected = digests.at(machines.front().name);
    EXPECT_EQ(expected.size(), 16U);
    for (const auto& [name, digest] : digests) {
      EXPECT_EQ(digest, expected) << file << " on " << name << " (" << args << ")";
    }
  }

  fs::path dir_;
  int runs_ = 0;  // runs as processes so far: each has its own log directory
};

/// configs/local.yaml shortened, its ports moved to a free range.
std::string local_yaml(int base_port) {
  testing::LocalClusterOptions options;
  options.port = testing::local_cluster_ports_from(base_port);
  return testing::local_cluster_yaml(options);
}

TEST_F(EmulatedCpus, LocalClusterInOneProcessGivesOneDigestOnEveryCpu) {
  const int base = testing::free_local_cluster_ports();
  ASSERT_GT(base, 0);
  const fs::path file = dir_ / "local.yaml";
  std::ofstream(file) << local_yaml(base);
  expect_one_digest(file.string(), "--placement single", emulated_machines());
}

TEST_F(EmulatedCpus, LocalClusterAsProcessesGivesTheOneProcessDigest) {
  const int base = testing::free_local_cluster_ports();
  ASSERT_GT(base, 0);
  const fs::path file = dir_ / "local.yaml";
  std::ofstream(file) << local_yaml(base);
  const nlohmann::json single = up(file.string(), {"this machine", ""}, "--placement single");
  ASSERT_TRUE(single.is_object());
  const std::vector<Machine> machines{
      {"Sandybridge/default", "OPENBLAS_CORETYPE=Sandybridge ATEN_CPU_CAPABILITY=default"},
      {"Zen/avx2, libm without FMA",
       "OPENBLAS_CORETYPE=Zen ATEN_CPU_CAPABILITY=avx2 GLIBC_TUNABLES=glibc.cpu.hwcaps=-FMA"}};
  for (const Machine& machine : machines) {
    const nlohmann::json processes = up(file.string(), machine, "");
    ASSERT_TRUE(processes.is_object()) << machine.name;
    EXPECT_EQ(processes.value("placement", ""), "process");
    EXPECT_EQ(processes.value("digest", ""), single.value("digest", "-")) << machine.name;
    EXPECT_TRUE(processes["numerics"].value("portable", false)) << processes["numerics"].dump();
  }
}

TEST_F(EmulatedCpus, NativeKernelsFollowTheEmulatedCpuAndSaySo) {
  const int base = testing::free_local_cluster_ports();
  ASSERT_GT(base, 0);
  const fs::path portable = dir_ / "local.yaml";
  std::ofstream(portable) << local_yaml(base);
  const fs::path native = dir_ / "local-native.yaml";
  std::string text = local_yaml(base);
  text.replace(text.find("\nmode: "), 1, "\nnumerics: native\n");
  std::ofstream(native) << text;
  const Machine old_cpu{"Sandybridge/default",
                        "OPENBLAS_CORETYPE=Sandybridge ATEN_CPU_CAPABILITY=default"};
  const nlohmann::json pinned = up(portable.string(), old_cpu, "--placement single");
  const nlohmann::json own = up(native.string(), old_cpu, "--placement single");
  ASSERT_TRUE(pinned.is_object());
  ASSERT_TRUE(own.is_object());
  EXPECT_NE(own.value("digest", ""), pinned.value("digest", ""))
      << "the emulated CPU's kernels did not change the native run";
  const nlohmann::json& n = own["numerics"];
  EXPECT_EQ(n.value("mode", ""), "native");
  EXPECT_FALSE(n.value("portable", true));
  EXPECT_EQ(n.value("blas_core", ""), "Sandybridge");
  EXPECT_EQ(n.value("aten_capability", ""), "default");
  EXPECT_NE(n.value("kernels", "").find("digest specific to " + numerics::this_cpu().model),
            std::string::npos)
      << n.dump();
}

TEST_F(EmulatedCpus, AtariFramesGiveOneDigestOnEveryCpu) {
  // The 28,224-wide first layer is the most order-sensitive product of the configs.
  const std::string file = shortened(
      "atari.yaml", "atari.yaml", "env_steps: 500",
      {{"min_size: 500", "min_size: 100"},
       {"eval_episodes: 2, eval_max_steps: 500", "eval_episodes: 1, eval_max_steps: 100"}});
  const std::vector<Machine> all = emulated_machines();
  expect_one_digest(file, "--placement single", {all[0], all[1], all[6], all[7]});
}

TEST_F(EmulatedCpus, MultiAgentServiceGivesOneDigestOnEveryCpu) {
  const std::string file = shortened("marl-serve.yaml", "marl-serve.yaml", "env_steps: 20000");
  const std::vector<Machine> all = emulated_machines();
  expect_one_digest(file, "--placement single", {all[0], all[1], all[4], all[7]});
}

}  // namespace
}  // namespace tagflow::cli
