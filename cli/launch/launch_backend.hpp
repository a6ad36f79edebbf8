// LaunchBackend: one way `tagflow up` starts processes of a cluster. Every way gives the launcher
// children (ChildSpec) that it runs under its ProcessSupervisor, so the launcher supervises,
// reports deaths, stops and restarts the children of every way alike (cluster_launcher.hpp):
//
// - LocalChildren: this host's coordinator and node processes, children of the launcher
//   (local_child_specs(), launch_plan.hpp);
// - SshHosts: one ssh client per remote host, which starts that host's half with its own
//   launcher and ends it when the connection closes (remote_hosts.hpp).
//
// - AllocatedNode: one node of an allocation, the processes dealt to it: a Slurm node (one
//   launcher per node, started by the job's srun step; cli/launch/slurm_allocation.hpp) or a pod
//   of a Kubernetes Indexed Job (`tagflow k8s-pod`, cli/k8s_command.cpp). The other nodes'
//   launchers start theirs; deaths reach the coordinator, which ends the run on every node.
//
// Another way (a cluster manager's client) is another implementation: a child that runs the far
// processes and ends when they end.
//
// Not thread-safe; the launcher's main thread uses them.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/launch/launch_plan.hpp"
#include "cli/launch/process_supervisor.hpp"

namespace tagflow::cli {

class LaunchBackend {
 public:
  virtual ~LaunchBackend() = default;

  /// Checks, before anything starts, what this way needs on this machine. Throws
  /// std::runtime_error with a message for the user.
  virtual void prepare() {}
  /// The children this way starts for `plan` (its current attempt); logs and results go to
  /// `log_dir`.
  [[nodiscard]] virtual std::vector<ChildSpec> children(const LaunchPlan& plan,
                                                        const std::string& log_dir) const = 0;
  /// The children of the last children() call have all been started, or starting them failed.
  virtual void started() {}
};

/// Where the launchers of this machine take turns at dealing its CPUs (CpuDeal): the file that
/// TAGFLOW_CPU_DEAL names, else /run/lock/tagflow-cpu-deal, else (no /run/lock)
/// /tmp/tagflow-cpu-deal.
std::string cpu_deal_path();

/// One launcher's turn at dealing this machine's CPUs (`cpu_bind: auto`): an exclusive flock(2)
/// on the file at `path`, waited for at most `patience`, released by the destructor (or by the
/// kernel when the launcher dies). The holder reads the machine's pins, deals and starts its
/// processes before the next launcher reads them, so clusters started at the same moment see each
/// other's pins. The file also keeps where the last deal began (one decimal number), which the
/// next deal goes one CPU past: two clusters whose pins tie (as many processes on each CPU, no CPU
/// time used yet) then begin on different CPUs. Without the lock (not got within `patience`, or
/// the file cannot be opened) the launcher deals anyway, as if alone.
class CpuDeal {
 public:
  CpuDeal(const std::string& path, std::chrono::milliseconds patience);
  ~CpuDeal();
  CpuDeal(const CpuDeal&) = delete;
  CpuDeal& operator=(const CpuDeal&) = delete;

  [[nodiscard]] bool held() const { return held_; }
  /// Where the last deal recorded in the file began (0 when none is, or the lock is not held).
  [[nodiscard]] int last_first() const;
  /// Records that this deal began at `first` (when the lock is held and the file is writable).
  void record_first(int first);

 private:
  int fd_ = -1;
  bool held_ = false;
  bool writable_ = false;
};

/// This host's coordinator and nodes, run with the tagflow executable `tagflow`. In reactor mode
/// with `cpu_bind: auto` (LaunchPlan::bind_cpus) it deals them CPUs during its turn (CpuDeal),
/// which lasts from children() until started().
class LocalChildren final : public LaunchBackend {
 public:
  explicit LocalChildren(std::string tagflow) : tagflow_(std::move(tagflow)) {}
  [[nodiscard]] std::vector<ChildSpec> children(const LaunchPlan& plan,
                                                const std::string& log_dir) const override;
  void started() override { deal_.reset(); }

 private:
  std::string tagflow_;
  mutable std::optional<CpuDeal> deal_;  // the turn children() took, until started()
};

/// The remote hosts' halves, each over one ssh client (the OpenSSH client found on PATH).
class SshHosts final : public LaunchBackend {
 public:
  void prepare() override;
  [[nodiscard]] std::vector<ChildSpec> children(const LaunchPlan& plan,
                                                const std::string& log_dir) const override;

 private:
  std::string ssh_ = "ssh";
};

/// One node of an allocation (a Slurm node, a Kubernetes pod): its processes, run with the
/// tagflow executable `tagflow`.
class AllocatedNode final : public LaunchBackend {
 public:
  AllocatedNode(std::string tagflow, NodeManager manager)
      : tagflow_(std::move(tagflow)), manager_(manager) {}
  /// Refuses to run outside what its manager starts: a Slurm job step (no SLURM_JOB_ID), a pod
  /// of an Indexed Job (no JOB_COMPLETION_INDEX).
  void prepare() override;
  [[nodiscard]] std::vector<ChildSpec> children(const LaunchPlan& plan,
                                                const std::string& log_dir) const override;

 private:
  std::string tagflow_;
  NodeManager manager_;
};

/// The ways `plan` needs: this Slurm node's or pod's processes (plan.node >= 0), or local children
/// (none when nothing runs here), and ssh when this machine starts remote hosts.
std::vector<std::unique_ptr<LaunchBackend>> launch_backends(const LaunchPlan& plan,
                                                            const std::string& tagflow);

/// Every backend's children for `plan`, in the backends' order.
std::vector<ChildSpec> children_of(const std::vector<std::unique_ptr<LaunchBackend>>& backends,
                                   const LaunchPlan& plan, const std::string& log_dir);

}  // namespace tagflow::cli
