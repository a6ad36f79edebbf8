// `tagflow bench recovery`: what checkpoints cost (docs/recovery.md). The local demo cluster
// (configs/local.yaml's nodes: 2 samplers acting through an inference server, replay, learner),
// stopped after a fixed number of env steps, runs twice as federated processes through
// `tagflow up` (the launcher beside this binary): without checkpoints, then with a checkpoint
// every E of logical time, E chosen from the first run so that one falls about every 5 s of wall
// time. Reported: env steps/s of both runs and their ratio; per node kind, the bytes of one
// checkpoint part, the milliseconds its reaction took to save it in memory (what the federate
// waited for) and those its writer thread took to write it (from ROOT/<replica>.stats, written by
// every federate); and whether both runs ended with the same digest (1 = yes).
//
// Then the time from a kill to training again (the goal: at most 3 s plus process
// start-up): a third run of the checkpointed cluster, with `restart: {max: 1}` and a metrics
// endpoint on the learner, is left to write its first complete checkpoint and train; its learner
// process is then killed with SIGKILL. Polled every few milliseconds from the kill: the launcher
// starting the new learner process (its pid in LOG_DIR/pids), the new process's metrics endpoint
// answering (process start-up done: exec, LibTorch loaded, metrics served), and its first update
// (`tagflow_learner_updates_total` of the new process, which counts from 0, at 1 or more: every
// federate joined again, each loaded its part and the federation ran up to the learner's first
// minibatch after the checkpoint). Reported: kill_to_respawn (the launcher noticing the death,
// stopping the other processes and starting them all again), respawn_to_endpoint (start-up),
// endpoint_to_first_update (the rest), kill_to_training (the whole) and kill_to_training minus
// start-up, which the goal bounds by 3 s. The run goes on to its stop and must end with the
// uninterrupted digest (killed_same_digest).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/benchmarks.hpp"
#include "bench/local_cluster.hpp"
#include "common/loopback_ports.hpp"
#include "monitoring/http_get.hpp"

namespace tagflow::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// The local demo cluster (bench/local_cluster.hpp) with `checkpoint` when not empty, then
/// `extra`.
std::string cluster_file(int base, std::int64_t env_steps, const std::string& checkpoint,
                         const std::string& extra = "") {
  return local_cluster_file("recovery-bench", base, env_steps,
                            (checkpoint.empty() ? "" : "checkpoint: " + checkpoint + "\n") + extra);
}

/// The pid LOG_DIR/pids gives `process`, or -1.
pid_t pid_of(const fs::path& logs, const std::string& process) {
  std::ifstream in(logs / "pids");
  std::string name;
  pid_t pid = -1;
  while (in >> name >> pid) {
    if (name == process) return pid;
  }
  return -1;
}

bool has_complete_checkpoint(const fs::path& logs) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(logs / "checkpoints", ec)) {
    if (fs::exists(entry.path() / "manifest")) return true;
  }
  return false;
}

/// tagflow_learner_updates_total at the learner's endpoint; nullopt while it does not answer.
std::optional<double> learner_updates(int port) {
  const auto body = monitoring::http_get("127.0.0.1", static_cast<std::uint16_t>(port), "/metrics",
                                         std::chrono::milliseconds(200));
  if (!body) return std::nullopt;
  const std::string name = "\ntagflow_learner_updates_total";
  const auto at = body->find(name);
  if (at == std::string::npos) return 0.0;
  const auto value = body->find(' ', body->find('}', at));
  return std::strtod(body->c_str() + value, nullptr);
}

/// Polls `done` every 2 ms until it holds (returns when) or `limit` passes (throws naming `what`).
template <class Done>
Clock::time_point when(Done done, std::chrono::seconds limit, const std::string& what) {
  const auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > deadline) throw std::runtime_error("recovery bench: no " + what);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return Clock::now();
}

struct KillTimes {
  double respawn = 0, endpoint = 0, first_update = 0;  // seconds after the kill
  std::string digest;
};

/// The killed run described in the header comment.
KillTimes kill_learner(const fs::path& dir, int base, const std::string& yaml) {
  const fs::path logs = dir / "killed";
  const int metrics = base + kLocalLearnerMetrics;
  LocalRun finished;
  std::exception_ptr failure;
  std::thread launcher([&] {
    try {
      finished = up_local(dir, "killed", yaml);
    } catch (...) {
      failure = std::current_exception();
    }
  });
  KillTimes times;
  try {
    (void)when([&] { return has_complete_checkpoint(logs); }, std::chrono::seconds(300),
               "complete checkpoint");
    (void)when([&] { return learner_updates(metrics).value_or(0) > 0; }, std::chrono::seconds(60),
               "learner update");
    const pid_t old_pid = pid_of(logs, "learner");
    if (old_pid <= 0 || ::kill(old_pid, SIGKILL) != 0) {
      throw std::runtime_error("recovery bench: cannot kill the learner");
    }
    const auto killed = Clock::now();
    const auto seconds = [&](Clock::time_point t) {
      return std::chrono::duration<double>(t - killed).count();
    };
    // The old endpoint goes with the process; wait until it no longer answers.
    (void)when([&] { return !learner_updates(metrics); }, std::chrono::seconds(30),
               "end of the killed learner's endpoint");
    times.respawn = seconds(when(
        [&] {
          const pid_t now = pid_of(logs, "learner");
          return now > 0 && now != old_pid;
        },
        std::chrono::seconds(60), "new learner process"));
    times.endpoint = seconds(when([&] { return learner_updates(metrics).has_value(); },
                                  std::chrono::seconds(120), "endpoint of the new learner"));
    times.first_update = seconds(when([&] { return learner_updates(metrics).value_or(0) >= 1; },
                                      std::chrono::seconds(120), "update of the new learner"));
  } catch (...) {
    launcher.join();
    throw;
  }
  launcher.join();
  if (failure) std::rethrow_exception(failure);
  times.digest = finished.digest;
  return times;
}

}  // namespace

BenchReport run_recovery_bench(const BenchOptions& options) {
  const std::int64_t env_steps = options.quick ? 3200 : 40000;
  const fs::path dir =
      fs::temp_directory_path() / ("tagflow_recovery_bench_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const int base = free_loopback_port_range(kLocalClusterPorts);
  if (base < 0) throw std::runtime_error("no free range of loopback ports");
  BenchReport report("recovery");

  const LocalRun plain = up_local(dir, "none", cluster_file(base, env_steps, ""));
  // 16 env steps per 1 ms round: the logical time the run covered, and an E near 5 s of wall.
  const double logical_ms = static_cast<double>(plain.env_steps) / 16.0;
  const double wall_target = options.quick ? 1.0 : 5.0;
  const auto every_ms = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(logical_ms * wall_target / plain.seconds));
  const std::string every = "{every: " + std::to_string(every_ms) + "ms, keep: 2}";
  const LocalRun checked = up_local(dir, "checkpoints", cluster_file(base, env_steps, every));

  report.add("checkpoint_every_logical", static_cast<double>(every_ms), "ms");
  report.add("none_env_steps_per_s", static_cast<double>(plain.env_steps) / plain.seconds,
             "steps/s");
  report.add("checkpoints_env_steps_per_s",
             static_cast<double>(checked.env_steps) / checked.seconds, "steps/s");
  report.add_ratio("checkpoints/none", "checkpoints_env_steps_per_s", "none_env_steps_per_s");
  report.add("same_digest", checked.digest == plain.digest ? 1.0 : 0.0, "bool");

  // Per kind: the federates' totals (a kind's replicas summed).
  std::map<std::string, std::map<std::string, double>> kinds;
  for (const auto& entry : fs::directory_iterator(dir / "checkpoints" / "checkpoints")) {
    if (entry.path().extension() != ".stats") continue;
    std::string kind = entry.path().stem().string();
    kind = kind.substr(0, kind.find('-'));
    std::ifstream in(entry.path());
    std::string key;
    double value = 0;
    while (in >> key >> value) kinds[kind][key] += value;
  }
  for (const auto& [kind, totals] : kinds) {
    const double parts = std::max(1.0, totals.at("parts"));
    report.add(kind + "_bytes_per_checkpoint", totals.at("bytes") / parts, "bytes");
    report.add(kind + "_ms_per_checkpoint", 1000.0 * totals.at("seconds") / parts, "ms");
    if (const auto write = totals.find("write_seconds"); write != totals.end()) {
      report.add(kind + "_write_ms_per_checkpoint", 1000.0 * write->second / parts, "ms");
    }
  }

  // --quick's runs are over within a second or two of their first checkpoint: the killed one
  // runs longer (and so cannot be held to the same digest).
  const std::int64_t killed_steps = std::max<std::int64_t>(env_steps, 16000);
  const KillTimes kill =
      kill_learner(dir, base, cluster_file(base, killed_steps, every, "restart: {max: 1}\n"));
  report.add("kill_to_respawn", kill.respawn, "s");
  report.add("respawn_to_endpoint", kill.endpoint - kill.respawn, "s");
  report.add("endpoint_to_first_update", kill.first_update - kill.endpoint, "s");
  report.add("kill_to_training", kill.first_update, "s");
  report.add("kill_to_training_minus_startup", kill.first_update - (kill.endpoint - kill.respawn),
             "s");
  if (killed_steps == env_steps) {
    report.add("killed_same_digest", kill.digest == plain.digest ? 1.0 : 0.0, "bool");
  }
  fs::remove_all(dir);
  return report;
}

}  // namespace tagflow::bench
