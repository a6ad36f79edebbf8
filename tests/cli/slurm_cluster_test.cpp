// configs/slurm.yaml as a real Slurm heterogeneous job: this test starts munged, slurmctld and two
// slurmd (nodes N1 and N2, each in its own network namespace, so each node's processes bind its
// own address), writes the batch script with `tagflow slurm`, submits it and checks:
//   - `sbatch --wait` ends with the summary (written to --summary) whose digest is the one of
//     `tagflow up FILE --placement single`, for the two-host file and for one host of two nodes
//     that holds the coordinator;
//   - `scancel` stops every process on every node within 5 s, none left behind;
//   - a node process killed with SIGKILL ends the run within 2 s, and the coordinator's launcher
//     names the process and its node;
//   - with checkpoints, a killed node process is restarted inside the allocation, and a job
//     written with `tagflow slurm FILE --resume RUN` continues a cancelled job's run; both end
//     with the single-process digest.
// Needs root, iproute2 and Debian's slurm-wlm and munge (scripts/setup); without them every test
// skips, naming what is missing. Daemons, namespaces, the /etc/hosts lines naming the nodes and
// the files are the test's own and are removed even when a check fails.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <tuple>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/launched_processes.hpp"
#include "tests/support/namespace_pair.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/shipped_config.hpp"

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testing::alive;
using testing::eventually;
using testing::NamespacePair;
using testing::read_text_file;
using testing::recorded_pids;
using testing::replace_once;
using testing::sh;

/// munged, slurmctld and two slurmd in `namespaces` (slurmctld and node 1 in the first), all
/// configured under `dir`, their clients run from `work`; stopped, and the /etc/hosts lines
/// removed, on destruction.
class SlurmDaemons {
 public:
  SlurmDaemons(const NamespacePair& namespaces, fs::path dir, fs::path work)
      : namespaces_(namespaces), dir_(std::move(dir)), work_(std::move(work)) {
    const std::string id = std::to_string(::getpid() % 100000);
    node_1 = "tfs" + id + "n1";
    node_2 = "tfs" + id + "n2";
    marker_ = "# tagflow slurm test " + id;
    port_ = 20000 + static_cast<int>(::getpid() % 10000) * 3;
  }
  ~SlurmDaemons() { stop(); }
  SlurmDaemons(const SlurmDaemons&) = delete;
  SlurmDaemons& operator=(const SlurmDaemons&) = delete;

  /// Starts them; "" or why not.
  std::string start() {
    for (const char* program : {"munged", "slurmctld", "slurmd", "sbatch", "nsenter"}) {
      if (sh(std::string("command -v ") + program + " || test -x /usr/sbin/" + program).exit_code !=
          0) {
        return std::string("no ") + program + " (scripts/setup installs slurm-wlm and munge)";
      }
    }
    fs::create_directories(dir_ / "munge");
    fs::create_directories(dir_ / "state");
    fs::create_directories(dir_ / "spool" / node_1);
    fs::create_directories(dir_ / "spool" / node_2);
    fs::permissions(dir_ / "munge", fs::perms::owner_all, fs::perm_options::replace);
    std::ofstream(dir_ / "cgroup.conf") << "";
    std::ofstream(dir_ / "slurm.conf") << slurm_conf();
    hosts_added_ = true;
    for (const std::string& command :
         {"printf '%s %s " + marker_ + "\\n%s %s " + marker_ + "\\n' " + namespaces_.address_a +
              " " + node_1 + " " + namespaces_.address_b + " " + node_2 + " >> /etc/hosts",
          "dd if=/dev/urandom of=" + path("munge/key") +
              " bs=1024 count=1 2>/dev/null && chmod "
              "400 " +
              path("munge/key"),
          "/usr/sbin/munged -f --socket=" + path("munge/sock") +
              " --key-file=" + path("munge/key") + " --log-file=" + path("munge/log") +
              " --pid-file=" + path("munge/pid") + " --seed-file=" + path("munge/seed"),
          in(namespaces_.ns_a, "/usr/sbin/slurmctld -i"),
          in(namespaces_.ns_a, "/usr/sbin/slurmd -N " + node_1),
          in(namespaces_.ns_b, "/usr/sbin/slurmd -N " + node_2)}) {
      const testing::CommandResult result = sh(command);
      if (result.exit_code != 0) return "`" + command + "` failed: " + result.output;
    }
    const bool idle = eventually(
        [&] { return sh(client("sinfo -h -o '%T %D'")).output.find("idle 2") == 0; }, 30s);
    if (!idle) {
      return "the two nodes did not come up: " + sh(client("sinfo")).output +
             read_text_file(dir_ / "slurmctld.log");
    }
    return "";
  }

  /// `command` run in the first namespace with this test's Slurm configuration, from `work`
  /// (where jobs write their output and run directories).
  std::string client(const std::string& command) const {
    return "cd " + work_.string() + " && SLURM_CONF=" + path("slurm.conf") + " " +
           in(namespaces_.ns_a, command);
  }

  std::string node_1, node_2;

 private:
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string in(const std::string& ns, const std::string& command) const {
    return "SLURM_CONF=" + path("slurm.conf") + " nsenter --net=/run/netns/" + ns + " " + command;
  }

  /// Facts of this kind of machine: no systemd, no usable cgroup for proctrack, and a
  /// heterogeneous job needs two nodes and the backfill scheduler.
  std::string slurm_conf() const {
    char host[256] = {};
    ::gethostname(host, sizeof(host) - 1);
    std::string short_host = host;
    short_host = short_host.substr(0, short_host.find('.'));
    const std::string d = dir_.string();
    return "ClusterName=tfs\nSlurmctldHost=" + short_host + "(" + namespaces_.address_a +
           ")\nSlurmctldPort=" + std::to_string(port_) +
           "\nSlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nAuthInfo=socket=" + d +
           "/munge/sock\nCredType=cred/munge\nStateSaveLocation=" + d +
           "/state\nSlurmdSpoolDir=" + d + "/spool/%n\nSlurmctldPidFile=" + d +
           "/slurmctld.pid\nSlurmdPidFile=" + d + "/slurmd-%n.pid\nSlurmctldLogFile=" + d +
           "/slurmctld.log\nSlurmdLogFile=" + d +
           "/slurmd-%n.log\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
           "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
           "SchedulerType=sched/backfill\nSchedulerParameters=bf_interval=1\n"
           "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nReturnToService=2\n"
           "KillWait=2\nMpiDefault=none\nMailProg=/bin/true\nNodeName=" +
           node_1 + " NodeAddr=" + namespaces_.address_a + " Port=" + std::to_string(port_ + 1) +
           " CPUs=2 State=UNKNOWN\nNodeName=" + node_2 + " NodeAddr=" + namespaces_.address_b +
           " Port=" + std::to_string(port_ + 2) +
           " CPUs=2 State=UNKNOWN\nPartitionName=debug Nodes=" + node_1 + "," + node_2 +
           " Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES\n";
  }

  void stop() {
    for (const std::string& pid_file :
         std::vector<std::string>{"slurmd-" + node_1 + ".pid", "slurmd-" + node_2 + ".pid",
                                  "slurmctld.pid", "munge/pid"}) {
      const std::string pid = read_text_file(dir_ / pid_file);
      if (!pid.empty()) (void)sh("kill -9 " + pid);
    }
    if (hosts_added_) (void)sh("sed -i '/" + marker_ + "$/d' /etc/hosts");
  }

  const NamespacePair& namespaces_;
  fs::path dir_;
  fs::path work_;
  std::string marker_;
  int port_ = 0;
  bool hosts_added_ = false;
};

class SlurmCluster : public ::testing::Test {
 public:
  void SetUp() override {
    if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the learner and inference need tagflow-torch";
    const std::string why = namespaces_.create();
    if (!why.empty()) GTEST_SKIP() << why;
    dir_ = fs::path(::testing::TempDir()) /
           ("tagflow_slurm_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // Slurm's spool holds Unix sockets, whose paths must stay under 108 bytes: a short directory.
    slurm_dir_ = fs::path("/tmp") / ("tfs" + std::to_string(::getpid()));
    fs::remove_all(slurm_dir_);
    daemons_.emplace(namespaces_, slurm_dir_, dir_);
    const std::string started = daemons_->start();
    if (started.find("scripts/setup") != std::string::npos) GTEST_SKIP() << started;
    ASSERT_EQ(started, "");
  }
  void TearDown() override {
    if (daemons_) (void)sh(daemons_->client("scancel --user=root"));
    daemons_.reset();
    if (!dir_.empty() && !HasFailure()) {
      fs::remove_all(dir_);
      fs::remove_all(slurm_dir_);
    }
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  /// configs/slurm.yaml stopping after `env_steps` (or after 120 s when 0), learning from 200
  /// items on, with `extra` appended, as DIR/NAME; its path.
  std::string write(const std::string& name, long env_steps, const std::string& extra = "") {
    std::string text = read_text_file(fs::path(TAGFLOW_SOURCE_DIR) / "configs" / "slurm.yaml");
    replace_once(text, "  target_return: 475\n  seconds: 900\n",
                 env_steps > 0 ? "  env_steps: " + std::to_string(env_steps) + "\n"
                               : std::string("  seconds: 120\n"),
                 "configs/slurm.yaml");
    replace_once(text, "min_size: 1000", "min_size: 200", "configs/slurm.yaml");
    std::ofstream(dir_ / name) << text << extra;
    return path(name);
  }

  /// `tagflow slurm FILE --out DIR/job.sh --summary DIR/summary.json`, checked; the script's path.
  std::string script(const std::string& file) {
    const testing::CommandResult wrote =
        sh(daemons_->client(testing::tagflow_binary() + " slurm " + file + " --out " +
                            path("job.sh") + " --summary " + path("summary.json")));
    EXPECT_EQ(wrote.exit_code, 0) << wrote.output;
    return path("job.sh");
  }

  /// Submits `script`; the job id.
  std::string submit(const std::string& script) {
    const testing::CommandResult submitted = sh(daemons_->client("sbatch --parsable " + script));
    EXPECT_EQ(submitted.exit_code, 0) << submitted.output;
    return submitted.output.substr(0, submitted.output.find_first_of(";\n"));
  }

  /// The run directory of job `id` (the script's RUN).
  fs::path run_dir(const std::string& id) const { return dir_ / "runs" / ("slurm-cartpole-" + id); }

  /// Every node's recorded processes: "NODE/PROCESS" -> pid, once all 6 (the coordinator and 5
  /// node processes) are running.
  std::map<std::string, pid_t> running_processes(const std::string& id) {
    std::map<std::string, pid_t> all;
    eventually(
        [&] {
          all.clear();
          for (const std::string& node : {daemons_->node_1, daemons_->node_2}) {
            for (const auto& [name, pid] : recorded_pids(run_dir(id) / node)) {
              all[node + "/" + name] = pid;
            }
          }
          return all.size() == 6;
        },
        60s);
    return all;
  }

  /// The nodes of the coordinator and of sampler-0 among running_processes()'s.
  static std::pair<std::string, std::string> head_and_other(
      const std::map<std::string, pid_t>& processes) {
    std::string head, other;
    for (const auto& [name, pid] : processes) {
      const std::string node = name.substr(0, name.find('/'));
      if (name == node + "/coordinator") head = node;
      if (name == node + "/sampler-0") other = node;
    }
    return {head, other};
  }

  /// The digest of `tagflow up FILE --placement single` (its summary in DIR/single.json); "" with
  /// a failure recorded when that run fails.
  std::string single_process_digest(const std::string& file) {
    const testing::CommandResult single =
        sh(testing::tagflow_binary() + " up " + file + " --placement single --summary " +
           path("single.json"));
    EXPECT_EQ(single.exit_code, 0) << single.output;
    const std::string digest = testing::summary_digest(dir_ / "single.json");
    EXPECT_EQ(digest.size(), 16U) << digest;
    return digest;
  }

  /// Processes whose command line names this test's directory (launchers and their children).
  std::vector<pid_t> left_behind() const {
    std::vector<pid_t> left;
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::string command = read_text_file(entry.path() / "cmdline");
      for (char& c : command) c = c == '\0' ? ' ' : c;
      const pid_t pid = std::stoi(name);
      if (command.find(dir_.string() + "/") != std::string::npos &&
          command.find("slurm/") == std::string::npos && alive(pid)) {
        left.push_back(pid);
      }
    }
    return left;
  }

  NamespacePair namespaces_{"tfsl"};
  std::optional<SlurmDaemons> daemons_;
  fs::path dir_;
  fs::path slurm_dir_;
};

TEST_F(SlurmCluster, TheJobEndsWithTheSummaryOfTheSingleProcessDigest) {
  const std::string file = write("slurm.yaml", 1200);
  const std::string job = script(file);
  const std::string text = read_text_file(job);
  EXPECT_NE(text.find("#SBATCH hetjob"), std::string::npos) << text;
  EXPECT_NE(text.find("srun --het-group=0 --cpus-per-task=2 --kill-on-bad-exit=1 : "
                      "--het-group=1 --cpus-per-task=2 --kill-on-bad-exit=1 "),
            std::string::npos)
      << text;

  const auto submitted = Clock::now();
  // Bounded below ctest's 300 s, so that a hung job fails here and the daemons are still stopped.
  const testing::CommandResult waited =
      sh(daemons_->client("timeout 200 sbatch --wait --parsable " + job));
  const double seconds = std::chrono::duration<double>(Clock::now() - submitted).count();
  RecordProperty("sbatch_to_summary_seconds", std::to_string(seconds));
  std::cerr << "sbatch --wait to the summary: " << seconds << " s\n";
  const std::string id = waited.output.substr(0, waited.output.find_first_of(";\n"));
  ASSERT_EQ(waited.exit_code, 0) << waited.output
                                 << read_text_file(dir_ / ("slurm-" + id + ".out"));

  const std::string digest = single_process_digest(file);
  EXPECT_EQ(testing::summary_digest(dir_ / "summary.json"), digest);
  const std::string out = read_text_file(dir_ / ("slurm-" + id + ".out"));
  EXPECT_NE(out.find("digest " + digest), std::string::npos) << out;
  // The job's keys: its user's only.
  const fs::perms keys = fs::status(run_dir(id) / "keys").permissions();
  EXPECT_EQ(keys & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);
  // Each node's processes bound their node's address: both addresses are in the allocation's.
  const std::string addresses = read_text_file(run_dir(id) / "addresses");
  EXPECT_NE(addresses.find(namespaces_.address_a), std::string::npos) << addresses;
  EXPECT_NE(addresses.find(namespaces_.address_b), std::string::npos) << addresses;
}

// One host of two nodes that holds the coordinator (one job component, no hetjob): the processes
// are dealt over its nodes in file order (sampler-0, replay and inference on the coordinator's
// node, sampler-1 and the learner on the other), and the other node's launcher hands its results
// to the coordinator as another host's would: the job ends with the single-process digest.
TEST_F(SlurmCluster, AHostOfTwoNodesWithTheCoordinatorEndsWithTheSummary) {
  std::string text = read_text_file(write("slurm.yaml", 1200));
  replace_once(text, "    slurm: {nodes: 1, cpus_per_task: 2}   # e.g.",
               "    slurm: {nodes: 2, cpus_per_task: 2}   # e.g.", "slurm.yaml");
  const std::size_t act = text.find("  act:\n");
  ASSERT_NE(act, std::string::npos);
  text.erase(act, text.find('\n', text.find('\n', act) + 1) + 1 - act);
  for (int i = 0; i < 2; ++i)
    replace_once(text, "    host: act\n", "    host: learn\n", "slurm.yaml");
  ASSERT_EQ(text.find("  act:"), std::string::npos) << text;
  std::ofstream(dir_ / "one-host.yaml") << text;
  const std::string file = path("one-host.yaml");
  const std::string job = script(file);
  EXPECT_EQ(read_text_file(job).find("hetjob"), std::string::npos) << read_text_file(job);
  EXPECT_NE(read_text_file(job).find("srun --cpus-per-task=2 --kill-on-bad-exit=1 "),
            std::string::npos)
      << read_text_file(job);
  const testing::CommandResult waited =
      sh(daemons_->client("timeout 200 sbatch --wait --parsable " + job));
  const std::string id = waited.output.substr(0, waited.output.find_first_of(";\n"));
  ASSERT_EQ(waited.exit_code, 0) << waited.output
                                 << read_text_file(dir_ / ("slurm-" + id + ".out"));
  EXPECT_EQ(testing::summary_digest(dir_ / "summary.json"), single_process_digest(file))
      << read_text_file(dir_ / ("slurm-" + id + ".out"));
}

TEST_F(SlurmCluster, ScancelStopsEveryProcessOnEveryNodeWithin5Seconds) {
  const std::string id = submit(script(write("slurm.yaml", 0)));
  const std::map<std::string, pid_t> processes = running_processes(id);
  ASSERT_EQ(processes.size(), 6U) << read_text_file(dir_ / ("slurm-" + id + ".out"));
  const auto cancelled = Clock::now();
  ASSERT_EQ(sh(daemons_->client("scancel " + id)).exit_code, 0);
  const auto none_left = [&] {
    for (const auto& [name, pid] : processes) {
      if (alive(pid)) return false;
    }
    return left_behind().empty();
  };
  EXPECT_TRUE(eventually(none_left, 5s)) << left_behind().size() << " launcher(s) left";
  const double seconds = std::chrono::duration<double>(Clock::now() - cancelled).count();
  RecordProperty("scancel_seconds", std::to_string(seconds));
  std::cerr << "scancel to no process left: " << seconds << " s\n";
  for (const auto& [name, pid] : processes) EXPECT_FALSE(alive(pid)) << name;
  // Slurm signals every process of the job, the launchers' children too: a child that ends first
  // is the job's stop, not a failure (docs/slurm.md).
  const auto said = [&] { return read_text_file(dir_ / ("slurm-" + id + ".out")); };
  EXPECT_TRUE(
      eventually([&] { return said().find("Terminated: stopping") != std::string::npos; }, 5s))
      << said();
  EXPECT_EQ(said().find("killed by signal 15"), std::string::npos) << said();
  EXPECT_EQ(said().find("failed"), std::string::npos) << said();
}

TEST_F(SlurmCluster, AKilledNodeProcessEndsTheRunWithin2SecondsNamingItAndItsNode) {
  const std::string id = submit(script(write("slurm.yaml", 0)));
  const std::map<std::string, pid_t> processes = running_processes(id);
  ASSERT_EQ(processes.size(), 6U) << read_text_file(dir_ / ("slurm-" + id + ".out"));
  // sampler-0 runs on the node without the coordinator: its death crosses the network.
  std::string node;
  for (const auto& [name, pid] : processes) {
    if (name.size() > 10 && name.substr(name.size() - 10) == "/sampler-0") {
      node = name.substr(0, name.size() - 10);
    }
  }
  ASSERT_FALSE(node.empty());
  ASSERT_EQ(::kill(processes.at(node + "/sampler-0"), SIGKILL), 0);
  const auto killed = Clock::now();
  EXPECT_TRUE(eventually(
      [&] {
        for (const auto& [name, pid] : processes) {
          if (alive(pid)) return false;
        }
        return true;
      },
      2s));
  RecordProperty("ended_seconds",
                 std::to_string(std::chrono::duration<double>(Clock::now() - killed).count()));
  const fs::path out = dir_ / ("slurm-" + id + ".out");
  EXPECT_TRUE(eventually(
      [&] {
        return read_text_file(out).find("sampler-0 on host act (node " + node + ")") !=
               std::string::npos;
      },
      10s))
      << read_text_file(out);
}

// With checkpoint: and restart:, every node's launcher restarts its own processes inside the
// allocation; the coordinator's node picks the checkpoint, the other node's processes load their
// own parts of it (docs/recovery.md, "Across hosts"), and the job ends with the digest of the
// same file in one process.
TEST_F(SlurmCluster,
       WithCheckpointsAKilledNodeProcessRestartsInsideTheAllocationAndKeepsTheDigest) {
  const std::string file =
      write("slurm.yaml", 6000, "checkpoint: {every: 50ms, keep: 2}\nrestart: {max: 2}\n");
  const std::string id = submit(script(file));
  const std::map<std::string, pid_t> processes = running_processes(id);
  ASSERT_EQ(processes.size(), 6U) << read_text_file(dir_ / ("slurm-" + id + ".out"));
  std::string head, other;
  std::tie(head, other) = head_and_other(processes);
  ASSERT_FALSE(head.empty());
  ASSERT_NE(other, head);  // sampler-0's node loads its part from its own directory
  ASSERT_TRUE(eventually(
      [&] {
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(run_dir(id) / head / "checkpoints", ec)) {
          if (fs::exists(entry.path() / "manifest")) return true;
        }
        return false;
      },
      60s))
      << read_text_file(dir_ / ("slurm-" + id + ".out"));
  ASSERT_EQ(::kill(processes.at(other + "/sampler-0"), SIGKILL), 0);
  const fs::path out = dir_ / ("slurm-" + id + ".out");
  ASSERT_TRUE(
      eventually([&] { return testing::summary_digest(dir_ / "summary.json").size() == 16; }, 120s))
      << read_text_file(out);
  EXPECT_NE(read_text_file(out).find("restart 1 of 2"), std::string::npos) << read_text_file(out);
  EXPECT_EQ(testing::summary_digest(dir_ / "summary.json"), single_process_digest(file))
      << read_text_file(out);
  EXPECT_TRUE(eventually([&] { return left_behind().empty(); }, 10s));
}

// A job cancelled after its first checkpoints (a time limit, a preemption) is continued by a new
// job whose script `tagflow slurm FILE --resume RUN` wrote: every node starts its directory from
// the one its place had in RUN (checkpoints linked, RUN left as it was), the coordinator's node
// resumes from the newest checkpoint, and the new job ends with the single-process digest.
TEST_F(SlurmCluster, ANewJobWithResumeContinuesACancelledJobsRunAndKeepsTheDigest) {
  const std::string file = write("slurm.yaml", 12000, "checkpoint: {every: 50ms, keep: 2}\n");
  const std::string first = submit(script(file));
  const std::map<std::string, pid_t> processes = running_processes(first);
  ASSERT_EQ(processes.size(), 6U) << read_text_file(dir_ / ("slurm-" + first + ".out"));
  std::string head, other;
  std::tie(head, other) = head_and_other(processes);
  ASSERT_FALSE(head.empty());
  ASSERT_NE(other, head);
  // A complete checkpoint: its manifest on the coordinator's node, sampler-0's part on the other.
  const auto complete = [&] {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(run_dir(first) / head / "checkpoints", ec)) {
      const fs::path part =
          run_dir(first) / other / "checkpoints" / entry.path().filename() / "sampler-0.ckpt";
      if (fs::exists(entry.path() / "manifest") && fs::exists(part)) return true;
    }
    return false;
  };
  ASSERT_TRUE(eventually(complete, 60s)) << read_text_file(dir_ / ("slurm-" + first + ".out"));
  ASSERT_EQ(sh(daemons_->client("scancel " + first)).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return left_behind().empty(); }, 10s));
  ASSERT_FALSE(fs::exists(dir_ / "summary.json")) << "the first job ended before it was cancelled";

  const testing::CommandResult wrote = sh(daemons_->client(
      testing::tagflow_binary() + " slurm " + file + " --resume " + run_dir(first).string() +
      " --out " + path("resume.sh") + " --summary " + path("summary.json")));
  ASSERT_EQ(wrote.exit_code, 0) << wrote.output;
  const testing::CommandResult waited =
      sh(daemons_->client("timeout 200 sbatch --wait --parsable " + path("resume.sh")));
  const std::string second = waited.output.substr(0, waited.output.find_first_of(";\n"));
  const std::string out = read_text_file(dir_ / ("slurm-" + second + ".out"));
  ASSERT_EQ(waited.exit_code, 0) << waited.output << out;
  EXPECT_NE(out.find("continues " + (run_dir(first) / head).string()), std::string::npos) << out;
  EXPECT_NE(out.find("continues " + (run_dir(first) / other).string()), std::string::npos) << out;
  EXPECT_NE(out.find("from the checkpoint at logical time "), std::string::npos) << out;
  EXPECT_EQ(testing::summary_digest(dir_ / "summary.json"), single_process_digest(file)) << out;
  // Written only when the processes resumed from a checkpoint (docs/recovery.md).
  EXPECT_NE(read_text_file(dir_ / "summary.json").find("\"resent_in_transit\""), std::string::npos)
      << read_text_file(dir_ / "summary.json");
  // The cancelled job's run is left as it was: its checkpoints are still there.
  EXPECT_TRUE(complete());
  // A run that reached its stop is not continued again: nothing written, exit 0.
  const testing::CommandResult again =
      sh(daemons_->client(testing::tagflow_binary() + " slurm " + file + " --resume " +
                          run_dir(second).string() + " --out " + path("again.sh")));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("that run finished"), std::string::npos) << again.output;
  EXPECT_FALSE(fs::exists(dir_ / "again.sh"));
}

}  // namespace
}  // namespace tagflow::cli
