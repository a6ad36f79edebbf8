// Tests of nodes/cluster/cluster_config.hpp: the shipped configs load, and every class of mistake
// in a cluster file is refused with its file, line and key.
#include "nodes/cluster/cluster_config.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

namespace tagflow::cluster {
namespace {

constexpr const char* kValid = R"(cluster: t
seed: 3
nodes:
  sampler: {kind: sampler, replicas: 2, data_port: 7000, metrics_port: 9000}
  replay: {kind: replay, data_port: 7100}
  learner: {kind: learner, data_port: 7200, params: {batch_size: 64}}
connections:
  - {from: sampler.transitions, to: replay.transitions}
  - {from: replay.batches, to: learner.batches}
  - {from: learner.priorities, to: replay.priorities, after: 0}
stop: {env_steps: 1000}
)";

/// Parses `text` and returns the ConfigError it must raise.
ConfigError error_of(const std::string& text) {
  try {
    parse_cluster_config(text, "c.yaml");
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a ConfigError for:\n" << text;
  return ConfigError("", 0, "", "");
}

/// `text` with the first occurrence of `from` replaced by `to`.
std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(ClusterConfig, ShippedConfigsLoad) {
  const std::filesystem::path dir = std::filesystem::path(TAGFLOW_SOURCE_DIR) / "configs";
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    EXPECT_NO_THROW(load_cluster_config(entry.path().string()));
    ++count;
  }
  EXPECT_GE(count, 1);
}

TEST(ClusterConfig, LocalConfigDescribesTheDemoCluster) {
  const ClusterConfig config =
      load_cluster_config(std::string(TAGFLOW_SOURCE_DIR) + "/configs/local.yaml");
  EXPECT_EQ(config.mode, Mode::reactor);
  ASSERT_NE(config.find_node("sampler"), nullptr);
  EXPECT_EQ(config.find_node("sampler")->replicas, 2);
  EXPECT_EQ(config.find_node("learner")->kind->name, "learner");
  EXPECT_EQ(config.find_node("sampler")->params.at("env"), "CartPole-v1");
  ASSERT_TRUE(config.stop.target_return.has_value());
  EXPECT_DOUBLE_EQ(*config.stop.target_return, 475.0);
}

TEST(ClusterConfig, ReadsEveryFieldOfAValidFile) {
  const ClusterConfig config = parse_cluster_config(kValid, "c.yaml");
  EXPECT_EQ(config.name, "t");
  EXPECT_EQ(config.seed, 3U);
  EXPECT_EQ(config.hosts.at("local").address, "127.0.0.1");
  ASSERT_EQ(config.nodes.size(), 3U);
  EXPECT_EQ(config.nodes[0].name, "sampler");
  EXPECT_EQ(config.nodes[0].metrics_port, 9000);
  EXPECT_EQ(config.nodes[2].params.at("batch_size"), "64");
  ASSERT_EQ(config.connections.size(), 3U);
  EXPECT_FALSE(config.connections[0].after.has_value());
  EXPECT_EQ(config.connections[2].after, std::chrono::nanoseconds(0));
  EXPECT_EQ(config.stop.env_steps, 1000);
}

TEST(ClusterConfig, UnknownKeyIsNamedWithItsLine) {
  const ConfigError e = error_of(with(kValid, "replicas: 2", "replica: 2"));
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.key(), "nodes.sampler.replica");
  EXPECT_NE(std::string(e.what()).find("c.yaml:4:"), std::string::npos) << e.what();
}

TEST(ClusterConfig, UnknownTopLevelKeyIsRefused) {
  const ConfigError e = error_of(std::string(kValid) + "stopp: {seconds: 1}\n");
  EXPECT_EQ(e.key(), "stopp");
  EXPECT_EQ(e.line(), 12);
}

TEST(ClusterConfig, NumericsIsPortableUnlessTheFileSaysNative) {
  EXPECT_EQ(parse_cluster_config(kValid, "c.yaml").numerics, numerics::Mode::portable);
  EXPECT_EQ(parse_cluster_config(std::string(kValid) + "numerics: native\n", "c.yaml").numerics,
            numerics::Mode::native);
  const ConfigError e = error_of(std::string(kValid) + "numerics: fast\n");
  EXPECT_EQ(e.key(), "numerics");
  EXPECT_EQ(e.line(), 12);
  EXPECT_NE(std::string(e.what()).find("expected portable"), std::string::npos) << e.what();
}

TEST(ClusterConfig, CpuBindIsAutoUnlessTheFileSaysNone) {
  EXPECT_TRUE(parse_cluster_config(kValid, "c.yaml").cpu_bind_auto);
  EXPECT_TRUE(
      parse_cluster_config(std::string(kValid) + "cpu_bind: auto\n", "c.yaml").cpu_bind_auto);
  EXPECT_FALSE(
      parse_cluster_config(std::string(kValid) + "cpu_bind: none\n", "c.yaml").cpu_bind_auto);
  const ConfigError e = error_of(std::string(kValid) + "cpu_bind: [0, 1]\n");
  EXPECT_EQ(e.key(), "cpu_bind");
  EXPECT_EQ(e.line(), 12);
  const ConfigError word = error_of(std::string(kValid) + "cpu_bind: cores\n");
  EXPECT_EQ(word.key(), "cpu_bind");
  EXPECT_NE(std::string(word.what()).find("expected auto"), std::string::npos) << word.what();
}

TEST(ClusterConfig, WrongTypesAreRefused) {
  EXPECT_EQ(error_of(with(kValid, "replicas: 2", "replicas: two")).key(), "nodes.sampler.replicas");
  EXPECT_EQ(error_of(with(kValid, "replicas: 2", "replicas: 0")).key(), "nodes.sampler.replicas");
  EXPECT_EQ(error_of(with(kValid, "seed: 3", "seed: [1]")).key(), "seed");
  EXPECT_EQ(error_of(with(kValid, "after: 0", "after: soon")).key(), "connections[2].after");
  EXPECT_EQ(error_of(with(kValid, "kind: replay", "kind: buffer")).key(), "nodes.replay.kind");
  EXPECT_EQ(error_of(with(kValid, "data_port: 7100", "data_port: 70000")).key(),
            "nodes.replay.data_port");
}

// A connection written over two lines is refused at the line of its key at fault.
TEST(ClusterConfig, AConnectionsErrorIsAtTheLineOfItsKey) {
  const ConfigError e = error_of(with(kValid, "{from: replay.batches, to: learner.batches}",
                                      "{from: replay.batches,\n     to: lerner.batches}"));
  EXPECT_EQ(e.key(), "connections[1].to");
  EXPECT_EQ(e.line(), 10);
  const ConfigError f = error_of(with(kValid, "{from: replay.batches, to: learner.batches}",
                                      "{from: replay.batchez,\n     to: learner.batches}"));
  EXPECT_EQ(f.key(), "connections[1].from");
  EXPECT_EQ(f.line(), 9);
}

TEST(ClusterConfig, DanglingConnectionsAreRefused) {
  const ConfigError unknown_node =
      error_of(with(kValid, "to: learner.batches", "to: lerner.batches"));
  EXPECT_EQ(unknown_node.key(), "connections[1].to");
  EXPECT_EQ(unknown_node.line(), 9);
  const ConfigError unknown_port =
      error_of(with(kValid, "from: replay.batches", "from: replay.samples"));
  EXPECT_EQ(unknown_port.key(), "connections[1].from");
  EXPECT_NE(std::string(unknown_port.what()).find("outputs: batches"), std::string::npos);
  EXPECT_EQ(error_of(with(kValid, "from: sampler.transitions", "from: sampler")).key(),
            "connections[0].from");
}

TEST(ClusterConfig, AConnectionJoinsPortsCarryingTheSameMessage) {
  const ConfigError e = error_of(with(kValid, "{from: replay.batches, to: learner.batches}",
                                      "{from: replay.batches, to: replay.transitions}"));
  EXPECT_EQ(e.key(), "connections[1].to");
  EXPECT_EQ(e.line(), 9);
  EXPECT_NE(std::string(e.what()).find("replay.batches carries batches, and replay.transitions "
                                       "takes transitions; connect it to an input that takes "
                                       "batches (learner.batches)"),
            std::string::npos)
      << e.what();
  // No input of the file takes what the output carries.
  const ConfigError none = error_of(with(kValid, "{from: replay.batches, to: learner.batches}",
                                         "{from: sampler.observations, to: replay.transitions}"));
  EXPECT_NE(std::string(none.what())
                .find("sampler.observations carries observations, and "
                      "replay.transitions takes transitions; no input of this "
                      "file takes observations"),
            std::string::npos)
      << none.what();
}

TEST(ClusterConfig, ZeroDelayCycleIsRefusedAndNamed) {
  const ConfigError e = error_of(with(kValid, ", after: 0}", "}"));
  EXPECT_EQ(e.key(), "connections[2]");  // the connection that closes the cycle, on its line
  const std::string text = kValid;
  const auto closing = text.find("from: learner.priorities");
  ASSERT_NE(closing, std::string::npos);
  EXPECT_EQ(e.line(), 1 + std::count(text.begin(),
                                     text.begin() + static_cast<std::ptrdiff_t>(closing), '\n'));
  const std::string message = e.what();
  EXPECT_NE(message.find("cycle without a delay"), std::string::npos) << message;
  EXPECT_NE(message.find("learner.priorities -> replay.priorities"), std::string::npos) << message;
  EXPECT_NE(message.find("replay.batches -> learner.batches"), std::string::npos) << message;
}

TEST(ClusterConfig, PortClashesAreRefusedIncludingReplicaPorts) {
  // sampler-1 takes 7001 because sampler has two replicas from 7000.
  const ConfigError replica = error_of(with(kValid, "data_port: 7100", "data_port: 7001"));
  EXPECT_EQ(replica.key(), "nodes.replay.data_port");
  EXPECT_NE(std::string(replica.what()).find("sampler-1 data"), std::string::npos)
      << replica.what();
  const ConfigError metrics = error_of(with(kValid, "data_port: 7200", "data_port: 9000"));
  EXPECT_NE(std::string(metrics.what()).find("sampler-0 metrics"), std::string::npos)
      << metrics.what();
}

// The error points at the port that clashes, not at its node's name.
TEST(ClusterConfig, APortClashNamesThePortsOwnLine) {
  const ConfigError e = error_of(
      "cluster: t\n"
      "nodes:\n"
      "  sampler: {kind: sampler, data_port: 7000}\n"
      "  replay:\n"
      "    kind: replay\n"
      "    data_port: 7000\n"
      "  learner: {kind: learner, data_port: 7200}\n"
      "connections:\n"
      "  - {from: sampler.transitions, to: replay.transitions}\n"
      "  - {from: replay.batches, to: learner.batches}\n"
      "stop: {env_steps: 1000}\n");
  EXPECT_EQ(e.key(), "nodes.replay.data_port");
  EXPECT_EQ(e.line(), 6);
  EXPECT_NE(std::string(e.what()).find("used by both sampler data and replay data"),
            std::string::npos)
      << e.what();
}

TEST(ClusterConfig, MissingPiecesAreRefused) {
  EXPECT_EQ(error_of(with(kValid, "cluster: t\n", "")).key(), "cluster");
  EXPECT_EQ(error_of(with(kValid, "stop: {env_steps: 1000}", "stop: {}")).key(), "stop");
  EXPECT_EQ(error_of(with(kValid, "data_port: 7200, ", "")).key(), "nodes.learner.data_port");
  EXPECT_EQ(error_of("cluster: t\nstop: {seconds: 1}\n").key(), "nodes");
}

TEST(ClusterConfig, SyntaxErrorsAndMissingFilesAreConfigErrors) {
  EXPECT_EQ(error_of("cluster: [t\n").key(), "(syntax)");
  EXPECT_THROW(load_cluster_config("/nonexistent/cluster.yaml"), ConfigError);
}

TEST(ClusterConfig, CurveNeedsAKeysDirectory) {
  EXPECT_EQ(error_of(std::string(kValid) + "security: {curve: true}\n").key(), "security.keys_dir");
}

TEST(ClusterConfig, SecurityNoneOpensTheClusterAndAnyOtherWordIsAFileError) {
  const ClusterConfig open = parse_cluster_config(std::string(kValid) + "security: none\n", "t");
  EXPECT_TRUE(open.security.none);
  EXPECT_FALSE(open.security.curve);
  EXPECT_FALSE(parse_cluster_config(kValid, "t").security.none);  // closed by default
  const ConfigError e = error_of(std::string(kValid) + "security: off\n");
  EXPECT_EQ(e.key(), "security");
  EXPECT_GT(e.line(), 0);
}

TEST(ClusterConfig, RunKeysTurnCurveOnWithTheirDirectory) {
  ClusterConfig config = parse_cluster_config(kValid, "t");
  use_run_keys(config, "/run/keys");
  EXPECT_TRUE(config.security.curve);
  EXPECT_EQ(config.security.keys_dir, "/run/keys");
  // `--run-keys runs/RUN/keys` is from the working directory, not from the cluster file's folder.
  ClusterConfig in_configs = parse_cluster_config(kValid, "configs/local.yaml");
  use_run_keys(in_configs, "runs/r1/keys");
  EXPECT_EQ(resolved_keys_dir(in_configs),
            (std::filesystem::current_path() / "runs/r1/keys").string());
}

TEST(Duration, ParsesUnitsAndRefusesNonsense) {
  EXPECT_EQ(parse_duration("250ms"), std::chrono::milliseconds(250));
  EXPECT_EQ(parse_duration("1.5s"), std::chrono::milliseconds(1500));
  EXPECT_EQ(parse_duration("10us"), std::chrono::microseconds(10));
  EXPECT_EQ(parse_duration("0"), std::chrono::nanoseconds(0));
  EXPECT_EQ(parse_duration("2m"), std::chrono::seconds(120));
  EXPECT_FALSE(parse_duration("5").has_value());
  EXPECT_FALSE(parse_duration("-1s").has_value());
  EXPECT_FALSE(parse_duration("1 fortnight").has_value());
  // Blanks around the number and the unit, spaces and tabs only: no line breaks.
  EXPECT_EQ(parse_duration(" 2 s\t"), std::chrono::seconds(2));
  for (const char* broken : {"2\ns", "\n2s", "2s\n", "2\rs", "2\vs", "2\fs"}) {
    EXPECT_FALSE(parse_duration(broken).has_value()) << broken;
  }
}

// Read exactly, not through a double: the longest is 2^62 ns to the nanosecond (2^62 + 1 to
// 2^62 + 512 once passed), and a duration is a whole number of nanoseconds.
TEST(Duration, IsExactToTheNanosecondUpTo2To62) {
  bool too_long = false;
  EXPECT_EQ(parse_duration("4611686018427387904ns", too_long),
            std::chrono::nanoseconds(std::int64_t{1} << 62));
  EXPECT_FALSE(parse_duration("4611686018427387905ns", too_long).has_value());
  EXPECT_TRUE(too_long);
  EXPECT_FALSE(parse_duration("4611686018427388416ns", too_long).has_value());
  EXPECT_TRUE(too_long);
  EXPECT_FALSE(parse_duration("99999999999999999999999s", too_long).has_value());
  EXPECT_TRUE(too_long);
  EXPECT_EQ(parse_duration("0000000000000000000000001ns", too_long), std::chrono::nanoseconds(1));
  EXPECT_FALSE(too_long);
  EXPECT_EQ(parse_duration("1.000000001s"), std::chrono::nanoseconds(1'000'000'001));
  EXPECT_EQ(parse_duration("0.5m"), std::chrono::seconds(30));
  EXPECT_EQ(parse_duration("1.2500us"), std::chrono::nanoseconds(1250));
  EXPECT_EQ(parse_duration("0.0"), std::chrono::nanoseconds(0));
  EXPECT_FALSE(parse_duration("1.5ns", too_long).has_value());  // finer than a nanosecond
  EXPECT_FALSE(too_long);
  EXPECT_FALSE(parse_duration("0.0000001ns").has_value());
  EXPECT_FALSE(parse_duration("1.0000000001s").has_value());
}

}  // namespace
}  // namespace tagflow::cluster

namespace tagflow::cluster {
namespace {

TEST(ClusterConfigRecovery, CheckpointAndRestartAreRead) {
  const ClusterConfig config = parse_cluster_config(
      std::string(kValid) + "checkpoint: {every: 2s, keep: 3}\nrestart: {max: 4}\n", "c.yaml");
  ASSERT_TRUE(config.checkpoint.every.has_value());
  EXPECT_EQ(config.checkpoint.every->count(), 2000000000);
  EXPECT_EQ(config.checkpoint.keep, 3);
  EXPECT_EQ(config.checkpoint.line, 12);
  EXPECT_EQ(config.restart.max, 4);
  const ClusterConfig plain = parse_cluster_config(kValid, "c.yaml");
  EXPECT_FALSE(plain.checkpoint.every.has_value());
  EXPECT_EQ(plain.restart.max, 0);
}

TEST(ClusterConfigRecovery, TheLocalDemoCheckpointsAndRestarts) {
  const ClusterConfig config =
      load_cluster_config(std::string(TAGFLOW_SOURCE_DIR) + "/configs/local.yaml");
  EXPECT_TRUE(config.checkpoint.every.has_value());
  EXPECT_GT(config.restart.max, 0);
}

TEST(ClusterConfigRecovery, BadRecoveryKeysAreNamedWithTheirLine) {
  const ConfigError every = error_of(std::string(kValid) + "checkpoint: {every: 1500us}\n");
  EXPECT_EQ(std::string(every.what()).rfind("c.yaml:12: checkpoint.every: must be a whole", 0), 0U)
      << every.what();
  const ConfigError keep = error_of(std::string(kValid) + "checkpoint: {every: 1s, keep: 0}\n");
  EXPECT_EQ(std::string(keep.what()).rfind("c.yaml:12: checkpoint.keep", 0), 0U) << keep.what();
  const ConfigError unknown = error_of(std::string(kValid) + "restart: {maximum: 2}\n");
  EXPECT_EQ(std::string(unknown.what()).rfind("c.yaml:12: restart.maximum", 0), 0U)
      << unknown.what();
  const ConfigError missing = error_of(std::string(kValid) + "checkpoint: {keep: 2}\n");
  EXPECT_EQ(std::string(missing.what()).rfind("c.yaml:12: checkpoint.every", 0), 0U)
      << missing.what();
}

/// The message of the ConfigError `text` raises; "" when it loads.
std::string message_of(const std::string& text) {
  try {
    parse_cluster_config(text, "c.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ClusterConfigNumbers, IntegersAreReadAsYaml12ReadsThem) {
  // A leading zero is decimal, not octal; 0x and 0o say their base.
  EXPECT_EQ(parse_cluster_config(with(kValid, "data_port: 7100", "data_port: 07100"), "c.yaml")
                .nodes[1]
                .data_port,
            7100);
  EXPECT_EQ(parse_cluster_config(with(kValid, "replicas: 2", "replicas: 010"), "c.yaml")
                .nodes[0]
                .replicas,
            10);
  EXPECT_EQ(parse_cluster_config(with(kValid, "seed: 3", "seed: 0x1F"), "c.yaml").seed, 31U);
  EXPECT_EQ(parse_cluster_config(with(kValid, "seed: 3", "seed: 0o17"), "c.yaml").seed, 15U);
  EXPECT_EQ(message_of(with(kValid, "seed: 3", "seed: 0o18")),
            "c.yaml:2: seed: expected an integer, got '0o18'");
  // YAML 1.2's core schema signs decimal integers only.
  EXPECT_EQ(message_of(with(kValid, "seed: 3", "seed: -0x0")),
            "c.yaml:2: seed: expected an integer, got '-0x0'");
  EXPECT_EQ(message_of(with(kValid, "seed: 3", "seed: +0o7")),
            "c.yaml:2: seed: expected an integer, got '+0o7'");
  EXPECT_EQ(message_of(with(kValid, "seed: 3", "seed: 18446744073709551616")),
            "c.yaml:2: seed: '18446744073709551616' is outside 0..4611686018427387904");
  EXPECT_EQ(message_of(with(kValid, "seed: 3", "seed:")),
            "c.yaml:2: seed: expected an integer, got an empty value");
  EXPECT_EQ(message_of(with(kValid, "seed: 3", "seed: [3]")),
            "c.yaml:2: seed: expected an integer, got a list");
}

TEST(ClusterConfigNumbers, DurationsAreBoundedAndTimeoutsMeaningful) {
  // An empty duration says what to write.
  EXPECT_EQ(message_of(with(kValid, "after: 0}", "after: }")),
            "c.yaml:10: connections[2].after: expected a duration such as 0, 250ms, 2s or 10us, "
            "got an empty value");
  EXPECT_EQ(message_of(with(kValid, "after: 0}", "after: 99999999999999999999s}")),
            "c.yaml:10: connections[2].after: '99999999999999999999s' is longer than the longest "
            "duration, 2^62 ns (about 146 years)");
  EXPECT_EQ(message_of(std::string(kValid) + "coordinator: {join_timeout: 0}\n"),
            "c.yaml:12: coordinator.join_timeout: must be at least 1ms and at most 24 hours, got "
            "'0'");
  EXPECT_EQ(message_of(std::string(kValid) + "coordinator: {heartbeat_timeout: 3ms}\n"),
            "c.yaml:12: coordinator.heartbeat_timeout: must be at least 4ms and at most 24 hours, "
            "got '3ms'");
  EXPECT_NE(message_of(std::string(kValid) + "coordinator: {join_timeout: 25h}\n"), "");
  // heartbeat_interval is read (a bad duration is an error) and ignored: the period is a quarter
  // of the timeout, whatever the file says.
  const ClusterConfig old = parse_cluster_config(
      std::string(kValid) + "coordinator: {heartbeat_interval: 10s, heartbeat_timeout: 1s}\n",
      "c.yaml");
  EXPECT_EQ(old.coordinator.heartbeat_timeout, std::chrono::milliseconds(1000));
  EXPECT_NE(message_of(std::string(kValid) + "coordinator: {heartbeat_interval: soon}\n"), "");
}

TEST(ClusterConfigFile, AWholeFileErrorSaysLineZero) {
  EXPECT_EQ(message_of(""),
            "c.yaml:0: (file): empty: a cluster file is a map of keys (cluster, "
            "nodes, ...)");
  EXPECT_EQ(message_of("# nothing but a comment\n"),
            "c.yaml:0: (file): empty: a cluster file is a map of keys (cluster, nodes, ...)");
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "cluster_config_a_directory";
  std::filesystem::create_directories(dir);
  try {
    load_cluster_config(dir.string());
    ADD_FAILURE() << "a directory loaded";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), dir.string() + ":0: (file): a directory, not a cluster file");
  }
  std::filesystem::remove_all(dir);
  // A pipe would block the reader until something wrote to it.
  const std::filesystem::path pipe =
      std::filesystem::path(::testing::TempDir()) / "cluster_config_a_pipe.yaml";
  std::filesystem::remove(pipe);
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  try {
    load_cluster_config(pipe.string());
    ADD_FAILURE() << "a pipe loaded";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              pipe.string() + ":0: (file): not a regular file (a pipe or a device?)");
  }
  std::filesystem::remove(pipe);
  // A key's bytes are escaped in the message (a NUL used to cut it short).
  EXPECT_EQ(message_of(with(kValid, "seed: 3", "\"se\\0ed\": 3")),
            "c.yaml:2: se\\x00ed: a NUL character in 'se\\x00ed'");
}

TEST(ClusterConfigHosts, TheDefaultHostIsTheFirstListedAndAnEmptyListIsRefused) {
  const ClusterConfig config = parse_cluster_config(
      with(kValid,
           "nodes:", "hosts:\n  zeta: {address: 10.0.0.2}\n  alpha: {address: 10.0.0.1}\nnodes:"),
      "c.yaml");
  EXPECT_EQ(config.first_host, "zeta");
  EXPECT_EQ(config.coordinator.host, "zeta");
  EXPECT_EQ(config.nodes[0].host, "zeta");
  EXPECT_EQ(message_of(with(kValid, "nodes:", "hosts: {}\nnodes:")),
            "c.yaml:3: hosts: name at least one host (or leave hosts: out for one local host)");
}

// A host's name goes into file names and lines: the cluster names' rule, refused at its line.
TEST(ClusterConfigHosts, AHostNameIsASafeName) {
  for (const char* good : {"a", "gpu-node.2", "Rack_7"}) {
    EXPECT_NO_THROW(parse_cluster_config(
        with(kValid, "nodes:", "hosts:\n  " + std::string(good) + ": {address: 10.0.0.2}\nnodes:"),
        "c.yaml"))
        << good;
  }
  for (const char* bad : {"\"\"", "\"a b\"", "\"-x\"", "\"a/b\"", "\"*\"", "\"lo\\ncal\""}) {
    const std::string message = message_of(
        with(kValid, "nodes:", "hosts:\n  " + std::string(bad) + ": {address: 10.0.0.2}\nnodes:"));
    EXPECT_EQ(message.rfind("c.yaml:4: hosts.", 0), 0U) << bad << ": " << message;
    EXPECT_NE(message.find(": host names are 1 to 64 letters, digits, '_', '-' and '.', starting "
                           "with a letter or a digit; got '"),
              std::string::npos)
        << message;
  }
  EXPECT_NE(message_of(with(kValid, "nodes:",
                            "hosts:\n  " + std::string(65, 'h') + ": {address: 10.0.0.2}\nnodes:"))
                .find("host names are 1 to 64"),
            std::string::npos);
}

TEST(ClusterConfigNames, TheRunsOwnFileNamesAreReserved) {
  for (const std::string name : {"coordinator", "summary", "trace"}) {
    SCOPED_TRACE(name);
    const std::string as_node = message_of(with(kValid, "replay:", name + ":"));
    EXPECT_EQ(as_node.rfind("c.yaml:5: nodes." + name + ": '" + name + "' is reserved", 0), 0U)
        << as_node;
    const std::string as_process =
        message_of(with(kValid, "data_port: 7100}", "data_port: 7100, process: " + name + "}"));
    EXPECT_EQ(as_process.rfind("c.yaml:5: nodes.replay.process: '" + name + "' is reserved", 0), 0U)
        << as_process;
  }
}

TEST(ClusterConfigPorts, EveryPortIsCheckedOnItsOwnMachine) {
  // The coordinator's metrics port is named at its own line.
  EXPECT_EQ(message_of(std::string(kValid) + "coordinator:\n  port: 7600\n  metrics_port: 7600\n"),
            "c.yaml:14: coordinator.metrics_port: port 7600 on 127.0.0.1 is used by both "
            "coordinator and coordinator metrics");
  // Two Slurm hosts are two machines: one port on each is no clash; on one host it is.
  const std::string slurm = with(with(kValid, "nodes:",
                                      "hosts:\n  a: {slurm: {nodes: 1}}\n  b: {slurm: {nodes: "
                                      "1}}\nnodes:"),
                                 "data_port: 7100}", "data_port: 7000, host: b}");
  EXPECT_EQ(message_of(slurm), "");
  EXPECT_EQ(message_of(with(slurm, "host: b}", "host: a}")),
            "c.yaml:8: nodes.replay.data_port: port 7000 on host a is used by both sampler-0 data "
            "and replay data");
}

// What the reader says of a value of the right kind out of its range, a yes/no word, and a key
// missing from the file itself (its line is the first key's).
TEST(ClusterConfig, ErrorsSayWhatIsWrongWithAValueThatLooksRight) {
  EXPECT_EQ(message_of(with(kValid, "stop: {env_steps: 1000}", "stop: {target_return: 1e400}")),
            "c.yaml:11: stop.target_return: '1e400' is beyond a number's range (about ±1.8e308)");
  EXPECT_EQ(message_of(with(kValid, "stop: {env_steps: 1000}", "stop: {target_return: -1e999}")),
            "c.yaml:11: stop.target_return: '-1e999' is beyond a number's range (about "
            "±1.8e308)");
  EXPECT_EQ(message_of(with(kValid, "stop: {env_steps: 1000}", "stop: {target_return: many}")),
            "c.yaml:11: stop.target_return: expected a number, got 'many'");
  EXPECT_EQ(message_of(std::string(kValid) + "security: {curve: 0}\n"),
            "c.yaml:12: security.curve: expected true or false (yes/no and on/off are read as "
            "true/false too), got '0'");
  EXPECT_EQ(parse_cluster_config(std::string(kValid) + "security: {curve: off}\n", "c.yaml")
                .security.curve,
            false);
  // Written but empty: said so, not "needs keys_dir" (it is there).
  EXPECT_EQ(message_of(std::string(kValid) + "security: {curve: true, keys_dir: \"\"}\n"),
            "c.yaml:12: security.keys_dir: is empty: give the directory `tagflow keys generate "
            "DIR` wrote (curve: true reads its keys there)");
  EXPECT_EQ(message_of(with(kValid, "cluster: t\n", "")),
            "c.yaml:1: cluster: missing (required at the file's top level)");
}

// A replay that no transitions reach, or a learner that no batches reach, does nothing: the run
// went on to its stop with `updates 0` and no word of why.
TEST(ClusterConfig, AReplayOrLearnerThatNothingFeedsIsRefusedNamingWhatCouldFeedIt) {
  EXPECT_EQ(
      message_of(with(kValid, "  - {from: sampler.transitions, to: replay.transitions}\n", "")),
      "c.yaml:5: nodes.replay: replay 'replay' works on what comes to replay.transitions, "
      "and no connection goes there: connect sampler.transitions to it");
  EXPECT_EQ(
      message_of(with(kValid, "  - {from: replay.batches, to: learner.batches}\n", "")),
      "c.yaml:6: nodes.learner: learner 'learner' works on what comes to learner.batches, and "
      "no connection goes there: connect replay.batches to it");
  // inference.experience (the inference service's logged episodes) sends only in a multi-agent
  // file: elsewhere it is neither accepted as a replay's feed nor offered as one.
  const std::string served = with(kValid, "  learner: {kind: learner",
                                  "  inference: {kind: inference, data_port: 7300}\n"
                                  "  learner: {kind: learner");
  EXPECT_EQ(message_of(with(served, "{from: sampler.transitions, to: replay.transitions}",
                            "{from: inference.experience, to: replay.transitions}")),
            "c.yaml:9: connections[0].from: inference.experience sends only in a multi-agent file "
            "(one with `policies:`): here it would send nothing");
  EXPECT_EQ(
      message_of(with(served, "  - {from: sampler.transitions, to: replay.transitions}\n", "")),
      "c.yaml:5: nodes.replay: replay 'replay' works on what comes to replay.transitions, "
      "and no connection goes there: connect sampler.transitions to it");
  // A replay's priorities come back from a learner only where there is one.
  EXPECT_EQ(message_of(with(
                kValid, "  - {from: learner.priorities, to: replay.priorities, after: 0}\n", "")),
            "");
}

TEST(ClusterConfigSecurity, KeysDirWithoutCurveIsRefusedAndRestartMaxDefaultsToZero) {
  EXPECT_EQ(message_of(std::string(kValid) + "security: {keys_dir: k}\n"),
            "c.yaml:12: security.keys_dir: read only with curve: true (add it, or leave keys_dir "
            "out)");
  EXPECT_EQ(parse_cluster_config(std::string(kValid) + "restart: {}\n", "c.yaml").restart.max, 0);
  EXPECT_EQ(message_of(with(kValid, "params: {batch_size: 64}", "params: {batch_size: }")),
            "c.yaml:6: nodes.learner.params.batch_size: an empty value: give the param a value or "
            "leave it out");
}

// monitoring.bind is resolved by each process's metrics endpoint (getaddrinfo): an IP address or
// a host name, checked for its form when the file is loaded.
TEST(ClusterConfigFile, AMonitoringBindIsAnAddressOrAHostName) {
  for (const std::string ok :
       {"127.0.0.1", "0.0.0.0", "localhost", "node-1.example.org", "\"::1\"", "\"::\""}) {
    EXPECT_EQ(message_of(std::string(kValid) + "monitoring: {bind: " + ok + "}\n"), "") << ok;
  }
  EXPECT_EQ(message_of(std::string(kValid) + "monitoring: {bind: 999.1.1.1}\n"),
            "c.yaml:12: monitoring.bind: '999.1.1.1' is not an IPv4 address");
  EXPECT_EQ(message_of(std::string(kValid) + "monitoring: {bind: \"\"}\n"),
            "c.yaml:12: monitoring.bind: must not be empty");
  EXPECT_EQ(message_of(std::string(kValid) + "monitoring: {bind: \"no such_host\"}\n"),
            "c.yaml:12: monitoring.bind: 'no such_host' is neither an IP address nor a host name");
  EXPECT_EQ(message_of(std::string(kValid) + "monitoring: {bind: \"[::]\"}\n"),
            "c.yaml:12: monitoring.bind: '[::]': write an IPv6 address without brackets");
}

TEST(ClusterConfigFile, AHostAddressIsAnAddressOrAHostName) {
  const auto hosts = [](const std::string& address) {
    return std::string(kValid) + "hosts:\n  a: {address: " + address + "}\n";
  };
  for (const std::string ok : {"10.0.0.5", "localhost", "node-1.example.org", "\"::1\""}) {
    EXPECT_EQ(message_of(hosts(ok)), "") << ok;
  }
  EXPECT_EQ(message_of(hosts("\"not an address!\"")),
            "c.yaml:13: hosts.a.address: 'not an address!' is neither an IP address nor a host "
            "name");
  EXPECT_EQ(message_of(hosts("10.0.0.256")),
            "c.yaml:13: hosts.a.address: '10.0.0.256' is not an IPv4 address");
  EXPECT_EQ(message_of(hosts("\"[::1]\"")),
            "c.yaml:13: hosts.a.address: '[::1]': write an IPv6 address without brackets");
  EXPECT_EQ(message_of(hosts("\"\"")), "c.yaml:13: hosts.a.address: must not be empty");
}

TEST(ClusterConfigFile, ANodeNameIsOneTo64LowerCaseLettersDigitsAndUnderscores) {
  const std::string rule =
      "node names are 1 to 64 lower-case letters, digits and '_', starting with a letter";
  const std::string longest = "r" + std::string(63, '2');
  const std::string renamed = [&] {
    std::string text = with(kValid, "  replay: {", "  " + longest + ": {");
    for (const char* port : {"replay.transitions", "replay.batches", "replay.priorities"}) {
      text = with(text, port, longest + std::string(port).substr(6));
    }
    return text;
  }();
  EXPECT_EQ(message_of(renamed), "");
  EXPECT_EQ(message_of(with(kValid, "  replay: {", "  " + longest + "3: {")),
            "c.yaml:5: nodes." + longest + "3: " + rule);
  EXPECT_EQ(message_of(with(kValid, "  replay: {", "  Replay: {")),
            "c.yaml:5: nodes.Replay: " + rule);
  EXPECT_EQ(message_of(with(kValid, "  replay: {", "  _replay: {")),
            "c.yaml:5: nodes._replay: " + rule);
}

TEST(ClusterConfigFile, OneDocumentOneConnectionPerPortPairAndFiniteStops) {
  EXPECT_EQ(message_of(std::string(kValid) + "---\ncluster: other\n"),
            "c.yaml:12: (file): a second YAML document (after `---`): a cluster file is one "
            "document");
  EXPECT_EQ(message_of(with(kValid, "  - {from: replay.batches, to: learner.batches}\n",
                            "  - {from: replay.batches, to: learner.batches}\n"
                            "  - {from: replay.batches, to: learner.batches, after: 1ms}\n")),
            "c.yaml:10: connections[2]: replay.batches -> learner.batches is connections[1] "
            "again: give each connection once");
  for (const char* stop :
       {"{seconds: .inf}", "{seconds: 1e300}", "{target_return: .nan}", "{target_return: -.inf}"}) {
    SCOPED_TRACE(stop);
    EXPECT_NE(message_of(with(kValid, "stop: {env_steps: 1000}", std::string("stop: ") + stop)),
              "");
  }
  EXPECT_EQ(message_of(with(kValid, "nodes:", "hosts:\n  a: {address: \"\"}\nnodes:")),
            "c.yaml:4: hosts.a.address: must not be empty");
  // An empty list item is named at its `-`, past comments and blank lines below it; `- ~` is a
  // value, which the connection's reader refuses as one.
  EXPECT_EQ(
      message_of(with(kValid, "connections:\n", "connections:\n  -\n  # a comment\n\n")),
      "c.yaml:8: connections[0]: an empty list item (a `-` with nothing after it): remove it");
  // At the end of the file too, with or without a last newline (yaml-cpp's line is off there).
  const std::string head = kValid;
  const std::string before_stop = head.substr(0, head.find("stop:"));
  EXPECT_EQ(
      message_of(before_stop + "  -\n"),
      "c.yaml:11: connections[3]: an empty list item (a `-` with nothing after it): remove it");
  EXPECT_EQ(
      message_of(before_stop + "  -"),
      "c.yaml:11: connections[3]: an empty list item (a `-` with nothing after it): remove it");
  EXPECT_EQ(message_of(with(kValid, "connections:\n", "connections:\n  - ~\n")),
            "c.yaml:8: connections[0]: expected a map of keys");
  // A quote left open reads on as one value over the lines below; the error names its line.
  const std::string quoted = message_of(
      with(with(kValid, "seed: 3", "seed: \"3"), "env_steps: 1000", "env_steps: \"1000\""));
  EXPECT_EQ(quoted.rfind("c.yaml:2: (syntax): a quoted value opens on this line and is not "
                         "closed on it (YAML read on and failed at line ",
                         0),
            0u)
      << quoted;
  EXPECT_EQ(
      message_of(with(kValid, "  learner: {kind: learner,", "  learner: {kind: 'learner''s',"))
          .rfind("c.yaml:6: nodes.learner.kind", 0),
      0u);
  // So is a flow list or map left open, which YAML reads on into the lines below; a flow list
  // closed on a later line is a value.
  EXPECT_EQ(message_of(with(kValid, "seed: 3", "seed: [3")),
            "c.yaml:2: (syntax): a flow list or map ('[' or '{') opens on this line and is not "
            "closed (YAML read on and failed at line 3: end of sequence flow not found)");
  const std::string at_end =
      message_of(with(kValid, "stop: {env_steps: 1000}", "stop: {env_steps: 1000"));
  EXPECT_EQ(at_end,
            "c.yaml:11: (syntax): a flow list or map ('[' or '{') opens on this line and is not "
            "closed (YAML read on and failed at the end of the file: end of map flow not found)");
  // Block lines below an open bracket make YAML fail at one of them, with another message.
  EXPECT_EQ(message_of("cluster: c\nnodes:\n  s: {kind: sampler, data_port: 7000,\n\n"
                       "connections:\n  - {from: s.observations, to: s.actions}\n"),
            "c.yaml:3: (syntax): a flow list or map ('[' or '{') opens on this line and is not "
            "closed (YAML read on and failed at line 6: illegal block entry)");
  // A line indented as no map around it is: YAML names it, and so does the hint.
  EXPECT_EQ(message_of("cluster: c\nnodes:\n    s:\n    kind: sampler\n    data_port: 7000\n"
                       "  r: {kind: replay, data_port: 7001}\n"),
            "c.yaml:6: (syntax): end of map not found (line 6 is indented 2 spaces, as no line of "
            "the maps or lists around it is (0): check the indentation of the lines above it)");
  // A list item indented as no list around it is: the same hint.
  EXPECT_EQ(message_of(with(kValid, "  - {from: replay.batches, to: learner.batches}",
                            "   - {from: replay.batches, to: learner.batches}")),
            "c.yaml:9: (syntax): end of sequence not found (line 9 is indented 3 spaces, as no "
            "line of the maps or lists around it is (0, 2): check the indentation of the lines "
            "above it)");
  // A key without its ':' is named at its own line; yaml-cpp fails at the next key's.
  EXPECT_EQ(message_of("cluster: c\nnodes:\n  s:\n    kind: sampler\n    data_port 7000\n"
                       "    metrics_port: 9000\n"),
            "c.yaml:5: (syntax): no ':' after the key on this line: a key and its value are "
            "written `key: value` (YAML read on and failed at line 6: illegal map value)");
  // Without a last newline yaml-cpp fails at the bracket's own line.
  EXPECT_EQ(message_of(with(kValid, "stop: {env_steps: 1000}\n", "stop: {env_steps: 1000")),
            "c.yaml:11: (syntax): end of map flow not found");
  const std::string inner = message_of(with(
      kValid, "  learner: {kind: learner, data_port: 7200, params: {batch_size: 64}}",
      "  learner: {kind: learner, data_port: 7200,\n    params: {batch_size: 64, hidden: [6, 4"));
  EXPECT_EQ(
      inner.rfind("c.yaml:7: (syntax): a flow list or map ('[' or '{') opens on this line", 0), 0u)
      << inner;
  EXPECT_NO_THROW(parse_cluster_config(with(kValid, "params: {batch_size: 64}",
                                            "params: {batch_size: 64,\n    hidden: [64,\n   32]}"),
                                       "c.yaml"));
  // A replica's name is a key pair's and a certificate's (64 characters at most).
  const std::string long_name(63, 's');
  EXPECT_EQ(message_of(with(with(kValid, "  sampler: {kind: sampler, replicas: 2,",
                                 "  " + long_name + ": {kind: sampler, replicas: 2,"),
                            "from: sampler.transitions", "from: " + long_name + ".transitions")),
            "c.yaml:4: nodes." + long_name + ".replicas: its replicas are named " + long_name +
                "-0 to " + long_name +
                "-1, over 64 characters (a key's certificate holds 64): "
                "shorten the name");
  EXPECT_EQ(message_of(with(kValid, "  replay: {kind: replay, data_port: 7100}",
                            "  replay: {kind: replay, data_port: 7100, process: p" +
                                std::string(64, 'x') + "}"))
                .rfind("c.yaml:5: nodes.replay.process: process names are 1 to 64 letters", 0),
            0u);
  // A missing key of a map written over lines is named at the key that names the map.
  EXPECT_EQ(message_of(with(kValid, "  replay: {kind: replay, data_port: 7100}",
                            "  replay:\n    data_port: 7100")),
            "c.yaml:5: nodes.replay.kind: missing (required)");
  const std::string tabbed = message_of(with(kValid, "  replay:", "\treplay:"));
  EXPECT_NE(tabbed.find("line 5 is indented with a tab: YAML indents with spaces"),
            std::string::npos)
      << tabbed;
}

}  // namespace
}  // namespace tagflow::cluster
