// Tests of cli/launch/launch_plan.hpp: which host a launcher plays, whether it starts the
// coordinator, and the command lines of its children.
#include "cli/launch/launch_plan.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "actors/actor_credentials.hpp"
#include "transport/curve_keys.hpp"

namespace tagflow::cli {
namespace {

/// A cluster of two samplers and a replay; `hosts` is the YAML of its hosts section and
/// `sampler_host` / `replay_host` / `coordinator_host` place its parts.
cluster::ClusterConfig two_part_cluster(const std::string& hosts, const std::string& sampler_host,
                                        const std::string& replay_host,
                                        const std::string& coordinator_host,
                                        const std::string& extra = "") {
  const std::string text =
      "cluster: plan-test\n"
      "hosts:\n" +
      hosts + "coordinator: {host: " + coordinator_host +
      ", port: 7600}\n"
      "nodes:\n"
      "  sampler: {kind: sampler, replicas: 2, host: " +
      sampler_host +
      ", data_port: 7610, metrics_port: 9470}\n"
      "  replay: {kind: replay, host: " +
      replay_host + ", data_port: 7620" + extra +
      "}\n"
      "connections:\n"
      "  - {from: sampler.transitions, to: replay.transitions}\n"
      "stop: {env_steps: 100}\n";
  return cluster::parse_cluster_config(text, "plan-test.yaml");
}

const std::string kLoopbackHosts = "  a: {address: 127.0.0.1}\n  b: {address: 127.0.0.2}\n";
const std::string kNetworkHosts = "  a: {address: 10.1.0.1}\n  b: {address: 10.1.0.2}\n";

std::vector<std::string> names(const LaunchPlan& plan) {
  std::vector<std::string> result;
  for (const auto& process : plan.processes) result.push_back(process.name);
  return result;
}

TEST(LaunchPlan, OneHostRunsTheCoordinatorAndEveryProcess) {
  const auto config =
      two_part_cluster("  local: {address: 127.0.0.1}\n", "local", "local", "local");
  const LaunchPlan plan = make_launch_plan(config, "plan-test.yaml", std::nullopt, "");
  EXPECT_EQ(plan.hosts, std::vector<std::string>{"local"});
  EXPECT_TRUE(plan.coordinator);
  EXPECT_EQ(names(plan), (std::vector<std::string>{"sampler-0", "sampler-1", "replay"}));
  EXPECT_TRUE(plan.whole_cluster());
  EXPECT_EQ(describe(plan), "host local: coordinator, sampler-0, sampler-1, replay");
}

TEST(LaunchPlan, HostNameStartsOnlyThatHostsProcesses) {
  const auto config = two_part_cluster(kNetworkHosts, "a", "b", "b");
  const LaunchPlan a = make_launch_plan(config, "plan-test.yaml", std::nullopt, "a");
  EXPECT_FALSE(a.coordinator);
  EXPECT_EQ(names(a), (std::vector<std::string>{"sampler-0", "sampler-1"}));
  EXPECT_FALSE(a.whole_cluster());
  const LaunchPlan b = make_launch_plan(config, "plan-test.yaml", std::nullopt, "b");
  EXPECT_TRUE(b.coordinator);
  EXPECT_EQ(names(b), std::vector<std::string>{"replay"});
  EXPECT_EQ(describe(b), "host b: coordinator, replay");
}

TEST(LaunchPlan, HostsOnLoopbackAddressesAllRunHereWithoutHostName) {
  const auto config = two_part_cluster(kLoopbackHosts, "a", "b", "b");
  const LaunchPlan plan = make_launch_plan(config, "plan-test.yaml", std::nullopt, "");
  EXPECT_EQ(plan.hosts, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(plan.coordinator);
  EXPECT_TRUE(plan.whole_cluster());
}

TEST(LaunchPlan, HostsOnTheNetworkNeedAHostName) {
  const auto config = two_part_cluster(kNetworkHosts, "a", "b", "b");
  try {
    (void)make_launch_plan(config, "plan-test.yaml", std::nullopt, "");
    FAIL() << "expected a LaunchError";
  } catch (const LaunchError& e) {
    EXPECT_NE(std::string(e.what()).find("--host NAME"), std::string::npos) << e.what();
  }
}

TEST(LaunchPlan, AnUnknownHostIsAnErrorListingTheHosts) {
  const auto config = two_part_cluster(kNetworkHosts, "a", "b", "b");
  try {
    (void)make_launch_plan(config, "plan-test.yaml", std::nullopt, "c");
    FAIL() << "expected a LaunchError";
  } catch (const LaunchError& e) {
    EXPECT_EQ(std::string(e.what()), "plan-test.yaml: no host 'c' (hosts: a, b)");
  }
}

TEST(LaunchPlan, ActorModeStartsNoCoordinator) {
  const auto config =
      two_part_cluster("  local: {address: 127.0.0.1}\n", "local", "local", "local");
  const LaunchPlan plan = make_launch_plan(config, "plan-test.yaml", cluster::Mode::actor, "");
  EXPECT_FALSE(plan.coordinator);
  EXPECT_EQ(plan.mode, cluster::Mode::actor);
  EXPECT_EQ(plan.processes.size(), 3U);
}

TEST(LaunchPlan, ChildrenRunTheCoordinatorAndTagflowNodeWithResultsAndLogsInTheLogDir) {
  const auto config =
      two_part_cluster("  local: {address: 127.0.0.1}\n", "local", "local", "local");
  const LaunchPlan plan = make_launch_plan(config, "/etc/plan-test.yaml", std::nullopt, "");
  const std::vector<ChildSpec> specs = child_specs(plan, "/opt/tagflow", "/tmp/run");
  ASSERT_EQ(specs.size(), 4U);
  EXPECT_EQ(specs[0].name, "coordinator");
  EXPECT_EQ(specs[0].argv, (std::vector<std::string>{"/opt/tagflow", "coordinator", "--config",
                                                     "/etc/plan-test.yaml", "--stats",
                                                     "/tmp/run/coordinator.stats.json"}));
  EXPECT_EQ(specs[0].log_path, "/tmp/run/coordinator.log");
  EXPECT_EQ(specs[3].name, "replay");
  EXPECT_EQ(specs[3].argv, (std::vector<std::string>{
                               "/opt/tagflow", "node", "--config", "/etc/plan-test.yaml", "--name",
                               "replay", "--result", "/tmp/run/replay.json", "--quiet"}));
  EXPECT_EQ(specs[3].log_path, "/tmp/run/replay.log");
}

TEST(LaunchPlan, AModeGivenOnTheCommandLineIsPassedToEveryNode) {
  const auto config =
      two_part_cluster("  local: {address: 127.0.0.1}\n", "local", "local", "local");
  const LaunchPlan plan = make_launch_plan(config, "/c.yaml", cluster::Mode::reactor, "");
  for (const ChildSpec& spec : child_specs(plan, "tagflow", "/tmp/run")) {
    if (spec.name == "coordinator") continue;
    ASSERT_GE(spec.argv.size(), 2U);
    EXPECT_EQ(spec.argv[spec.argv.size() - 2], "--mode");
    EXPECT_EQ(spec.argv.back(), "reactor");
  }
}

TEST(LaunchPlan, ProcessGroupsAreStartedAsOneChild) {
  const auto config = two_part_cluster("  local: {address: 127.0.0.1}\n", "local", "local", "local",
                                       ", process: sink");
  const LaunchPlan plan = make_launch_plan(config, "/c.yaml", std::nullopt, "");
  EXPECT_EQ(names(plan), (std::vector<std::string>{"sampler-0", "sampler-1", "sink"}));
  EXPECT_EQ(describe(plan), "host local: coordinator, sampler-0, sampler-1, sink [replay]");
}

TEST(LaunchPlan, AHeadHostStartsTheOthersOverSshWhenTheyAllHaveADestination) {
  const auto config = two_part_cluster(
      "  a: {address: 10.1.0.1, ssh: \"ops@machine-a\", tagflow: /opt/tf/bin/tagflow, "
      "workdir: /srv/it's}\n  b: {address: 10.1.0.2}\n",
      "a", "b", "b");
  const LaunchPlan plan = make_launch_plan(config, "configs/x.yaml", std::nullopt, "");
  EXPECT_EQ(plan.hosts, std::vector<std::string>{"b"});
  EXPECT_TRUE(plan.coordinator);
  EXPECT_EQ(names(plan), std::vector<std::string>{"replay"});
  ASSERT_EQ(plan.remote_hosts.size(), 1U);
  EXPECT_EQ(describe(plan), "host b: coordinator, replay; host a over ssh (ops@machine-a)");
  const std::vector<ChildSpec> specs = child_specs(plan, "/opt/tagflow", "runs/x", "/usr/bin/ssh");
  ASSERT_EQ(specs.size(), 3U);
  const ChildSpec& remote = specs.back();
  EXPECT_EQ(remote.name, "host:a");
  EXPECT_TRUE(remote.keep_stdin);
  EXPECT_EQ(remote.log_path, "runs/x/host-a.log");
  EXPECT_EQ(remote.argv,
            (std::vector<std::string>{
                "/usr/bin/ssh", "-o", "BatchMode=yes", "-T", "ops@machine-a",
                "cd '/srv/it'\\''s' && exec '/opt/tf/bin/tagflow' up 'configs/x.yaml' --host 'a' "
                "--log-dir 'runs/x-a' --quiet --stop-with-stdin"}));
  // The coordinator keeps the other host's results in the log directory.
  EXPECT_EQ(specs[0].argv.back().substr(0, 1), "/");
  EXPECT_EQ(specs[0].argv[specs[0].argv.size() - 2], "--results");
  // With --host, no ssh: that machine plays one host only.
  EXPECT_TRUE(make_launch_plan(config, "configs/x.yaml", std::nullopt, "b").remote_hosts.empty());
}

TEST(LaunchPlan, AHostWithoutAnSshDestinationLeavesTheHostNameRequired) {
  const auto config = two_part_cluster(
      "  a: {address: 10.1.0.1}\n  b: {address: 10.1.0.2, ssh: machine-b}\n", "a", "b", "b");
  try {
    (void)make_launch_plan(config, "x.yaml", std::nullopt, "");
    FAIL() << "no error";
  } catch (const LaunchError& e) {
    EXPECT_NE(std::string(e.what()).find("hosts.NAME.ssh"), std::string::npos) << e.what();
  }
}

TEST(LaunchPlan, AnEmptySshDestinationIsAFileError) {
  try {
    (void)two_part_cluster("  a: {address: 10.1.0.1, ssh: \"\"}\n  b: {address: 10.1.0.2}\n", "a",
                           "b", "b");
    FAIL() << "no error";
  } catch (const cluster::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("plan-test.yaml:3: hosts.a.ssh: must not be empty"),
              std::string::npos)
        << e.what();
  }
}

TEST(RunKeys, ALocalClusterThatNamesNoKeysGetsKeysMintedForTheRunInEitherMode) {
  const auto config =
      two_part_cluster("  local: {address: 127.0.0.1}\n", "local", "local", "local");
  EXPECT_TRUE(wants_run_keys(config, make_launch_plan(config, "c.yaml", std::nullopt, "")));
  EXPECT_TRUE(wants_run_keys(config, make_launch_plan(config, "c.yaml", cluster::Mode::actor, "")));
  // Not with keys of its own, not with `security: none`, not for one host of several (the other
  // hosts could not get the keys).
  auto with_keys = config;
  with_keys.security.curve = true;
  with_keys.security.keys_dir = "keys";
  EXPECT_FALSE(wants_run_keys(with_keys, make_launch_plan(with_keys, "c.yaml", std::nullopt, "")));
  auto open = config;
  open.security.none = true;
  EXPECT_FALSE(wants_run_keys(open, make_launch_plan(open, "c.yaml", std::nullopt, "")));
  const auto split = two_part_cluster(kNetworkHosts, "a", "b", "a");
  EXPECT_FALSE(wants_run_keys(split, make_launch_plan(split, "c.yaml", std::nullopt, "a")));
}

TEST(RunKeys, MintedKeysCoverEveryFederateAreSecretAndReachEveryChild) {
  const auto config =
      two_part_cluster("  local: {address: 127.0.0.1}\n", "local", "local", "local");
  const std::filesystem::path run =
      std::filesystem::temp_directory_path() / ("run-keys-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(run);
  LaunchPlan plan = make_launch_plan(config, "/c.yaml", std::nullopt, "");
  plan.run_keys = mint_run_keys(config, run.string());
  EXPECT_EQ(plan.run_keys, (run / "keys").string());
  EXPECT_EQ(std::filesystem::status(plan.run_keys).permissions(),
            std::filesystem::perms::owner_all);
  for (const char* name : {"coordinator", "sampler-0", "sampler-1", "replay"}) {
    const auto pair = transport::read_key_pair(plan.run_keys, name);
    EXPECT_TRUE(transport::is_valid_z85_key(pair.secret_key)) << name;
    EXPECT_EQ(
        std::filesystem::status(std::filesystem::path(plan.run_keys) / (std::string(name) + ".key"))
            .permissions(),
        std::filesystem::perms::owner_read | std::filesystem::perms::owner_write)
        << name;
  }
  // Actor mode's TLS credentials: the run's CA, one certificate per process and one to join with.
  for (const std::string& name : actor_credential_names(config)) {
    const actors::ActorCredentials c = actors::actor_credentials(plan.run_keys, name);
    EXPECT_EQ(std::filesystem::status(c.key_file).permissions(),
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write)
        << name;
  }
  EXPECT_EQ(actor_credential_names(config).back(), "join");
  // A second run in the same directory gets new keys, not the old ones.
  const std::string before = transport::read_key_pair(plan.run_keys, "replay").public_key;
  (void)mint_run_keys(config, run.string());
  EXPECT_NE(transport::read_key_pair(plan.run_keys, "replay").public_key, before);
  for (const ChildSpec& spec : child_specs(plan, "tagflow", run.string())) {
    const auto at = std::find(spec.argv.begin(), spec.argv.end(), "--run-keys");
    ASSERT_NE(at, spec.argv.end()) << spec.name;
    ASSERT_NE(at + 1, spec.argv.end()) << spec.name;
    EXPECT_EQ(*(at + 1), plan.run_keys) << spec.name;
  }
  std::filesystem::remove_all(run);
}

TEST(DefaultLogDir, NamesTheClusterAndTheLocalTime) {
  const std::string dir = default_log_dir("local-cartpole", std::chrono::system_clock::now());
  ASSERT_EQ(dir.rfind("runs/local-cartpole-", 0), 0U) << dir;
  EXPECT_EQ(dir.size(), std::string("runs/local-cartpole-20260101-120000").size()) << dir;
}

}  // namespace
}  // namespace tagflow::cli
