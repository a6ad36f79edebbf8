#include "cli/launch/cluster_launcher.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <iomanip>
#include <sstream>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "actors/actor_credentials.hpp"
#include "cli/commands.hpp"
#include "cli/doctor.hpp"
#include "cli/launch/coordinator_link.hpp"
#include "cli/launch/launch_backend.hpp"
#include "cli/launch/launch_plan.hpp"
#include "cli/launch/process_supervisor.hpp"
#include "cli/launch/progress_reporter.hpp"
#include "cli/launch/remote_hosts.hpp"
#include "cli/launch/run_report.hpp"
#include "common/atomic_file.hpp"
#include "common/log_text.hpp"
#include "common/state_stream.hpp"
#include "federation/checkpoint_store.hpp"
#include "hosts/actor/replica_spawner.hpp"
#include "hosts/replica_params_check.hpp"
#include "nodes/actor_checkpoint.hpp"
#include "nodes/cluster/process_plan.hpp"
#include "nodes/cluster/scrape_targets.hpp"
#include "nodes/cluster/service_endpoints.hpp"
#include "tracing/trace_merge.hpp"
#include "transport/curve_keys.hpp"

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kStopGrace = 3s;          // SIGTERM → SIGKILL
constexpr auto kTracedStopGrace = 10s;   // the same, when each process writes its trace on SIGTERM
constexpr auto kStragglerTimeout = 60s;  // after a clean exit, the others must follow
// How long a child ended by SIGTERM, SIGINT or SIGHUP waits for the launcher's own signal
// (stopped_from_outside).
constexpr auto kOutsideStopWindow = 500ms;
// Actor mode: how long the others may show that the run is ending before a dead process restarts.
constexpr auto kActorRestartSettle = 1s;
// Actor mode: how long after the first clean exit (the run's stop) a process restarted during the
// run may take to end before the launcher stops it (supervise()).
constexpr auto kActorWindDown = 5s;
constexpr std::size_t kTailLines = 12;
constexpr auto kReportLinger = 500ms;     // a death report's wait to leave for the coordinator
constexpr auto kReactorWindDown = 500ms;  // after a failure, for the others to end on their own
const char* const kStragglers = "(stragglers)";  // the pseudo exit of processes that hung

// Set by the signal handler, read by the supervising loop, which may run on another thread (the
// tests run the launcher on one): a lock-free atomic is both async-signal-safe and race-free.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
bool g_stop_with_stdin = false;  // LaunchOptions::stop_with_stdin, for the loops below

/// True once stdin reached end-of-file (what a remote half sees when the head's ssh goes away).
bool stdin_closed() {
  pollfd input{STDIN_FILENO, POLLIN, 0};
  if (::poll(&input, 1, 0) <= 0) return false;
  char buffer[256];
  const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof(buffer));
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

/// A signal arrived, or stdin closed under --stop-with-stdin (then recorded as SIGHUP).
bool stop_asked() {
  if (g_signal == 0 && g_stop_with_stdin && stdin_closed()) g_signal = SIGHUP;
  return g_signal != 0;
}

void on_signal(int signal) { g_signal = signal; }

/// Installs the SIGINT/SIGTERM handlers for the launcher's lifetime and restores the old ones.
class SignalGuard {
 public:
  SignalGuard() {
    g_signal = 0;
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: a blocking poll returns at once
    ::sigaction(SIGINT, &action, &old_int_);
    ::sigaction(SIGTERM, &action, &old_term_);
  }
  ~SignalGuard() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

bool failed(const ChildExit& exit) { return exit.signaled || exit.exit_code != 0; }

std::string how(const ChildExit& exit) {
  if (exit.signaled) return "killed by signal " + std::to_string(exit.signal);
  return "exit code " + std::to_string(exit.exit_code);
}

/// The last line process `name` printed, without its program's prefix ("tagflow node NAME: "):
/// why a process that exited with an error code did; "" when it printed nothing.
std::string last_words(const std::string& name, const ProcessSupervisor& supervisor) {
  const std::vector<std::string> lines = supervisor.tail(name);
  for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
    if (line->find_first_not_of(" \t") == std::string::npos) continue;
    for (const char* program : {"tagflow node ", "tagflow-torch node "}) {
      const std::string prefix = program + name + ": ";
      if (line->rfind(prefix, 0) == 0) return line->substr(prefix.size());
    }
    return *line;
  }
  return "";
}

/// how(), followed by the process's own reason when it exited with an error code (a federate
/// that found no coordinator to join, say): "exit code 4: federate 'replay': no START ...".
std::string how_in_its_words(const ChildExit& exit, const ProcessSupervisor& supervisor) {
  if (exit.signaled) return how(exit);
  const std::string words = last_words(exit.name, supervisor);
  return words.empty() ? how(exit) : how(exit) + ": " + words;
}

/// True when a process exited 2 (a bad file or params, or a value the file makes too large for one
/// message): a restart would meet the same.
bool bad_file_exit(const std::vector<ChildExit>& exits) {
  return std::any_of(exits.begin(), exits.end(), [](const ChildExit& exit) {
    return !exit.signaled && exit.exit_code == kExitBadFile;
  });
}

/// The failure that started it: a process that died on its own, rather than one that exited 4
/// because another federate failed, or the coordinator reporting it.
const ChildExit& root_cause(const std::vector<ChildExit>& exits) {
  for (const ChildExit& exit : exits) {
    if (failed(exit) && exit.name != "coordinator" && exit.exit_code != kExitFederation) {
      return exit;
    }
  }
  for (const ChildExit& exit : exits) {
    if (failed(exit)) return exit;
  }
  return exits.front();
}

void write_pids(const std::string& log_dir, const ProcessSupervisor& supervisor,
                const std::vector<ChildSpec>& specs) {
  std::ofstream out(std::filesystem::path(log_dir) / "pids");
  for (const ChildSpec& spec : specs) {
    const pid_t pid = supervisor.pid_of(spec.name);
    if (pid > 0) out << spec.name << " " << pid << "\n";
  }
}

/// The coordinator's own error line ("tagflow coordinator: run failed: federate 'X' failed: ..."),
/// without its prefix; empty when it printed none.
std::string coordinator_report(const ProcessSupervisor& supervisor) {
  const std::string prefix = "tagflow coordinator: ";
  for (const std::string& line : supervisor.tail("coordinator")) {
    // A coordinator stopped by a signal (the launcher's own, as it stops everything after a
    // failure) names no federate: what failed is the process whose exit came first.
    if (line.find("coordinator stopped by SIG") != std::string::npos) continue;
    if (line.rfind(prefix, 0) == 0 && line.find("failed") != std::string::npos) {
      return line.substr(prefix.size());
    }
  }
  return "";
}

/// What the coordinator told federate process `name` when it ended the run (its FAILED, in the
/// process's last line "...: the run failed: federate 'X' failed: ..."), or "".
std::string told_by_coordinator(const std::string& name, const ProcessSupervisor& supervisor) {
  const std::string marker = "the run failed: ";
  for (const std::string& line : supervisor.tail(name)) {
    const auto at = line.find(marker);
    if (at != std::string::npos) return line.substr(at + marker.size());
  }
  return "";
}

/// The federate a report names ("federate 'X' failed: ..."), or "".
std::string federate_named(const std::string& report) {
  const std::string marker = "federate '";
  const auto at = report.find(marker);
  if (at == std::string::npos) return "";
  const auto end = report.find('\'', at + marker.size());
  if (end == std::string::npos) return "";
  return report.substr(at + marker.size(), end - at - marker.size());
}

/// The process among `processes` hosting the federate `report` names, or "".
std::string process_hosting(const std::string& report,
                            const std::vector<cluster::ProcessPlan>& processes) {
  const std::string federate = federate_named(report);
  if (federate.empty()) return "";
  const cluster::ProcessPlan* process = cluster::process_of_replica(processes, federate);
  return process == nullptr ? "" : process->name;
}

/// For a run that failed because federates never joined (`told`: "federate(s) 'a' 'b' never
/// joined within N ms"): how long each process of this host that hosts one of them ran and the
/// CPU it had, so that a process still starting on a machine too busy for it (mostly waiting for
/// a CPU: LibTorch's start is about a CPU second of loading) is told from one that hung.
/// The replicas a coordinator's "federate(s) 'x' 'y' never joined within N ms" names.
std::vector<std::string> unjoined_replicas(const std::string& told) {
  std::vector<std::string> replicas;
  const auto end = told.find(" never joined within ");
  if (end == std::string::npos) return replicas;
  for (auto at = told.find('\''); at < end;) {
    const auto close = told.find('\'', at + 1);
    if (close == std::string::npos || close > end) break;
    replicas.push_back(told.substr(at + 1, close - at - 1));
    at = told.find('\'', close + 1);
  }
  return replicas;
}

/// The hosts of `replicas` other than this launcher's, in file order ("a, c"), or "".
std::string other_hosts_of(const std::vector<std::string>& replicas,
                           const cluster::ClusterConfig& config, const LaunchPlan& plan) {
  const std::vector<cluster::ProcessPlan> processes = cluster::plan_processes(config);
  std::string hosts;
  for (const auto& [name, host] : config.hosts) {
    if (std::find(plan.hosts.begin(), plan.hosts.end(), name) != plan.hosts.end()) continue;
    const bool named = std::any_of(replicas.begin(), replicas.end(), [&](const std::string& r) {
      const cluster::ProcessPlan* process = cluster::process_of_replica(processes, r);
      return process != nullptr && process->host == name;
    });
    if (named) hosts += (hosts.empty() ? "" : ", ") + name;
  }
  return hosts;
}

void print_unjoined(const std::string& told, const ProcessSupervisor& supervisor,
                    const LaunchPlan& plan) {
  std::vector<std::string> processes;
  for (const std::string& replica : unjoined_replicas(told)) {
    const cluster::ProcessPlan* process = cluster::process_of_replica(plan.processes, replica);
    if (process != nullptr &&
        std::find(processes.begin(), processes.end(), process->name) == processes.end()) {
      processes.push_back(process->name);
    }
  }
  for (const std::string& name : processes) {
    const std::optional<ChildExit> exit = supervisor.exit_of(name);
    if (!exit || exit->run_seconds <= 0.0) continue;
    std::ostringstream line;
    line << std::fixed << std::setprecision(2) << "tagflow up: " << name << " ran "
         << exit->run_seconds << " s without joining and had " << exit->cpu_seconds
         << " CPU s of it (" << exit->involuntary_switches << " involuntary and "
         << exit->voluntary_switches << " voluntary context switches)";
    if (exit->cpu_seconds < 0.25 * exit->run_seconds &&
        exit->involuntary_switches > exit->voluntary_switches) {
      line << ": still starting, starved of CPU; on a machine this busy, give it a longer "
              "coordinator.join_timeout (docs/clusters.md)";
    }
    std::cerr << line.str() << "\n";
  }
}

/// The process of this host hosting the federate the coordinator declared dead in `report`, or "".
std::string declared_dead(const std::string& report, const LaunchPlan& plan) {
  return process_hosting(report, plan.processes);
}

void print_tail(const std::string& name, const ProcessSupervisor& supervisor,
                const std::string& log_dir) {
  const std::vector<std::string> lines = supervisor.tail(name);
  if (lines.empty()) return;
  const std::string remote = remote_host_of(name);
  const std::string file = remote.empty() ? name + ".log" : "host-" + remote + ".log";
  std::cerr << "tagflow up: last lines of " << (std::filesystem::path(log_dir) / file).string()
            << ":\n";
  for (const std::string& line : lines) std::cerr << "  | " << line << "\n";
}

/// " on host H (node N)": where this launcher's processes run (the host when the plan has one,
/// the node inside a Slurm allocation).
std::string where(const LaunchPlan& plan) {
  std::string host = plan.hosts.size() == 1 ? " on host " + plan.hosts.front() : "";
  if (!plan.node_name.empty()) host += " (node " + plan.node_name + ")";
  return host;
}

/// " (host H)", " (host H, pod P)" (Kubernetes), " (host H, node index N)" (Slurm): where the
/// federate that `told` names (`federate 'NAME' ...`) ran; "" when it names none or `told` says
/// already (a launcher's death report names the host).
std::string where_federate_ran(const cluster::ClusterConfig& config, const LaunchPlan& plan,
                               const std::string& told) {
  const std::string replica = federate_named(told);
  if (replica.empty() || told.find(" on host ") != std::string::npos) return "";
  const std::vector<cluster::ProcessPlan> processes = cluster::plan_processes(config);
  const cluster::ProcessPlan* process = cluster::process_of_replica(processes, replica);
  if (process == nullptr) return "";
  const std::string index = std::to_string(process->node);
  if (plan.manager == NodeManager::none) return " (host " + process->host + ")";
  return plan.manager == NodeManager::kubernetes
             ? " (host " + process->host + ", pod " + config.name + "-" + process->host + "-" +
                   index + ")"
             : " (host " + process->host + ", node index " + index + ")";
}

/// `cause` ended because the run failed: it is the coordinator, or a node the coordinator told.
bool ended_by_the_run(const ChildExit& cause) {
  return cause.name == "coordinator" || (!cause.signaled && cause.exit_code == kExitFederation);
}

/// Why the coordinator says the run failed, for a process the run's failure ended: its report
/// (`report`, when this host runs it), else what it told `cause`; without "run failed: ".
std::string coordinator_told(const ChildExit& cause, const ProcessSupervisor& supervisor,
                             const std::string& report) {
  std::string told = report.empty() ? told_by_coordinator(cause.name, supervisor) : report;
  if (const std::string prefix = "run failed: "; told.rfind(prefix, 0) == 0) {
    told = told.substr(prefix.size());
  }
  return told;
}

/// Names the process that failed and shows the end of its log. When the first exits are only
/// federates that stopped because another one failed (exit 4) or the coordinator, and the
/// coordinator declared one of this host's federates dead (silent: hung, or stopped), that one is
/// named instead.
void print_failure(const ChildExit& cause, const ProcessSupervisor& supervisor,
                   const cluster::ClusterConfig& config, const LaunchPlan& plan,
                   const std::string& log_dir) {
  if (cause.name == kStragglers) return;  // supervise() said what happened
  const std::string remote = remote_host_of(cause.name);
  if (!remote.empty()) {
    std::cerr << "tagflow up: host " << remote << " (started over ssh) failed (" << how(cause)
              << ")\n";
    print_tail(cause.name, supervisor, log_dir);
    const std::string report = coordinator_report(supervisor);
    if (!report.empty()) std::cerr << "tagflow up: the coordinator reports: " << report << "\n";
    return;
  }
  const std::string report = coordinator_report(supervisor);
  const bool consequence = ended_by_the_run(cause);
  const std::string dead = consequence ? declared_dead(report, plan) : "";
  if (consequence && dead.empty()) {
    // The coordinator (here, or through a federate it told) names a federate of another host.
    if (const std::string told = coordinator_told(cause, supervisor, report); !told.empty()) {
      // Another host only where this launcher runs part of the cluster (--host, or halves it
      // started over ssh); a whole cluster here failed here (a federate that never joined, say).
      const bool elsewhere = !plan.whole_cluster() || !plan.remote_hosts.empty();
      // Federates of other hosts that never joined failed nowhere: their launchers may not run.
      const std::string absent =
          elsewhere ? other_hosts_of(unjoined_replicas(told), config, plan) : "";
      std::cerr << "tagflow up: the run failed"
                << (elsewhere && absent.empty() ? " on another host: " : ": ") << told
                << where_federate_ran(config, plan, told);
      if (!absent.empty()) {
        std::cerr << "; is the launcher of host " << absent
                  << " running, with the same file and keys?"
                  << (plan.coordinator
                          ? " (the coordinator's log names refused handshakes: " +
                                (std::filesystem::path(log_dir) / "coordinator.log").string() + ")"
                          : "");
      }
      std::cerr << "\n";
      print_unjoined(told, supervisor, plan);
      return;
    }
  }
  if (!dead.empty() && dead != cause.name) {
    std::cerr << "tagflow up: node " << dead << " failed (declared dead by the coordinator)\n";
    print_tail(dead, supervisor, log_dir);
  } else {
    // Inside a Slurm allocation every node's launcher names its node: the job's output shows
    // whichever launcher speaks first.
    const std::string what =
        (cause.name == "coordinator" ? "the coordinator" : "node " + cause.name) +
        (plan.node_name.empty() ? "" : where(plan));
    std::cerr << "tagflow up: " << what << " failed (" << how(cause) << ")\n";
    print_tail(cause.name, supervisor, log_dir);
  }
  if (!report.empty() && (cause.name != "coordinator" || !dead.empty())) {
    std::cerr << "tagflow up: the coordinator reports: " << report << "\n";
  }
}

/// Tells the coordinator at once that a node process of this host died on its own (not one that
/// exited 4 because another federate failed): the run ends everywhere without waiting for the
/// heartbeat timeout (PROTOCOL.md §8).
void report_death(const ChildExit& exit, const LaunchPlan& plan,
                  const std::optional<CoordinatorLink>& link) {
  if (!link || exit.name == "coordinator" || exit.name == kStragglers) return;
  if (!exit.signaled && exit.exit_code == kExitFederation) return;
  for (const cluster::ProcessPlan& process : plan.processes) {
    if (process.name != exit.name) continue;
    for (const std::string& replica : process.replicas) {
      link->report_failure(replica,
                           "its process " + process.name + where(plan) + " " + exit.describe(),
                           kReportLinger);
    }
    return;
  }
}

/// Whether `exit` is the launcher's own stop, reaching a child first: a batch system stopping a
/// job (Slurm's scancel, a time limit, srun ending a step) signals every process of the job, the
/// children too, and a child may end before the launcher's own signal is seen. The launcher never
/// sends SIGTERM, SIGINT or SIGHUP to a child while a run goes on, so a child ended by one of them
/// is waited on for up to kOutsideStopWindow: when the launcher's signal follows, the run was
/// stopped, not failed.
bool stopped_from_outside(const ChildExit& exit) {
  if (!exit.signaled ||
      (exit.signal != SIGTERM && exit.signal != SIGINT && exit.signal != SIGHUP)) {
    return false;
  }
  const auto until = Clock::now() + kOutsideStopWindow;
  while (!stop_asked() && Clock::now() < until) std::this_thread::sleep_for(10ms);
  return stop_asked();
}

/// Supervises the started children until they all exited, one failed, or a signal arrived.
/// Returns the exits seen; `interrupted` tells whether a signal ended it. A node that dies is
/// reported to the coordinator at once (report_death). `restarted` (actor mode): the processes
/// restarted alone during the run, stopped when still running kActorWindDown after the run's end.
std::vector<ChildExit> supervise(ProcessSupervisor& supervisor, bool& interrupted,
                                 const LaunchPlan& plan, const std::optional<CoordinatorLink>& link,
                                 const std::set<std::string>& restarted = {}) {
  std::vector<ChildExit> exits;
  std::optional<Clock::time_point> first_clean_exit;
  bool wound_down = restarted.empty();
  std::set<std::string> stopped;  // restarted processes stopped after the run's end
  while (supervisor.running() > 0) {
    if (stop_asked()) {
      interrupted = true;
      return exits;
    }
    std::optional<ChildExit> exit = supervisor.wait_for_exit(100ms);
    if (!exit) {
      // Actor mode: the first process to end cleanly ended the run, and its stop reached every
      // replica linked then. A restarted process still running after kActorWindDown missed it:
      // restarted just before the end, it linked to peers already stopping and now waits for
      // them to come back. The launcher stops it as Ctrl-C would; the run stays a success.
      if (first_clean_exit && !wound_down && Clock::now() - *first_clean_exit > kActorWindDown) {
        wound_down = true;
        std::string names;
        for (const std::string& name : supervisor.running_names()) {
          if (restarted.count(name) == 0 || !supervisor.signal_child(name, SIGTERM)) continue;
          stopped.insert(name);
          names += (names.empty() ? "" : ", ") + name;
        }
        if (!stopped.empty()) {
          std::cerr << "tagflow up: " << names << " (restarted) still running "
                    << std::chrono::duration_cast<std::chrono::seconds>(kActorWindDown).count()
                    << " s after the run ended (" << exits.front().name
                    << " ended first): it missed the stop; stopped as Ctrl-C would\n";
        }
      }
      if (first_clean_exit && Clock::now() - *first_clean_exit > kStragglerTimeout) {
        std::cerr << "tagflow up: " << exits.front().name << " finished but "
                  << supervisor.running() << " process(es) did not stop within "
                  << kStragglerTimeout.count() << " s\n";
        exits.push_back(ChildExit{kStragglers, 1, false, 0});
        return exits;
      }
      continue;
    }
    if (stopped.count(exit->name) != 0) {  // stopped by the launcher after the run's end
      exits.push_back(ChildExit{exit->name, 0, false, 0});
      continue;
    }
    if (stopped_from_outside(*exit)) {
      interrupted = true;
      return exits;
    }
    exits.push_back(*exit);
    if (failed(*exit)) {
      report_death(*exit, plan, link);
      return exits;
    }
    if (!first_clean_exit) first_clean_exit = Clock::now();
  }
  return exits;
}

/// The process of this host that hosts the federate whose failure ended the run (as the
/// coordinator reports it, or told a process that ended), while it still runs; "" otherwise.
std::string failed_process_running(const ProcessSupervisor& supervisor,
                                   const std::vector<ChildExit>& exits,
                                   const std::vector<cluster::ProcessPlan>& processes) {
  std::string report = coordinator_report(supervisor);
  for (auto exit = exits.begin(); report.empty() && exit != exits.end(); ++exit) {
    report = told_by_coordinator(exit->name, supervisor);
  }
  const std::string process = process_hosting(report, processes);
  return supervisor.pid_of(process) > 0 ? process : "";
}

/// Of the processes stopped by `stop_all(grace)`, names those that did not end as a stop asks:
/// still running when the grace ran out (killed), or ended by another signal (a crash while
/// stopping). A traced process that ended so has left no trace file.
void say_unexpected_stops(const std::vector<ChildExit>& exits, std::chrono::milliseconds grace) {
  for (const ChildExit& exit : exits) {
    if (exit.killed_after_grace) {
      std::cerr << "tagflow up: " << exit.name << " did not stop within "
                << std::chrono::duration<double>(grace).count()
                << " s of SIGTERM: killed (SIGKILL)\n";
    } else if (exit.signaled && exit.signal != SIGTERM && exit.signal != SIGINT) {
      std::cerr << "tagflow up: " << exit.name << " was " << exit.describe()
                << " while it stopped\n";
    }
  }
}

/// After a failure: lets the others wind down on their own for `window` (so the coordinator can
/// name the dead federate), adding their exits to `exits`, then stops what is left (those exits,
/// caused by the launcher, are not added: they are no cause). The process that failed gets up
/// to `grace` more to end on its own: its exit status says whether a restart can help (2: the
/// file asks for what cannot be, a value over the message cap say), and a process busy in a long
/// step when its federate failed may need it. An exit 2 reaped only as the rest is stopped is
/// kept: a process exits 2 by its own verdict on the file, never because it was stopped.
void wind_down(ProcessSupervisor& supervisor, std::vector<ChildExit>& exits,
               std::chrono::milliseconds window, std::chrono::milliseconds grace,
               const std::vector<cluster::ProcessPlan>& processes) {
  const auto collect_until = [&](Clock::time_point deadline, const std::string& only) {
    while (supervisor.running() > 0 && Clock::now() < deadline && !stop_asked()) {
      if (!only.empty() && supervisor.pid_of(only) <= 0) return;  // it ended
      if (auto exit = supervisor.wait_for_exit(50ms)) exits.push_back(*exit);
    }
  };
  collect_until(Clock::now() + window, "");
  if (const std::string failed = failed_process_running(supervisor, exits, processes);
      !failed.empty()) {
    collect_until(Clock::now() + grace, failed);
  }
  for (const ChildExit& exit : supervisor.stop_all(grace)) {
    if (!exit.signaled && exit.exit_code == kExitBadFile) exits.push_back(exit);
  }
}

/// The newest usable checkpoint under `root` (federation/checkpoint_store.hpp); every newer one
/// it refuses is named on stderr with the reason.
std::optional<coordinator::UsableCheckpoint> choose_checkpoint(
    const std::string& root, const std::vector<std::string>& federates,
    const std::set<std::int64_t>& unusable = {}) {
  std::vector<std::string> refused;
  auto chosen = coordinator::latest_usable_checkpoint(root, federates, &refused, unusable);
  for (const std::string& why : refused) {
    std::cerr << "tagflow up: refused " << why << "\n";
  }
  return chosen;
}

/// The checkpoint a federate of another host could not resume from, as the coordinator reports
/// it ("... cannot resume from its part of the checkpoint at logical time T ns: ..."), or nullopt.
std::optional<std::int64_t> unloadable_checkpoint(const std::string& report) {
  const std::string marker = "cannot resume from its part of the checkpoint at logical time ";
  const std::size_t at = report.find(marker);
  if (at == std::string::npos) return std::nullopt;
  try {
    return std::stoll(report.substr(at + marker.size()));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

/// "; the manifest puts its part on host H", for `federate`'s part of the checkpoint in
/// `directory`; "" when the manifest does not say.
std::string part_host(const std::string& directory, const std::string& federate) {
  try {
    const std::map<std::string, std::string> hosts = coordinator::part_hosts(directory);
    const auto it = hosts.find(federate);
    if (it == hosts.end() || it->second == "-") return "";
    return "; the manifest puts its part on host " + it->second;
  } catch (const StateError&) {
    return "";
  }
}

/// When the checkpoint in `directory` was complete (its manifest written), on the launcher's
/// clock.
Clock::time_point completed_at(const std::string& directory) {
  std::error_code error;
  const auto written =
      std::filesystem::last_write_time(std::filesystem::path(directory) / "manifest", error);
  if (error) return Clock::now();
  const auto age = std::filesystem::file_time_type::clock::now() - written;
  return Clock::now() - std::chrono::duration_cast<Clock::duration>(age);
}

/// The first attempt number whose logs are not in `log_dir` yet (a resumed run keeps the old
/// attempts' logs): one above every `NAME.restartN.log` there (on a host without the coordinator
/// too).
int next_attempt(const std::string& log_dir) {
  int attempt = 1;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(log_dir, error)) {
    const std::string name = entry.path().filename().string();
    const std::size_t at = name.rfind(".restart");
    if (at == std::string::npos || name.size() < 4 || name.substr(name.size() - 4) != ".log") {
      continue;
    }
    try {
      attempt = std::max(attempt, std::stoi(name.substr(at + 8)) + 1);
    } catch (const std::exception&) {  // not one of ours
    }
  }
  return attempt;
}

/// Actor mode: what the launcher keeps to restart one process alone (restart_actor_process()).
struct ActorRestarts {
  std::map<std::string, Clock::time_point> started;  // each process's latest start
  std::map<std::string, int> count;                  // restarts per process so far
  /// Per replica: the count its current process started from (its checkpoint's), which its
  /// metrics (counting from 0 in every process) add to.
  std::map<std::string, std::int64_t> base;
};

/// Whether the actor-mode process that died with `dead` is restarted alone: restarts left, no
/// bad file, and no process ended yet (the run is not ending).
bool restarts_actor_process(const ChildExit& dead, const std::vector<ChildExit>& exits,
                            const cluster::ClusterConfig& config,
                            const std::vector<hosts::RestartRecord>& restarts) {
  if (!failed(dead) || dead.name == kStragglers) return false;
  if (!dead.signaled && dead.exit_code == kExitBadFile) return false;
  if (static_cast<int>(restarts.size()) >= config.restart.max) return false;
  return std::none_of(exits.begin(), exits.end(), [](const ChildExit& e) { return !failed(e); });
}

/// Actor mode: what `replica`'s restart loses: its newest checkpoint (under `checkpoints`, when
/// the file has checkpoint:) and the work since it, from the counts last read from its metrics
/// (`seen`). Moves the replica's count base to its checkpoint's. `written` gets the checkpoint's
/// time, when there is one.
hosts::ReplicaRestart replica_restart(
    const std::string& replica, const cluster::ClusterConfig& config,
    const std::string& checkpoints, const std::map<std::string, double>& seen, ActorRestarts& state,
    std::optional<std::chrono::system_clock::time_point>& written) {
  hosts::ReplicaRestart r;
  r.replica = replica;
  std::optional<nodes::ActorCheckpointFile> file;
  if (!checkpoints.empty()) {
    try {
      file = nodes::read_actor_checkpoint(
          nodes::actor_checkpoint_path((std::filesystem::path(checkpoints) / replica).string()),
          replica);
    } catch (const StateError&) {  // the restarted process names it and starts from scratch
    }
  }
  if (file) {
    r.checkpoint = file->sequence;
    r.checkpoint_count = file->count;
    written = std::chrono::system_clock::time_point{
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::nanoseconds(file->written_unix_ns))};
  }
  if (const auto it = seen.find(replica); it != seen.end()) {
    r.since_checkpoint = std::max<std::int64_t>(
        0, state.base[replica] + static_cast<std::int64_t>(it->second) - r.checkpoint_count);
  }
  const cluster::NodeConfig* group = cluster::find_replica(config, replica).first;
  r.unit = group != nullptr ? group->kind->count_unit : "";
  state.base[replica] = r.checkpoint_count;
  return r;
}

/// Actor mode: starts the process that died with `dead` again, alone and under its own name
/// (the same certificate; its spec among `specs`), each replica from its own newest checkpoint
/// (`--resume`, when the file has checkpoint:), and returns what it lost
/// (hosts/run_summary.hpp; messages_in_flight comes from the peers' results at the end,
/// run_report.cpp).
hosts::RestartRecord restart_actor_process(
    const ChildExit& dead, const cluster::ClusterConfig& config, const LaunchPlan& plan,
    const std::vector<ChildSpec>& specs, const std::string& log_dir, ProcessSupervisor& supervisor,
    ProgressReporter& reporter, ActorRestarts& state) {
  hosts::RestartRecord record;
  record.process = dead.name;
  record.how = how_in_its_words(dead, supervisor);
  const cluster::ProcessPlan* process = nullptr;
  for (const cluster::ProcessPlan& p : plan.processes) {
    if (p.name == dead.name) process = &p;
  }
  if (process == nullptr) throw std::runtime_error("no process " + dead.name + " to restart");
  const std::map<std::string, double> seen = reporter.last_counts();
  const auto now_unix = std::chrono::system_clock::now();
  std::optional<std::chrono::system_clock::time_point> oldest;
  for (const std::string& replica : process->replicas) {
    std::optional<std::chrono::system_clock::time_point> written;
    record.replicas.push_back(
        replica_restart(replica, config, plan.checkpoints, seen, state, written));
    if (written) oldest = oldest ? std::min(*oldest, *written) : *written;
  }
  record.lost_seconds =
      oldest ? std::chrono::duration<double>(now_unix - *oldest).count()
             : std::chrono::duration<double>(Clock::now() - state.started[dead.name]).count();
  const int number = ++state.count[dead.name];
  for (ChildSpec spec : specs) {
    if (spec.name != dead.name) continue;
    spec.log_path = (std::filesystem::path(log_dir) /
                     (dead.name + ".restart" + std::to_string(number) + ".log"))
                        .string();
    if (!plan.checkpoints.empty()) {
      spec.argv.push_back("--resume");
      spec.argv.push_back(plan.checkpoints);
    }
    reporter.forget_counts(process->replicas);
    supervisor.start(spec);
    state.started[dead.name] = Clock::now();
  }
  return record;
}

/// Ends launch_cluster() with `code`, once the step that throws it said why.
struct LaunchEnd {
  int code;
};

[[noreturn]] void end_launch(const std::string& message, int code) {
  std::cerr << "tagflow up: " << single_line(message) << "\n";
  throw LaunchEnd{code};
}

/// One attempt: the children started together, supervised until they end, fail or a signal
/// arrives (actor mode: a dead process restarted alone within it).
struct Attempt {
  ProcessSupervisor supervisor{kTailLines};
  std::vector<ChildSpec> specs;
  std::optional<ProgressReporter> reporter;
  std::optional<CoordinatorLink> link;  // reactor mode: deaths go to the coordinator at once
  std::vector<ChildExit> exits;
  bool interrupted = false;

  /// The last exit is a failure.
  [[nodiscard]] bool failed_run() const { return !exits.empty() && failed(exits.back()); }
};

/// One `tagflow up`: the steps of launch_cluster(), in the order it calls them, and what they
/// share. A step that ends the launch prints why and throws LaunchEnd.
class ClusterLaunch {
 public:
  explicit ClusterLaunch(const LaunchOptions& options) : options_(options) {}

  void plan();  // the cluster file, checked, and what runs on this machine
  /// Why a key this host's processes read from the file's keys_dir cannot be read, or "".
  [[nodiscard]] std::string missing_key_file() const;
  /// FILE:LINE: security.keys_dir: `message`.
  [[nodiscard]] std::string keys_dir_error(const std::string& message) const;
  /// The first port this host's processes listen on that cannot be bound now, as FILE:LINE: KEY:
  /// and why, or "".
  [[nodiscard]] std::string unbindable_port() const;
  /// Ends the launch (exit 2) when the file has a Slurm or Kubernetes host and this launcher is
  /// not one of an allocation's (`tagflow slurm-node`, `tagflow k8s-pod`).
  void refuse_allocated_hosts();
  void open_log_dir();      // a new run directory, or the resumed run's
  void mint_keys();         // this run's keys, when the launcher mints them
  void announce() const;    // what runs where, the logs, the security
  void prepare_backends();  // the ways the processes start (local children, ssh)
  void plan_recovery();     // checkpoints, restarts, and where --resume starts from
  /// Start → supervise (restarting what dies, as the file allows) → report; returns the exit code.
  int run();

 private:
  void resume_run();
  void start(Attempt& attempt);
  void restart_dead_actor_processes(Attempt& attempt);
  [[nodiscard]] bool restarts_cluster(const Attempt& attempt) const;
  [[nodiscard]] bool restart_cluster(Attempt& attempt);
  /// Before a restart: the processes start again from the file, so one edited or removed since
  /// the run started ends the run here (exit 1) rather than run another file from the checkpoint.
  /// Ends the launch when the file changed since the run started: "FAILURE; no restart: ...".
  void require_unchanged_file(Attempt& attempt, const std::string& failure) const;
  /// "" when the file is the one the run started with (LOG_DIR/cluster.yaml), else why not.
  [[nodiscard]] std::string changed_file() const;
  /// --resume of a run that reached its stop: what it ended with, or "" when it has not. Its
  /// summary (LOG_DIR/summary.json) is written only then, on the coordinator's host; on another
  /// host, each of its processes' results.
  [[nodiscard]] std::string finished_run() const;
  int finish(Attempt& attempt);
  void merge_trace();
  /// SIGTERM → SIGKILL for this run: longer when each process writes its trace as it stops.
  [[nodiscard]] std::chrono::milliseconds stop_grace() const {
    return plan_.trace.empty() ? kStopGrace : kTracedStopGrace;
  }

  const LaunchOptions& options_;
  cluster::ClusterConfig config_;
  LaunchPlan plan_;
  std::string log_dir_;
  std::vector<std::unique_ptr<LaunchBackend>> backends_;
  bool reactor_ = false;
  bool recoverable_ = false;        // reactor mode: this host's part of a restart of the run
  bool actor_recoverable_ = false;  // actor mode: a dead process is restarted alone
  std::vector<std::string> federates_;
  Clock::time_point launched_;
  Clock::time_point attempt_started_;
  ActorRestarts actor_restarts_;
  std::vector<hosts::RestartRecord> restarts_;
  std::set<std::int64_t> unusable_;  // checkpoints a federate of another host could not load
};

void ClusterLaunch::plan() {
  try {
    config_ = cluster::load_cluster_config(options_.file);
    hosts::check_replica_params(config_);  // every node's params, before any process starts
    if (options_.node < 0) refuse_allocated_hosts();
    plan_ = make_launch_plan(config_, options_.file, options_.mode, options_.host, options_.node,
                             options_.node_name);
    plan_.manager = options_.manager;
  } catch (const cluster::ConfigError& e) {
    end_launch(e.what(), kExitBadFile);
  } catch (const LaunchError& e) {
    end_launch(e.what(), kExitBadFile);
  }
  if (!plan_.coordinator && plan_.processes.empty()) {
    end_launch(options_.file + ": nothing runs on " + describe(plan_), kExitBadFile);
  }
  if (const std::string missing = missing_key_file(); !missing.empty()) {
    end_launch(missing, kExitBadFile);
  }
  if (const std::string taken = unbindable_port(); !taken.empty()) end_launch(taken, kExitBadFile);
}

void ClusterLaunch::refuse_allocated_hosts() {
  // Outside an allocation (no TAGFLOW_NODE_ADDRESSES), a Slurm or Kubernetes host has no address:
  // its processes could not even bind.
  for (const auto& [name, host] : config_.hosts) {
    if (host.node_addresses.empty() && (host.slurm || host.kubernetes)) {
      const std::string key = host.slurm ? "slurm" : "kubernetes";
      const int line = host.slurm ? host.slurm->line : host.kubernetes->line;
      const std::string how =
          host.slurm
              ? "a Slurm host runs inside a Slurm job; submit the file with `tagflow slurm " +
                    options_.file + "` (docs/slurm.md)"
              : "a Kubernetes host runs in pods; render them with `tagflow k8s " + options_.file +
                    "` and apply them (docs/kubernetes.md)";
      end_launch(
          options_.file + ":" + std::to_string(line) + ": hosts." + name + "." + key + ": " + how,
          kExitBadFile);
    }
  }
}

std::string ClusterLaunch::unbindable_port() const {
  // Each process would otherwise find out alone, after the others started: a data port fails
  // its process (and each restart the file allows, the same way), a metrics port only its
  // endpoint, named in the process's log. Checked once, before the first start.
  for (const PlannedListener& l : planned_listeners(config_, plan_)) {
    // The loader refuses a replica's port past 65535; an address a Slurm or Kubernetes host
    // learns in its allocation is not known outside it.
    if (l.port > 65535 || l.address.empty()) continue;
    const std::string why = tcp_bind_error(l.address, static_cast<std::uint16_t>(l.port));
    if (why.empty()) continue;
    if (why == std::strerror(EADDRNOTAVAIL)) {
      return cluster::ConfigError(config_.file, l.address_line, l.address_key,
                                  l.address + " is no address of this machine (" + l.key +
                                      " would listen there: " + why + ")")
          .what();
    }
    std::string hint;
    if (why == std::strerror(EADDRINUSE)) {
      const std::string reason = port_in_use_reason(static_cast<std::uint16_t>(l.port));
      hint =
          ": " + reason +
          (reason == "another program listens there" ? " (a run of this file that is still going?)"
                                                     : "") +
          "; `tagflow doctor --config " + options_.file +
          (options_.host.empty() ? "" : " --host " + options_.host) +
          "` checks every port of the file";
    }
    return cluster::ConfigError(config_.file, l.line, l.key,
                                "cannot listen on " + l.address + " port " +
                                    std::to_string(l.port) + ": " + why + hint)
        .what();
  }
  return "";
}

std::string ClusterLaunch::keys_dir_error(const std::string& message) const {
  return cluster::ConfigError(config_.file, config_.security.keys_dir_line, "security.keys_dir",
                              message)
      .what();
}

std::string ClusterLaunch::missing_key_file() const {
  // With the file's own keys (`security.keys_dir`): every key this host's processes read, checked
  // before any starts (each would otherwise exit 1 on its own, naming the file).
  if (!config_.security.curve || config_.security.run_keys || !options_.run_keys.empty()) {
    return "";
  }
  const std::string dir = cluster::resolved_keys_dir(config_);
  if (plan_.mode == cluster::Mode::actor) {
    // TLS: the CA certificate and each process's own certificate and key.
    try {
      for (const cluster::ProcessPlan& process : plan_.processes) {
        (void)actors::actor_credentials(dir, process.name);
      }
    } catch (const actors::ActorCredentialError& e) {
      return keys_dir_error(std::string(e.what()) +
                            "; a host needs actor/ca.crt and its own processes' certificates "
                            "and keys");
    }
    return "";
  }
  try {
    // Every federate's public key (the coordinator admits them all, a federate its upstreams)
    // and the coordinator's, then the secret keys of what runs here.
    (void)transport::read_key_pair(dir, "coordinator", true);
    for (const cluster::ProcessPlan& process : cluster::plan_processes(config_)) {
      for (const std::string& replica : process.replicas) {
        (void)transport::read_key_pair(dir, replica, true);
      }
    }
    if (plan_.coordinator) (void)transport::read_key_pair(dir, "coordinator");
    for (const cluster::ProcessPlan& process : plan_.processes) {
      for (const std::string& replica : process.replicas) {
        (void)transport::read_key_pair(dir, replica);
      }
    }
  } catch (const transport::CurveKeyError& e) {
    // The directory as the file resolves it (relative to the file), so the command works here.
    return keys_dir_error(std::string(e.what()) + " (`tagflow keys generate " + dir + " --config " +
                          options_.file +
                          "` writes a pair for the coordinator and every federate; a host needs "
                          "its own federates' .key files and every .pub)");
  }
  return "";
}

void ClusterLaunch::open_log_dir() {
  log_dir_ = options_.resume_run.empty() ? options_.log_dir : options_.resume_run;
  if (!options_.resume_run.empty() && !std::filesystem::is_directory(options_.resume_run)) {
    end_launch("--resume " + options_.resume_run + ": no such run directory", kExitBadFile);
  }
  // A run started with --mode actor from a reactor-mode file has no checkpoints a resume can take:
  // resumed, it would start over in reactor mode.
  if (const std::string mode_file = (std::filesystem::path(log_dir_) / kModeFile).string();
      !options_.resume_run.empty() && std::filesystem::exists(mode_file)) {
    std::string ran_in;
    try {
      ran_in = read_whole_file(mode_file);
    } catch (const StateError&) {
    }
    ran_in = ran_in.substr(0, ran_in.find('\n'));
    if (ran_in != cluster::to_string(plan_.mode)) {
      end_launch("--resume " + options_.resume_run + ": that run ran in " +
                     (ran_in.empty() ? std::string("an unknown") : ran_in) + " mode (" + mode_file +
                     "), not in " + cluster::to_string(plan_.mode) +
                     " mode: --resume continues reactor-mode runs with checkpoint:",
                 kExitBadFile);
    }
  }
  if (!options_.resume_run.empty() &&
      (plan_.mode != cluster::Mode::reactor || !config_.checkpoint.every)) {
    // Refused before the run's keys are minted into the directory it names.
    end_launch("--resume needs a reactor-mode file with checkpoint:", kExitBadFile);
  }
  if (!options_.resume_run.empty() && !options_.log_dir.empty()) {
    end_launch(
        "--resume continues the run in its own directory: leave out --log-dir " + options_.log_dir,
        kExitBadFile);
  }
  // A run resumed with another file would end with a digest neither file gives.
  const std::string ran = (std::filesystem::path(log_dir_) / kRunFile).string();
  if (!options_.resume_run.empty() && !std::filesystem::exists(ran)) {
    // Every run writes its file there first: without it, the directory is no run's (a resume
    // would start one that never records its file), or its record of the file is gone.
    end_launch("--resume " + options_.resume_run + ": no " + ran +
                   ": not the directory of a run tagflow up started (each keeps its file there)",
               kExitBadFile);
  }
  if (!options_.resume_run.empty() && !changed_file().empty()) {
    end_launch("--resume " + options_.resume_run + ": " + options_.file +
                   " is not the file this run started with (" + ran + "): resume it with that file",
               kExitBadFile);
  }
  // A run's directory is its own: whatever is there would be overwritten by the run's files
  // (summary.json, P.log, ...), and a restart would resume from checkpoints found there as if
  // they were this run's. A half its head starts again (--stop-with-stdin) continues its own
  // run's directory.
  if (!options_.log_dir.empty() && options_.resume_run.empty() && !options_.stop_with_stdin) {
    std::error_code error;
    if (std::filesystem::is_directory(options_.log_dir, error) &&
        !std::filesystem::is_empty(options_.log_dir, error) && !error) {
      const bool earlier_run =
          std::filesystem::exists(std::filesystem::path(options_.log_dir) / kRunFile, error);
      end_launch(
          "--log-dir " + options_.log_dir + " is not empty" +
              (earlier_run ? std::string(" (an earlier run's: ") + kRunFile + " is there)" : "") +
              ": the run's logs, results and checkpoints go in a new or empty directory "
              "(what is there would be overwritten, and a restart would resume from "
              "checkpoints it finds)" +
              (earlier_run ? "; continue that run with --resume " + options_.log_dir : ""),
          kExitBadFile);
    }
  }
  // The summary is the user's file: inside the log directory it would be one of the run's.
  if (!options_.summary_path.empty() && !log_dir_.empty()) {
    const auto resolved = [](const std::string& text) {
      std::error_code error;
      std::filesystem::path path = std::filesystem::weakly_canonical(text, error);
      path = path.lexically_normal();
      return path.has_filename() ? path : path.parent_path();
    };
    const std::filesystem::path summary = resolved(options_.summary_path);
    const std::filesystem::path dir = resolved(log_dir_);
    if (std::mismatch(dir.begin(), dir.end(), summary.begin(), summary.end()).first == dir.end()) {
      end_launch("--summary " + options_.summary_path + " is in the log directory " + log_dir_ +
                     ", among the run's own files: put it elsewhere (the run writes its summary "
                     "to LOG_DIR/summary.json anyway)",
                 kExitBadFile);
    }
  }
  // The summary is written at the end: a path it cannot be written to is refused now, before the
  // run directory is made.
  if (const std::string why = unwritable_output("--summary", options_.summary_path); !why.empty()) {
    end_launch(why, kExitBadFile);
  }
  if (const std::string why = output_over_input("--summary", options_.summary_path, options_.file);
      !why.empty()) {
    end_launch(why, kExitBadFile);
  }
  // Resumed, a run that reached its stop would run again from its last checkpoint to the same end.
  if (!options_.resume_run.empty()) {
    if (const std::string ended = finished_run(); !ended.empty()) {
      const std::string summary = (std::filesystem::path(log_dir_) / kSummaryFile).string();
      if (!options_.summary_path.empty() && std::filesystem::exists(summary)) {
        try {
          write_file_atomically(options_.summary_path, read_whole_file(summary));
        } catch (const std::exception& e) {
          end_launch("--summary " + options_.summary_path + ": " + e.what(), kExitFailed);
        }
      }
      end_launch("--resume " + options_.resume_run + ": that run finished (" + ended +
                     "): nothing to resume; a new run of the file takes a new --log-dir",
                 kExitOk);
    }
  }
  if (log_dir_.empty()) {  // a new directory per run, even for two runs in the same second
    const std::string stem = default_log_dir(config_.name, std::chrono::system_clock::now());
    log_dir_ = stem;
    for (int n = 2; std::filesystem::exists(log_dir_); ++n) {
      log_dir_ = stem + "-" + std::to_string(n);
    }
  }
  // A directory that cannot be made is a bad argument, as a --summary path is (exit 2): the one
  // given with --log-dir, or the default under the working directory, which --log-dir moves.
  std::error_code error;
  std::filesystem::create_directories(log_dir_, error);
  if (error && !options_.log_dir.empty()) {
    end_launch("--log-dir " + log_dir_ + ": cannot create the directory: " + error.message(),
               kExitBadFile);
  }
  if (error) {
    end_launch("cannot create the log directory " + log_dir_ + ": " + error.message() +
                   " (--log-dir DIR puts it elsewhere)",
               kExitBadFile);
  }
  // The file the run started with, for the record and for --resume (above).
  if (options_.resume_run.empty()) {
    try {
      write_file_atomically((std::filesystem::path(log_dir_) / kRunFile).string(),
                            read_whole_file(options_.file));
      write_file_atomically((std::filesystem::path(log_dir_) / kModeFile).string(),
                            std::string(cluster::to_string(plan_.mode)) + "\n");
    } catch (const std::exception& e) {
      end_launch(std::string("cannot keep the cluster file in the log directory: ") + e.what(),
                 kExitFailed);
    }
  }
}

void ClusterLaunch::mint_keys() {
  if (!options_.run_keys.empty()) {  // minted once for every launcher of the run (a Slurm job)
    plan_.run_keys = std::filesystem::absolute(options_.run_keys).lexically_normal().string();
    cluster::use_run_keys(config_, plan_.run_keys);
    return;
  }
  if (!wants_run_keys(config_, plan_)) return;
  try {
    plan_.run_keys = mint_run_keys(config_, log_dir_);
    cluster::use_run_keys(config_, plan_.run_keys);  // the launcher's own link to the coordinator
  } catch (const transport::CurveKeyError& e) {
    end_launch(std::string("cannot mint this run's keys: ") + e.what(), kExitFailed);
  }
}

void ClusterLaunch::announce() const {
  std::cerr << "tagflow up: " << config_.name << " (" << options_.file << "), mode "
            << cluster::to_string(plan_.mode) << ", placement process\n"
            << "tagflow up: " << describe(plan_) << "\n"
            << "tagflow up: logs in " << log_dir_ << "/\n";
  // Where outside programs reach the policies of this machine's processes (PROTOCOL.md §1).
  if (const std::string gateways =
          cluster::describe_gateways(cluster::gateway_endpoints(config_), plan_.hosts);
      !gateways.empty()) {
    std::cerr << "tagflow up: inference service: " << gateways << "\n";
  }
  if (!options_.run_keys.empty()) {
    std::cerr << "tagflow up: closed cluster: this job's keys in " << plan_.run_keys << "/\n";
  } else if (!plan_.run_keys.empty()) {
    std::cerr << "tagflow up: closed cluster: "
              << (plan_.mode == cluster::Mode::reactor ? "CURVE keys" : "TLS certificates")
              << " minted for this run in " << plan_.run_keys << "/\n";
  } else if (config_.security.none) {
    std::cerr << "tagflow up: security: none: any local process may join this cluster (debugging "
                 "only)\n";
  } else if (!config_.security.curve) {
    // Keys are minted only by a launcher that starts every process on its own machine.
    std::cerr << "tagflow up: open cluster: no key files (security.keys_dir), and keys are minted "
                 "only when one launcher starts every process on its own machine: any process "
                 "that reaches its ports may join (`tagflow keys generate DIR --config "
              << options_.file << "` writes key files for every host)\n";
  }
}

void ClusterLaunch::prepare_backends() {
  backends_ = launch_backends(plan_, options_.tagflow);
  try {
    for (const auto& backend : backends_) backend->prepare();
  } catch (const std::runtime_error& e) {
    end_launch(e.what(), kExitFailed);
  }
}

void ClusterLaunch::plan_recovery() {
  reactor_ = plan_.mode == cluster::Mode::reactor;
  // A failure ends the run on every host, and every host's launcher restarts its own processes;
  // the coordinator's host chooses the checkpoint, and the others' processes load their own
  // parts of it, found by the start tag the coordinator sends (PROTOCOL.md §9.6). A head that
  // starts the other hosts over ssh restarts its ssh children too: each is a whole launcher,
  // started again on the same directory, whose processes load their parts there. So the halves
  // it started (--stop-with-stdin) write their parts but do not restart on their own.
  recoverable_ =
      reactor_ && !options_.stop_with_stdin && (plan_.coordinator || !plan_.processes.empty());
  const bool writes_parts =
      recoverable_ || (reactor_ && options_.stop_with_stdin && !plan_.processes.empty());
  // Actor mode: a dead process is restarted alone by the launcher of its host; its peers, here
  // or on other hosts, dial it again (hosts/actor/actor_process.hpp).
  actor_recoverable_ = !reactor_ && !plan_.processes.empty();
  plan_.peers_restart = actor_recoverable_ && config_.restart.max > 0;
  if (options_.stop_with_stdin &&
      std::filesystem::exists(std::filesystem::path(log_dir_) / "pids")) {
    // A half its head started again on the same directory: the earlier attempts' logs stay.
    plan_.attempt = next_attempt(log_dir_);
  }
  if (config_.trace.enabled || options_.trace) {
    plan_.trace = std::filesystem::absolute(std::filesystem::path(log_dir_) / "trace")
                      .lexically_normal()
                      .string();
  }
  if ((writes_parts || actor_recoverable_) && config_.checkpoint.every) {
    plan_.checkpoints = std::filesystem::absolute(std::filesystem::path(log_dir_) / "checkpoints")
                            .lexically_normal()
                            .string();
  }
  for (const cluster::ProcessPlan& process : plan_.processes) {
    federates_.insert(federates_.end(), process.replicas.begin(), process.replicas.end());
  }
  launched_ = Clock::now();
  attempt_started_ = launched_;
  for (const cluster::ProcessPlan& process : plan_.processes) {
    actor_restarts_.started[process.name] = launched_;
  }
  if (!options_.resume_run.empty()) resume_run();
}

/// --resume RUN_DIR: the newest usable checkpoint there, or the start.
void ClusterLaunch::resume_run() {
  if (plan_.checkpoints.empty() || !reactor_) {
    end_launch("--resume needs a reactor-mode file with checkpoint:", kExitBadFile);
  }
  if (!plan_.coordinator) {  // its processes load their parts of the coordinator host's choice
    std::cerr << "tagflow up: resuming " << log_dir_
              << " from the checkpoint the coordinator's host chooses\n";
  } else if (const auto from = choose_checkpoint(plan_.checkpoints, federates_)) {
    plan_.resume = from->directory;
    plan_.resume_time_ns = from->tag.time_ns();
    std::cerr << "tagflow up: resuming " << log_dir_ << " from the checkpoint at logical time "
              << from->tag.time_ns() << " ns\n";
  } else {
    std::cerr << "tagflow up: no usable checkpoint in " << plan_.checkpoints
              << ": the run starts over\n";
  }
  plan_.attempt = next_attempt(log_dir_);
}

int ClusterLaunch::run() {
  for (;;) {
    Attempt attempt;
    start(attempt);
    attempt.exits = supervise(attempt.supervisor, attempt.interrupted, plan_, attempt.link);
    restart_dead_actor_processes(attempt);
    if (!restarts_cluster(attempt) || !restart_cluster(attempt)) return finish(attempt);
  }
}

/// Starts every backend's children (their pids to DIR/pids), the progress reporter and, in
/// reactor mode, the link to the coordinator.
void ClusterLaunch::start(Attempt& attempt) {
  attempt.specs = children_of(backends_, plan_, log_dir_);
  if (const std::string cpus = describe_cpus(attempt.specs); !cpus.empty()) {
    std::cerr << "tagflow up: cpu_bind: " << cpus << "\n";
  }
  try {
    for (const ChildSpec& spec : attempt.specs) {
      attempt.supervisor.start(spec);
      write_pids(log_dir_, attempt.supervisor, attempt.specs);
    }
  } catch (const std::runtime_error& e) {
    for (const auto& backend : backends_) backend->started();
    attempt.supervisor.stop_all(kStopGrace);
    end_launch(e.what(), kExitFailed);
  }
  for (const auto& backend : backends_) backend->started();  // another launcher may deal CPUs
  // The mode of the run (--mode), not only the file's.
  attempt.reporter.emplace(cluster::scrape_targets(config_, plan_.mode),
                           ::isatty(STDERR_FILENO) == 1, !options_.quiet);
  const bool actor_mode = plan_.mode == cluster::Mode::actor;
  if (actor_mode) attempt.reporter->follow_joined_samplers(config_);  // samplers may join (--join)
  if (!options_.quiet || actor_mode) attempt.reporter->start();
  if (reactor_) attempt.link.emplace(config_);
}

/// Actor mode: only the dead process starts again; the others wait for it and link to it again
/// (hosts/actor/actor_process.hpp), and the run goes on.
void ClusterLaunch::restart_dead_actor_processes(Attempt& attempt) {
  std::vector<ChildExit>& exits = attempt.exits;
  while (actor_recoverable_ && !attempt.interrupted && g_signal == 0 && !exits.empty() &&
         restarts_actor_process(exits.back(), exits, config_, restarts_)) {
    const ChildExit dead = exits.back();
    exits.pop_back();
    // A process that ends the run (a stop condition, SIGTERM) stops its peers within moments: one
    // killed just then must not come back into a run that is gone (it would wait for peers that
    // left, then fail). So the others get a moment to show that the run is ending.
    std::vector<ChildExit> settled;
    const auto settle_until = Clock::now() + kActorRestartSettle;
    while (Clock::now() < settle_until && settled.empty() && !stop_asked()) {
      if (auto exit = attempt.supervisor.wait_for_exit(50ms)) settled.push_back(*exit);
    }
    if (stop_asked() || (!settled.empty() && !failed(settled.front()))) {
      attempt.interrupted = attempt.interrupted || stop_asked();
      exits.insert(exits.end(), settled.begin(), settled.end());
      exits.push_back(dead);  // the run failed: the dead process is its cause
      return;
    }
    require_unchanged_file(attempt, dead.name + " " + how(dead));
    try {
      restarts_.push_back(restart_actor_process(dead, config_, plan_, attempt.specs, log_dir_,
                                                attempt.supervisor, *attempt.reporter,
                                                actor_restarts_));
    } catch (const std::runtime_error& e) {
      attempt.supervisor.stop_all(kStopGrace);
      end_launch(e.what(), kExitFailed);
    }
    write_pids(log_dir_, attempt.supervisor, attempt.specs);
    std::cerr << "tagflow up: " << dead.name << " " << restarts_.back().how << "; restart "
              << restarts_.size() << " of " << config_.restart.max << ": " << dead.name
              << " alone, "
              << (plan_.checkpoints.empty() ? "from scratch"
                                            : "each replica from its own checkpoint")
              << "\n";
    if (!settled.empty()) {  // another died meanwhile: the loop takes it next
      report_death(settled.front(), plan_, attempt.link);
      exits.insert(exits.end(), settled.begin(), settled.end());
      continue;
    }
    std::set<std::string> restarted;
    for (const hosts::RestartRecord& r : restarts_) restarted.insert(r.process);
    std::vector<ChildExit> more =
        supervise(attempt.supervisor, attempt.interrupted, plan_, attempt.link, restarted);
    exits.insert(exits.end(), more.begin(), more.end());
  }
}

std::string ClusterLaunch::changed_file() const {
  const std::string ran = (std::filesystem::path(log_dir_) / kRunFile).string();
  try {
    return read_whole_file(options_.file) == read_whole_file(ran)
               ? std::string()
               : options_.file + " changed since the run started";
  } catch (const StateError& e) {
    return std::string("the file cannot be compared with the one the run started with: ") +
           e.what();
  }
}

std::string ClusterLaunch::finished_run() const {
  const std::filesystem::path summary = std::filesystem::path(log_dir_) / kSummaryFile;
  if (plan_.coordinator) {
    if (!std::filesystem::exists(summary)) return "";
    std::string ended = summary.string();
    try {
      const nlohmann::json json = nlohmann::json::parse(read_whole_file(summary.string()));
      ended += ": stop " + json.value("stop_reason", std::string("?")) + ", digest " +
               json.value("digest", std::string("?"));
    } catch (const std::exception&) {  // the record of the end is enough
    }
    return ended;
  }
  // Another host's processes send their results to the coordinator's host and keep them here.
  if (plan_.processes.empty()) return "";
  for (const cluster::ProcessPlan& process : plan_.processes) {
    if (!std::filesystem::exists(result_path(log_dir_, process.name))) return "";
  }
  return "the results of this host's processes are in " + log_dir_;
}

void ClusterLaunch::require_unchanged_file(Attempt& attempt, const std::string& failure) const {
  const std::string why = changed_file();
  if (why.empty()) return;
  const std::string ran = (std::filesystem::path(log_dir_) / kRunFile).string();
  attempt.supervisor.stop_all(stop_grace());
  end_launch(failure + "; no restart: " + why + " (" + ran +
                 " is the file it started with), and its processes would start again from it; " +
                 (reactor_ ? "the checkpoints are kept: put that file back and continue with "
                             "tagflow up " +
                                 options_.file + " --resume " + log_dir_
                           : std::string("put that file back and run it again")),
             kExitFailed);
}

/// Reactor mode: the run failed (not on a bad file), restarts are left, and no signal came.
bool ClusterLaunch::restarts_cluster(const Attempt& attempt) const {
  return attempt.failed_run() && !attempt.interrupted && g_signal == 0 && recoverable_ &&
         static_cast<int>(restarts_.size()) < config_.restart.max && !bad_file_exit(attempt.exits);
}

/// Stops the survivors; the next attempt starts every process again from the last complete
/// checkpoint (or from the start). The execution is deterministic, so the run ends as an
/// uninterrupted one would have. False, and no restart, when a process turns out to have exited
/// 2 once the others ended.
bool ClusterLaunch::restart_cluster(Attempt& attempt) {
  // The others end on their own first (the coordinator tells every federate, on every host, that
  // the run failed: stopped at once, it might not have); then what is left is stopped.
  wind_down(attempt.supervisor, attempt.exits, kReactorWindDown, stop_grace(), plan_.processes);
  // The process whose failure the others followed may exit 2 only now: no restart then either.
  if (bad_file_exit(attempt.exits)) return false;
  const ChildExit cause = root_cause(attempt.exits);
  attempt.reporter->stop();
  attempt.link.reset();
  hosts::RestartRecord record;
  record.process = cause.name;
  record.how = how(cause);
  // A process here that ended because the run failed elsewhere: the coordinator (here, or as a
  // federate here heard it) names the federate that failed, on which host.
  // A half started over ssh ends with its processes when the run fails: the coordinator here
  // says which of them failed.
  const bool consequence = ended_by_the_run(cause) || !remote_host_of(cause.name).empty();
  const std::string report = coordinator_report(attempt.supervisor);
  const std::string told = consequence ? coordinator_told(cause, attempt.supervisor, report) : "";
  if (told.empty()) {
    // Its own reason, then: a federate that found no coordinator to join exits 4 as one the
    // coordinator told of another's failure does, and only its log says which.
    record.how = how_in_its_words(cause, attempt.supervisor);
  } else {
    std::cerr << "tagflow up: this attempt failed: " << told
              << where_federate_ran(config_, plan_, told) << "\n";
    print_unjoined(told, attempt.supervisor, plan_);
    if (const std::string dead = declared_dead(told, plan_); !dead.empty()) {
      record.process = dead;
    } else if (const std::string process = process_hosting(told, cluster::plan_processes(config_));
               !process.empty()) {
      record.process = process;
      // How it failed, as the coordinator said it: "its process P on host a killed by signal 9
      // (Killed)", or "no message or heartbeat for more than 5000 ms (host a)".
      const std::string marker = "' failed: ";
      const auto at = told.find(marker);
      record.how = "failed on another host: " +
                   (at == std::string::npos ? told : told.substr(at + marker.size())) +
                   where_federate_ran(config_, plan_, told);
    }
  }
  require_unchanged_file(attempt, record.process + " " + record.how);
  auto redo_from = attempt_started_;
  if (!plan_.resume.empty()) {
    // A federate elsewhere could not load its part of the checkpoint this attempt resumed from
    // (a host lost its disk): an older one is tried next.
    if (const auto bad = unloadable_checkpoint(report); bad && *bad == plan_.resume_time_ns) {
      unusable_.insert(*bad);
      std::cerr << "tagflow up: refused checkpoint " << *bad
                << ": a federate could not load its part (" << report << ")"
                << part_host(plan_.resume, federate_named(report)) << "\n";
    }
  }
  plan_.resume.clear();
  // Only the coordinator's host chooses: the other hosts' processes follow its start tag.
  if (!plan_.checkpoints.empty() && plan_.coordinator) {
    if (const auto from = choose_checkpoint(plan_.checkpoints, federates_, unusable_)) {
      plan_.resume = from->directory;
      plan_.resume_time_ns = from->tag.time_ns();
      record.resumed_from = from->tag.time_ns();
      redo_from = std::max(redo_from, completed_at(from->directory));
    }
  }
  record.lost_seconds = std::chrono::duration<double>(Clock::now() - redo_from).count();
  std::cerr << "tagflow up: "
            << (record.process == "coordinator" ? "the coordinator" : record.process) << " "
            << record.how << "; restart " << restarts_.size() + 1 << " of " << config_.restart.max
            << " from "
            << (!plan_.coordinator    ? std::string("the checkpoint the coordinator's host chooses")
                : record.resumed_from ? "the checkpoint at logical time " +
                                            std::to_string(*record.resumed_from) + " ns"
                                      : std::string("the start"))
            << "\n";
  restarts_.push_back(record);
  ++plan_.attempt;
  attempt_started_ = Clock::now();
  return true;
}

/// A traced run, on the coordinator's host (every host's, in actor mode): every process's trace
/// merged into LOG_DIR/trace.json (tracing/README.md), failed runs included. A merge that fails is
/// reported, never fatal.
void ClusterLaunch::merge_trace() {
  // Reactor mode: the coordinator's host has every host's files. Actor mode has no control plane
  // to carry them: each host merges its own.
  if (plan_.trace.empty() || (reactor_ && !plan_.coordinator)) return;
  try {
    const tracing::MergeReport merged = tracing::merge_traces(log_dir_);
    std::cerr << "tagflow up: trace of " << merged.processes << " processes, " << merged.events
              << " events in " << merged.path << " (tagflow trace summary " << log_dir_ << ")\n";
    // The processes whose file the merge lacks: every process's on the coordinator's host in
    // reactor mode (its own and the coordinator's in actor mode).
    std::vector<std::string> expected;
    if (reactor_) expected.emplace_back("coordinator");
    for (const cluster::ProcessPlan& process :
         reactor_ ? cluster::plan_processes(config_) : plan_.processes) {
      expected.push_back(process.name);
    }
    std::string missing;
    for (const std::string& name : expected) {
      if (!std::filesystem::exists(std::filesystem::path(log_dir_) / "trace" /
                                   (name + ".trace.json"))) {
        missing += (missing.empty() ? "" : ", ") + name;
      }
    }
    if (!missing.empty()) {
      std::cerr << "tagflow up: no trace file from " << missing
                << ": stopped before it recorded (a signal while it started, or SIGKILL), or on a "
                   "host whose files did not arrive\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "tagflow up: the trace could not be merged: " << e.what() << "\n";
  }
}

/// The attempt's end: a failure winds down and is named, a signal stops everything, a normal
/// end is reported (the run summary).
int ClusterLaunch::finish(Attempt& attempt) {
  const bool run_failed = attempt.failed_run();
  if (run_failed && !attempt.interrupted) {
    // Reactor mode: the coordinator heard of the death at once (from this launcher or another
    // host's) or declared a silent federate dead itself, and sent FAILED to every federate, so
    // the others end on their own within moments; what is left after the window is stopped.
    const auto window = reactor_ ? kReactorWindDown : std::chrono::milliseconds(1s);
    wind_down(attempt.supervisor, attempt.exits, window, stop_grace(), plan_.processes);
  }
  attempt.reporter->stop();
  if (attempt.interrupted || g_signal != 0) {
    // A run that had failed before the signal still says why: in a Slurm job, srun stops the
    // other hosts' launchers (SIGTERM) as soon as one exits with the failure, often while the
    // coordinator's launcher waits for its processes to wind down.
    if (run_failed) {
      print_failure(root_cause(attempt.exits), attempt.supervisor, config_, plan_, log_dir_);
    }
    std::cerr << "tagflow up: " << ::strsignal(g_signal.load()) << ": stopping "
              << attempt.supervisor.running() << " process(es)\n";
    say_unexpected_stops(attempt.supervisor.stop_all(stop_grace()), stop_grace());
    merge_trace();  // what the stopped processes wrote as they stopped
    return kExitInterrupted;
  }
  if (run_failed) {
    const ChildExit& cause = root_cause(attempt.exits);
    print_failure(cause, attempt.supervisor, config_, plan_, log_dir_);
    if (!restarts_.empty() && static_cast<int>(restarts_.size()) >= config_.restart.max) {
      // The failure above is the last attempt's: the file's restarts are used up.
      std::cerr << "tagflow up: no restart left: the run failed again after its "
                << restarts_.size() << " restart(s) (restart: {max: " << config_.restart.max
                << "})\n";
    }
    merge_trace();  // after the failure's lines, which say what ended the run
    return !cause.signaled && cause.exit_code == kExitBadFile ? kExitBadFile : kExitFailed;
  }
  merge_trace();
  return report_run(config_, plan_, log_dir_, options_.summary_path,
                    attempt.reporter->joined_samplers(), restarts_,
                    std::chrono::duration<double>(Clock::now() - launched_).count());
}

}  // namespace

int launch_cluster(const LaunchOptions& options) {
  ClusterLaunch launch(options);
  try {
    launch.plan();
    launch.open_log_dir();
    launch.mint_keys();
    launch.announce();
    launch.prepare_backends();
    const SignalGuard signals;
    g_stop_with_stdin = options.stop_with_stdin;
    launch.plan_recovery();
    return launch.run();
  } catch (const LaunchEnd& end) {
    return end.code;
  }
}

}  // namespace tagflow::cli
