// Tests of cli/launch/launch_backend.hpp: the ways `tagflow up` starts processes give the
// children launch_plan.hpp describes, local ones first; with `cpu_bind: auto` (reactor mode) a
// launcher's own children each get one of its CPUs in turn, an allocated node's none.
#include "cli/launch/launch_backend.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace tagflow::cli {
namespace {

cluster::ClusterConfig head_and_remote_host() {
  return cluster::parse_cluster_config(
      "cluster: backend-test\n"
      "hosts:\n"
      "  a: {address: 10.1.0.1, ssh: ops@machine-a}\n"
      "  b: {address: 10.1.0.2}\n"
      "coordinator: {host: b, port: 7600}\n"
      "nodes:\n"
      "  sampler: {kind: sampler, host: a, data_port: 7610}\n"
      "  replay: {kind: replay, host: b, data_port: 7620}\n"
      "connections:\n"
      "  - {from: sampler.transitions, to: replay.transitions}\n"
      "stop: {env_steps: 100}\n",
      "backend-test.yaml");
}

std::vector<std::string> names(const std::vector<ChildSpec>& specs) {
  std::vector<std::string> out;
  for (const ChildSpec& spec : specs) out.push_back(spec.name);
  return out;
}

TEST(LaunchBackend, AHeadHostStartsItsOwnProcessesThenTheOtherHostsOverSsh) {
  const LaunchPlan plan =
      make_launch_plan(head_and_remote_host(), "backend-test.yaml", std::nullopt, "");
  const auto backends = launch_backends(plan, "/opt/tagflow");
  ASSERT_EQ(backends.size(), 2U);
  EXPECT_EQ(names(backends[0]->children(plan, "runs/x")),
            (std::vector<std::string>{"coordinator", "replay"}));
  EXPECT_EQ(names(backends[1]->children(plan, "runs/x")), std::vector<std::string>{"host:a"});
  EXPECT_EQ(names(children_of(backends, plan, "runs/x")),
            names(child_specs(plan, "/opt/tagflow", "runs/x")));
}

TEST(LaunchBackend, OneHostNeedsOnlyLocalChildren) {
  const LaunchPlan plan =
      make_launch_plan(head_and_remote_host(), "backend-test.yaml", std::nullopt, "a");
  const auto backends = launch_backends(plan, "tagflow");
  ASSERT_EQ(backends.size(), 1U);
  EXPECT_EQ(names(children_of(backends, plan, "runs/x")), std::vector<std::string>{"sampler"});
}

std::vector<int> cpus_of(const std::vector<ChildSpec>& specs) {
  std::vector<int> out;
  for (const ChildSpec& spec : specs) out.push_back(spec.cpu);
  return out;
}

/// Five node processes on one host, in `mode`, with `extra` lines at the top level.
LaunchPlan one_host_plan(const std::string& extra, std::optional<cluster::Mode> mode = {}) {
  const cluster::ClusterConfig config =
      cluster::parse_cluster_config("cluster: bind-test\n" + extra +
                                        "coordinator: {port: 7600}\n"
                                        "nodes:\n"
                                        "  sampler: {kind: sampler, replicas: 4, data_port: 7610}\n"
                                        "  replay: {kind: replay, data_port: 7620}\n"
                                        "connections:\n"
                                        "  - {from: sampler.transitions, to: replay.transitions}\n"
                                        "stop: {env_steps: 100}\n",
                                    "bind-test.yaml");
  return make_launch_plan(config, "bind-test.yaml", mode, "");
}

TEST(CpuBind, EachProcessGetsOneCpuInTurnWhenThereAreNoFewerProcessesThanCpus) {
  std::vector<ChildSpec> six(6);
  bind_to_cpus(six, {2, 5});
  EXPECT_EQ(cpus_of(six), (std::vector<int>{2, 5, 2, 5, 2, 5}));
  std::vector<ChildSpec> named{{"coordinator", {}, ""}, {"replay", {}, ""}};
  bind_to_cpus(named, {0, 1});
  EXPECT_EQ(describe_cpus(named), "coordinator on CPU 0, replay on 1");
  // More CPUs than processes, or one CPU: the scheduler places them.
  std::vector<ChildSpec> two(2);
  bind_to_cpus(two, {0, 1, 2, 3});
  EXPECT_EQ(cpus_of(two), (std::vector<int>{-1, -1}));
  EXPECT_EQ(describe_cpus(two), "");
  std::vector<ChildSpec> unbound(6);
  bind_to_cpus(unbound, {3});
  EXPECT_EQ(cpus_of(unbound), std::vector<int>(6, -1));
  bind_to_cpus(unbound, {});
  EXPECT_EQ(cpus_of(unbound), std::vector<int>(6, -1));
}

TEST(CpuBind, ALaunchersLocalChildrenAreBoundInReactorModeUnlessTheFileSaysNone) {
  EXPECT_TRUE(one_host_plan("").bind_cpus);
  EXPECT_FALSE(one_host_plan("cpu_bind: none\n").bind_cpus);
  EXPECT_FALSE(one_host_plan("mode: actor\n").bind_cpus);
  EXPECT_FALSE(one_host_plan("", cluster::Mode::actor).bind_cpus);
  // The coordinator and the five node processes, over the two CPUs given: ChildSpec order.
  const LaunchPlan plan = one_host_plan("");
  std::vector<ChildSpec> specs = local_child_specs(plan, "tagflow", "runs/x");
  ASSERT_EQ(specs.size(), 6U);
  bind_to_cpus(specs, {0, 1});
  EXPECT_EQ(describe_cpus(specs),
            "coordinator on CPU 0, sampler-0 on 1, sampler-1 on 0, sampler-2 on 1, sampler-3 on "
            "0, replay on 1");
  // LocalChildren binds over this process's own CPUs, in turn, as many as bind_to_cpus gives
  // them (in the order least_pinned_first puts them: other tests' clusters may be pinned now).
  const std::vector<int> usable = usable_cpus();
  ASSERT_FALSE(usable.empty());
  const std::vector<int> bound = cpus_of(LocalChildren("tagflow").children(plan, "runs/x"));
  if (usable.size() < 2 || usable.size() > bound.size()) {
    EXPECT_EQ(bound, std::vector<int>(bound.size(), -1));
  } else {
    std::vector<int> first(bound.begin(), bound.begin() + static_cast<long>(usable.size()));
    std::sort(first.begin(), first.end());
    EXPECT_EQ(first, usable);
    for (std::size_t i = usable.size(); i < bound.size(); ++i) {
      EXPECT_EQ(bound[i], bound[i - usable.size()]) << i;
    }
  }
}

TEST(CpuBind, ASecondClusterStartsOnTheCpusTheFirstLeftLightest) {
  // Nothing pinned: the CPUs as they are.
  EXPECT_EQ(least_pinned_first({0, 1, 2}, {}), (std::vector<int>{0, 1, 2}));
  // Fewest pinned processes first.
  EXPECT_EQ(least_pinned_first({0, 1, 2}, {{0, 1}, {0, 1}, {1, 5}}), (std::vector<int>{2, 1, 0}));
  // The same count: the CPU whose pinned processes used less CPU time first. A first cluster of
  // six on two CPUs (its learner on CPU 0, the busiest) leaves a second one starting on CPU 1,
  // so the second's coordinator, samplers and learner take the other CPUs than the first's.
  const std::vector<PinnedProcess> first_cluster{{0, 0.1}, {1, 2.0}, {0, 2.0},
                                                 {1, 1.0}, {0, 9.0}, {1, 4.0}};
  const std::vector<int> order = least_pinned_first({0, 1}, first_cluster);
  EXPECT_EQ(order, (std::vector<int>{1, 0}));
  std::vector<ChildSpec> second{{"coordinator", {}, ""}, {"sampler-0", {}, ""},
                                {"sampler-1", {}, ""},   {"replay", {}, ""},
                                {"learner", {}, ""},     {"inference", {}, ""}};
  bind_to_cpus(second, order);
  EXPECT_EQ(describe_cpus(second),
            "coordinator on CPU 1, sampler-0 on 0, sampler-1 on 1, replay on 0, learner on 1, "
            "inference on 0");
  // Pinned processes on CPUs this launcher may not use change nothing.
  EXPECT_EQ(least_pinned_first({2, 3}, {{0, 1}, {1, 1}}), (std::vector<int>{2, 3}));
}

TEST(CpuBind, ClustersStartedTogetherBeginOnDifferentCpus) {
  // A cluster of six just started on two CPUs: three on each, no whole second of CPU time used
  // yet. The next deal begins one CPU further on than the last (`first`), so the second cluster's
  // coordinator, samplers and learner take the other CPUs than the first's.
  const std::vector<PinnedProcess> just_started{{0, 0.02}, {1, 0.01}, {0, 0.3},
                                                {1, 0.4},  {0, 0.6},  {1, 0.5}};
  EXPECT_EQ(least_pinned_first({0, 1}, just_started, 0), (std::vector<int>{0, 1}));
  EXPECT_EQ(least_pinned_first({0, 1}, just_started, 1), (std::vector<int>{1, 0}));
  EXPECT_EQ(least_pinned_first({0, 1}, just_started, 2), (std::vector<int>{0, 1}));  // modulo 2
  // `first` turns the CPUs as given, and only breaks ties: fewer pins and fewer whole seconds
  // still come first.
  EXPECT_EQ(least_pinned_first({4, 5, 6}, {}, 2), (std::vector<int>{6, 4, 5}));
  EXPECT_EQ(least_pinned_first({4, 5, 6}, {{6, 0}}, 2), (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(least_pinned_first({0, 1}, {{0, 0.5}, {1, 1.5}}, 1), (std::vector<int>{0, 1}));
}

TEST(CpuBind, LaunchersTakeTurnsAtDealingAndRememberWhereTheLastBegan) {
  const std::string path = ::testing::TempDir() + "cpu-deal";
  {
    CpuDeal first(path, std::chrono::milliseconds(0));
    ASSERT_TRUE(first.held());
    EXPECT_EQ(first.last_first(), 0);  // a new file records nothing
    first.record_first(1);
    // A second launcher waits for the turn, and deals without it once its patience is spent.
    const CpuDeal second(path, std::chrono::milliseconds(50));
    EXPECT_FALSE(second.held());
    EXPECT_EQ(second.last_first(), 0);
  }
  const CpuDeal third(path, std::chrono::milliseconds(0));
  ASSERT_TRUE(third.held());
  EXPECT_EQ(third.last_first(), 1);
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            static_cast<std::filesystem::perms>(0666));  // every user's launchers share it
}

TEST(CpuBind, ALocalLaunchersTurnLastsUntilItsChildrenStarted) {
  const std::string path = ::testing::TempDir() + "local-deal";
  ASSERT_EQ(::setenv("TAGFLOW_CPU_DEAL", path.c_str(), 1), 0);
  EXPECT_EQ(cpu_deal_path(), path);
  const LaunchPlan plan = one_host_plan("");
  LocalChildren first("tagflow");
  LocalChildren second("tagflow");
  (void)first.children(plan, "runs/x");
  // The first holds the turn: the second's children() waits until first.started().
  std::atomic<bool> dealt{false};
  std::thread other([&] {
    (void)second.children(plan, "runs/y");
    dealt = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(dealt.load()) << "the second launcher dealt during the first one's turn";
  first.started();
  other.join();
  EXPECT_TRUE(dealt.load());
  // The second got the turn when the first's ended (not by running out of patience), and holds
  // it until its own children started.
  EXPECT_FALSE(CpuDeal(path, std::chrono::milliseconds(0)).held());
  second.started();
  EXPECT_TRUE(CpuDeal(path, std::chrono::milliseconds(0)).held());
  // Not binding (cpu_bind: none): no turn is taken.
  LocalChildren unbound("tagflow");
  (void)unbound.children(one_host_plan("cpu_bind: none\n"), "runs/z");
  EXPECT_TRUE(CpuDeal(path, std::chrono::milliseconds(0)).held());
  ASSERT_EQ(::unsetenv("TAGFLOW_CPU_DEAL"), 0);
}

// pinned_processes() reads /proc: a child this test pins to one of its CPUs is among them, on that
// CPU; kernel threads (pinned per CPU) are not.
TEST(CpuBind, PinnedProcessesFindsAProcessPinnedToOneCpu) {
  const std::vector<int> usable = usable_cpus();
  ASSERT_FALSE(usable.empty());
  const int cpu = usable.back();
  const pid_t child = ::fork();
  if (child == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ::sched_setaffinity(0, sizeof set, &set);
    ::pause();
    ::_exit(0);
  }
  ASSERT_GT(child, 0);
  int seen = 0;
  for (int i = 0; i < 100 && seen == 0; ++i) {
    // The child pins itself right after the fork; until then it has this process's CPUs.
    std::ifstream status("/proc/" + std::to_string(child) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line == "Cpus_allowed_list:\t" + std::to_string(cpu)) seen = 1;
    }
    if (seen == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(seen, 1) << "the child did not pin itself";
  const std::vector<PinnedProcess> pinned = pinned_processes();
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  const auto child_entry = std::find_if(pinned.begin(), pinned.end(),
                                        [&](const PinnedProcess& p) { return p.pid == child; });
  ASSERT_NE(child_entry, pinned.end()) << "the pinned child is not listed";
  EXPECT_EQ(child_entry->cpu, cpu);
  // Kernel threads are not counted: each CPU has its own ksoftirqd, pinned to it.
  int kernel_threads = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    if (!std::getline(comm, name) || name.rfind("ksoftirqd/", 0) != 0) continue;
    const int pid = std::atoi(entry.path().filename().c_str());
    ++kernel_threads;
    EXPECT_TRUE(std::none_of(pinned.begin(), pinned.end(),
                             [&](const PinnedProcess& p) { return p.pid == pid; }))
        << name << " (pid " << pid << ") is listed";
  }
  EXPECT_GT(kernel_threads, 0) << "no ksoftirqd thread found in /proc";
}

TEST(CpuBind, AnAllocatedNodesLauncherLeavesItsChildrenToItsManager) {
  LaunchPlan plan = one_host_plan("");
  plan.node = 0;
  plan.manager = NodeManager::slurm;
  EXPECT_EQ(cpus_of(AllocatedNode("tagflow", NodeManager::slurm).children(plan, "runs/x")),
            std::vector<int>(plan.processes.size() + 1, -1));
}

}  // namespace
}  // namespace tagflow::cli
