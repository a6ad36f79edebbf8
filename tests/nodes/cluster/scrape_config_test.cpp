// Tests of nodes/cluster/scrape_targets.hpp and nodes/cluster/scrape_config.hpp, and of the command
// `tagflow monitoring prometheus-config` that prints it (checked by `promtool check config`).
#include "nodes/cluster/scrape_config.hpp"

#include <fstream>

#include <gtest/gtest.h>

#include "nodes/cluster/scrape_targets.hpp"
#include "tests/support/run_command.hpp"

namespace tagflow::cluster {
namespace {

using tagflow::testing::run_command;
using tagflow::testing::tagflow_binary;

constexpr const char* kTwoHosts = R"(cluster: two-hosts
mode: reactor
hosts:
  head: {address: 10.0.0.1}
  worker: {address: 10.0.0.2}
coordinator: {host: head, port: 7600, metrics_port: 9460}
nodes:
  sampler: {kind: sampler, replicas: 3, host: worker, data_port: 7000, metrics_port: 9000}
  replay: {kind: replay, host: head, data_port: 7100}
  learner: {kind: learner, host: head, data_port: 7200, metrics_port: 9200}
connections:
  - {from: sampler.transitions, to: replay.transitions}
  - {from: replay.batches, to: learner.batches}
  - {from: learner.priorities, to: replay.priorities, after: 0}
stop: {env_steps: 1000}
)";

std::string write_temp_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

TEST(ScrapeTargets, ListsTheCoordinatorThenEveryReplicaWithAMetricsPort) {
  const cluster::ClusterConfig config = cluster::parse_cluster_config(kTwoHosts, "c.yaml");
  const std::vector<ScrapeTarget> targets = scrape_targets(config);
  ASSERT_EQ(targets.size(), 5U);  // replay has no metrics_port
  EXPECT_EQ(targets[0].process, "coordinator");
  EXPECT_EQ(targets[0].kind, "coordinator");
  EXPECT_EQ(targets[0].address(), "10.0.0.1:9460");
  for (int i = 0; i < 3; ++i) {
    const ScrapeTarget& t = targets[static_cast<std::size_t>(1 + i)];
    EXPECT_EQ(t.process, "sampler-" + std::to_string(i));
    EXPECT_EQ(t.group, "sampler");
    EXPECT_EQ(t.kind, "sampler");
    EXPECT_EQ(t.address(), "10.0.0.2:" + std::to_string(9000 + i));
  }
  EXPECT_EQ(targets[4].process, "learner");  // one replica: no index
  EXPECT_EQ(targets[4].address(), "10.0.0.1:9200");
}

TEST(ScrapeTargets, InActorModeThereIsNoCoordinatorToScrape) {
  cluster::ClusterConfig config = cluster::parse_cluster_config(kTwoHosts, "c.yaml");
  config.mode = cluster::Mode::actor;
  const std::vector<ScrapeTarget> targets = scrape_targets(config);
  ASSERT_EQ(targets.size(), 4U);
  for (const ScrapeTarget& t : targets) EXPECT_NE(t.kind, "coordinator") << t.process;
  EXPECT_EQ(count_of(prometheus_scrape_config(config,
                                              {std::chrono::milliseconds(2000), "", std::nullopt}),
                     "- targets: ["),
            4U);
}

// An endpoint bound to one address answers only there: on a file whose hosts are one machine
// that address is the target (the default 127.0.0.1 also when the host's address is another of
// the machine's); across machines, or bound to every address, each host's address is.
TEST(ScrapeTargets, AreAtTheBindAddressWhenItIsOneAddressAndTheFileIsOneMachine) {
  std::string one = kTwoHosts;
  one.replace(one.find("10.0.0.2"), 8, "10.0.0.1");
  const auto target_of = [](const std::string& text, const std::string& process) {
    return find_scrape_target(cluster::parse_cluster_config(text, "c.yaml"), process)->address();
  };
  EXPECT_TRUE(on_one_machine(cluster::parse_cluster_config(one, "c.yaml")));
  EXPECT_FALSE(on_one_machine(cluster::parse_cluster_config(kTwoHosts, "c.yaml")));
  EXPECT_EQ(target_of(one, "sampler-1"), "127.0.0.1:9001");
  EXPECT_EQ(target_of(one, "coordinator"), "127.0.0.1:9460");
  EXPECT_EQ(target_of(one + "monitoring: {bind: '::1'}\n", "sampler-1"), "[::1]:9001");
  EXPECT_EQ(target_of(one + "monitoring: {bind: 0.0.0.0}\n", "sampler-1"), "10.0.0.1:9001");
  EXPECT_EQ(target_of(one + "monitoring: {bind: '::'}\n", "learner"), "10.0.0.1:9200");
  EXPECT_EQ(target_of(kTwoHosts, "sampler-1"), "10.0.0.2:9001");
  // Hosts at two loopback addresses are one machine too.
  std::string loopbacks = kTwoHosts;
  loopbacks.replace(loopbacks.find("10.0.0.1"), 8, "127.0.0.1");
  loopbacks.replace(loopbacks.find("10.0.0.2"), 8, "127.0.0.2");
  EXPECT_TRUE(on_one_machine(cluster::parse_cluster_config(loopbacks, "c.yaml")));
  EXPECT_EQ(target_of(loopbacks, "sampler-1"), "127.0.0.1:9001");
  EXPECT_EQ(target_of(std::string(kTwoHosts) + "monitoring: {bind: '::1'}\n", "sampler-1"),
            "10.0.0.2:9001");
}

TEST(ScrapeTargets, FindsTheEndpointOfOneProcessByName) {
  const cluster::ClusterConfig config = cluster::parse_cluster_config(kTwoHosts, "c.yaml");
  const std::optional<ScrapeTarget> sampler = find_scrape_target(config, "sampler-2");
  ASSERT_TRUE(sampler.has_value());
  EXPECT_EQ(sampler->port, 9002);
  EXPECT_FALSE(find_scrape_target(config, "replay").has_value());
  EXPECT_FALSE(find_scrape_target(config, "sampler-3").has_value());
  EXPECT_FALSE(find_scrape_target(config, "sampler").has_value());
}

TEST(ScrapeTargets, AJoinedReplicaBeyondTheReplicasServesOnItsIndexOverTheMetricsPort) {
  const cluster::ClusterConfig config = cluster::parse_cluster_config(kTwoHosts, "c.yaml");
  const std::optional<ScrapeTarget> joined = transient_scrape_target(config, "sampler-7");
  ASSERT_TRUE(joined.has_value());
  EXPECT_EQ(joined->process, "sampler-7");
  EXPECT_EQ(joined->group, "sampler");
  EXPECT_EQ(joined->kind, "sampler");
  EXPECT_EQ(joined->address(), "10.0.0.2:9007");
  EXPECT_EQ(transient_scrape_target(config, "sampler-1")->port, 9001);
  EXPECT_FALSE(transient_scrape_target(config, "learner-1").has_value());  // not a sampler group
  EXPECT_FALSE(transient_scrape_target(config, "replay-0").has_value());
  EXPECT_FALSE(transient_scrape_target(config, "sampler").has_value());
  EXPECT_FALSE(transient_scrape_target(config, "sampler-x").has_value());
  EXPECT_FALSE(transient_scrape_target(config, "sampler-99999").has_value());  // port > 65535
  EXPECT_FALSE(transient_scrape_target(config, "other-1").has_value());
}

TEST(ScrapeConfig, WritesOneLabelledTargetPerEndpointAndHonoursExportedLabels) {
  const cluster::ClusterConfig config = cluster::parse_cluster_config(kTwoHosts, "c.yaml");
  const std::string yaml =
      prometheus_scrape_config(config, {std::chrono::milliseconds(2000), "", std::nullopt});
  EXPECT_EQ(count_of(yaml, "- targets: ["), 5U);
  EXPECT_NE(yaml.find("  - job_name: 'tagflow-two-hosts'\n    honor_labels: true\n"),
            std::string::npos);
  EXPECT_NE(yaml.find("  scrape_interval: 2s\n  scrape_timeout: 2s\n"), std::string::npos);
  EXPECT_NE(yaml.find("      - targets: ['10.0.0.2:9001']\n"
                      "        labels: {node: 'sampler-1', kind: 'sampler', group: 'sampler', "
                      "mode: 'reactor', cluster: 'two-hosts'}\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("labels: {node: 'coordinator', kind: 'coordinator', group: 'coordinator'"),
            std::string::npos);
}

TEST(ScrapeConfig, FormatsDurationsTheWayPrometheusParsesThem) {
  EXPECT_EQ(prometheus_duration(std::chrono::milliseconds(5000)), "5s");
  EXPECT_EQ(prometheus_duration(std::chrono::milliseconds(1500)), "1500ms");
  EXPECT_EQ(prometheus_duration(std::chrono::milliseconds(60000)), "60s");
}

TEST(ScrapeConfig, PromtoolAcceptsTheConfigOfTheShippedClusterFile) {
  const auto result = run_command(tagflow_binary() + " monitoring prometheus-config " +
                                  TAGFLOW_SOURCE_DIR + "/configs/local.yaml 2>&1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  // local.yaml: coordinator, sampler-0, sampler-1, replay, learner, inference.
  EXPECT_EQ(count_of(result.output, "- targets: ["), 6U);
  EXPECT_NE(result.output.find("['127.0.0.1:9471']"), std::string::npos);
  const std::string path = write_temp_file("prometheus.yml", result.output);
  const auto check = run_command("promtool check config " + path + " 2>&1");
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

TEST(ScrapeConfig, PromtoolAcceptsATwoHostConfigWithAShortIntervalAndCustomJob) {
  const std::string file = write_temp_file("two-hosts.yaml", kTwoHosts);
  const auto result = run_command(tagflow_binary() + " monitoring prometheus-config " + file +
                                  " --scrape-interval 500ms --job \"it's\" 2>/dev/null");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("job_name: 'it''s'"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("scrape_interval: 500ms"), std::string::npos);
  const std::string path = write_temp_file("prometheus-two-hosts.yml", result.output);
  const auto check = run_command("promtool check config " + path + " 2>&1");
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

TEST(ScrapeConfig, CommandReportsABadClusterFileOrIntervalWithExitCodeTwo) {
  const std::string bad = write_temp_file("bad.yaml", "cluster: x\nnodes:\n  a: {kind: robot}\n");
  const auto result =
      run_command(tagflow_binary() + " monitoring prometheus-config " + bad + " 2>&1");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("bad.yaml:3"), std::string::npos) << result.output;

  const auto missing =
      run_command(tagflow_binary() + " monitoring prometheus-config /nonexistent/c.yaml 2>&1");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("/nonexistent/c.yaml"), std::string::npos) << missing.output;

  const auto interval =
      run_command(tagflow_binary() + " monitoring prometheus-config " + TAGFLOW_SOURCE_DIR +
                  "/configs/local.yaml --scrape-interval "
                  "soon 2>&1");
  EXPECT_EQ(interval.exit_code, 2);
  EXPECT_NE(interval.output.find("--scrape-interval 'soon' is not a duration: a whole number and "
                                 "one of ns, us, ms, s, m"),
            std::string::npos)
      << interval.output;
  const auto zero =
      run_command(tagflow_binary() + " monitoring prometheus-config " + TAGFLOW_SOURCE_DIR +
                  "/configs/local.yaml --scrape-interval 0s 2>&1");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.output.find("--scrape-interval '0s' is not a whole number of milliseconds of at "
                             "least 1ms"),
            std::string::npos)
      << zero.output;
}

// `--mode actor` writes the targets of a run that `tagflow up --mode actor` starts from a
// reactor-mode file: no coordinator, and every target labelled with the mode it runs in.
TEST(ScrapeConfig, TheModeOptionGivesTheTargetsAndLabelsOfThatMode) {
  const std::string file = write_temp_file("two-hosts-mode.yaml", kTwoHosts);
  const auto actor = run_command(tagflow_binary() + " monitoring prometheus-config " + file +
                                 " --mode actor 2>/dev/null");
  ASSERT_EQ(actor.exit_code, 0) << actor.output;
  EXPECT_EQ(count_of(actor.output, "- targets: ["), 4U) << actor.output;
  EXPECT_EQ(count_of(actor.output, "mode: 'actor'"), 4U) << actor.output;
  EXPECT_EQ(actor.output.find("coordinator"), std::string::npos) << actor.output;
  const auto reactor =
      run_command(tagflow_binary() + " monitoring prometheus-config " + file + " 2>/dev/null");
  EXPECT_EQ(count_of(reactor.output, "mode: 'reactor'"), 5U) << reactor.output;
  EXPECT_EQ(
      run_command(tagflow_binary() + " monitoring prometheus-config " + file + " --mode x 2>&1")
          .exit_code,
      2);
  // Across machines with the default loopback bind, the targets stay down: said on stderr.
  const auto note =
      run_command(tagflow_binary() + " monitoring prometheus-config " + file + " 2>&1 >/dev/null");
  EXPECT_NE(note.output.find("note: monitoring.bind is 127.0.0.1, so each process answers scrapes "
                             "only there"),
            std::string::npos)
      << note.output;
}

}  // namespace
}  // namespace tagflow::cluster
