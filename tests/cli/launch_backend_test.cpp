// Tests of cli/launch/launch_backend.hpp: the ways `tagflow up` starts processes give the
// children launch_plan.hpp describes, local ones first.
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

}  // namespace
}  // namespace tagflow::cli
