// Tests of cli/launch/launch_backend.hpp: the ways `tagflow up` starts processes give the
// children launch_plan.hpp describes, local ones first; with `cpu_bind: auto` (reactor mode) a
// launcher's own children each get one of its CPUs in turn, an allocated node's none.
#include "cli/launch/launch_backend.hpp"

#include <gtest/gtest.h>

#include <string>
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
  // LocalChildren binds over this process's own CPUs: as many as bind_to_cpus gives them.
  const std::vector<int> usable = usable_cpus();
  ASSERT_FALSE(usable.empty());
  std::vector<ChildSpec> expected = local_child_specs(plan, "tagflow", "runs/x");
  bind_to_cpus(expected, usable);
  EXPECT_EQ(cpus_of(LocalChildren("tagflow").children(plan, "runs/x")), cpus_of(expected));
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
