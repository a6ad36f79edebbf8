// Tests of the file checks of nodes/cluster/yaml_reader.hpp, through the cluster loader: what
// yaml-cpp accepts silently (a key given twice, a NUL, a file of any size, a tag) is refused with
// the file, the line and the key; merge keys, which yaml-cpp leaves as ordinary keys, merge.
#include "nodes/cluster/yaml_reader.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace tagflow::cluster {
namespace {

constexpr const char* kValidYaml = R"(cluster: t
seed: 7
nodes:
  sampler: {kind: sampler, data_port: 7000}
  replay: {kind: replay, data_port: 7100, params: {capacity: 1000}}
connections:
  - {from: sampler.transitions, to: replay.transitions}
stop: {env_steps: 1000}
)";

/// The message of the ConfigError that parsing `text` raises ("" when it parses).
std::string yaml_error_of(const std::string& text) {
  try {
    parse_cluster_config(text, "c.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(YamlReader, TheValidFileParses) { EXPECT_EQ(yaml_error_of(kValidYaml), ""); }

TEST(YamlReader, AKeyGivenTwiceIsRefusedAtItsSecondLine) {
  EXPECT_EQ(yaml_error_of(std::string(kValidYaml) + "seed: 8\n"),
            "c.yaml:9: seed: duplicate key (it appears earlier in the same map)");
  const std::string nested = R"(cluster: t
nodes:
  sampler: {kind: sampler, data_port: 7000, data_port: 7001}
stop: {env_steps: 1}
)";
  EXPECT_EQ(
      yaml_error_of(nested),
      "c.yaml:3: nodes.sampler.data_port: duplicate key (it appears earlier in the same map)");
}

TEST(YamlReader, ANulInTheFileOrInAValueIsRefused) {
  std::string raw = kValidYaml;
  raw.insert(raw.find("seed"), std::string(1, '\0'));
  EXPECT_EQ(yaml_error_of(raw), "c.yaml:2: (file): a NUL byte (the file is not text)");
  std::string quoted = kValidYaml;
  quoted.replace(0, 10, "cluster: \"a\\0b\"\n");
  EXPECT_EQ(yaml_error_of(quoted), "c.yaml:1: cluster: a NUL character in 'a\\x00b'");
}

// Classic Mac OS line ends (CR alone) read as one line: said so, not "empty". CR LF reads.
TEST(YamlReader, AFileWhoseLinesEndWithCrAloneIsRefusedAsSuch) {
  std::string cr;
  std::string crlf;
  for (const char c : std::string(kValidYaml)) {
    cr += c == '\n' ? '\r' : c;
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  }
  EXPECT_EQ(yaml_error_of(cr),
            "c.yaml:0: (file): its lines end with a carriage return alone (CR, no LF): save it "
            "with LF (or CR LF) line ends");
  EXPECT_EQ(yaml_error_of(crlf), "");
}

// Past yaml-cpp's own depth guard (which words it "bad file"), said as our nesting limit is.
TEST(YamlReader, NestingPastTheYamlReadersDepthIsSaidSo) {
  const std::string deep =
      "cluster: x\nx-a: " + std::string(3000, '[') + std::string(3000, ']') + "\n";
  const std::string message = yaml_error_of(deep);
  EXPECT_EQ(message.rfind("c.yaml:2: (syntax): nested ", 0), 0U) << message;
  EXPECT_NE(message.find(" levels deep or more, past what the YAML reader reads (a cluster file "
                         "nests at most 100 levels below its top-level map)"),
            std::string::npos)
      << message;
}

TEST(YamlReader, AFileOverTheSizeCapIsRefusedBeforeItIsParsed) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tagflow-big-" + std::to_string(::getpid()));
  {
    std::ofstream out(file);
    out << kValidYaml << "# " << std::string(kMaxClusterFileBytes, 'x') << "\n";
  }
  try {
    (void)load_cluster_config(file.string());
    ADD_FAILURE() << "a file over the cap was parsed";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), file.string() +
                                         ":0: (file): larger than the cluster file limit of " +
                                         std::to_string(kMaxClusterFileBytes) + " bytes");
  }
  std::filesystem::remove(file);
}

TEST(YamlReader, AliasesThatMultiplyTheTreeAreRefused) {
  // Each level repeats the one below ten times: 10^7 nodes from a few hundred bytes.
  std::string bomb = std::string(kValidYaml) + "x0: &a0 [v, v, v, v, v, v, v, v, v, v]\n";
  for (int i = 1; i <= 7; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    bomb += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 10; ++k) bomb += ", " + prev;
    bomb += "]\n";
  }
  EXPECT_NE(yaml_error_of(bomb).find("too many nodes"), std::string::npos) << yaml_error_of(bomb);
}

TEST(YamlReader, AListOrAMapOrNullAsAKeyIsRefusedAtItsLine) {
  std::string text = kValidYaml;
  text.replace(text.find("  replay:"), 0, "  ? [a, b]\n  : {kind: replay, data_port: 7200}\n");
  EXPECT_EQ(yaml_error_of(text),
            "c.yaml:5: nodes: a key must be a single value, not a list or a map");
  // No key at all is named as such, not as a list or a map.
  for (const std::string null_key : {"  ~: {kind: replay}\n", "  null: {kind: replay}\n"}) {
    std::string nulled = kValidYaml;
    nulled.replace(nulled.find("  replay:"), 0, null_key);
    EXPECT_EQ(yaml_error_of(nulled),
              "c.yaml:5: nodes: a key must be a single value, not null (`~` or `null`)")
        << null_key;
  }
}

TEST(YamlReader, AnAliasInsideItsOwnAnchorIsRefusedNotFollowedForever) {
  // yaml-cpp reads `&a [1, *a]` as a list that contains itself.
  const std::string list = yaml_error_of(std::string(kValidYaml) + "x-a: &a [1, *a]\n");
  EXPECT_NE(list.find("c.yaml:9: x-a[1][1][1]"), std::string::npos) << list;
  EXPECT_NE(list.find("nested more than 100 levels deep (an alias inside its own anchor, such as "
                      "&a [*a]?)"),
            std::string::npos)
      << list;
  const std::string merge = yaml_error_of(std::string(kValidYaml) + "x-a: &a {k: 1, <<: *a}\n");
  EXPECT_NE(merge.find("nested more than 100 levels deep"), std::string::npos) << merge;
  // Deep, but not endless: fine.
  std::string nested = std::string(kValidYaml) + "x-deep: ";
  for (int i = 0; i < 50; ++i) nested += "[";
  for (int i = 0; i < 50; ++i) nested += "]";
  EXPECT_EQ(yaml_error_of(nested + "\n"), "");
}

TEST(YamlReader, MergeKeysAddTheKeysAMapDoesNotHaveItself) {
  // Anchors under a top-level x- key, which nothing reads; a list of maps, where the earlier
  // wins; a merged map that merges another; the map's own keys win over merged ones.
  const std::string text = R"(cluster: t
x-ports: &ports {data_port: 7000, metrics_port: 9100}
x-small: &small {capacity: 1000, min_size: 10}
x-replay: &replay
  <<: *small
  batch_size: 16
nodes:
  sampler: {kind: sampler, <<: *ports}
  replay:
    <<: [{data_port: 7100, metrics_port: 9101}, *ports]
    kind: replay
    params:
      <<: *replay
      capacity: 2000
connections:
  - {from: sampler.transitions, to: replay.transitions}
stop: {env_steps: 1000}
)";
  const ClusterConfig config = parse_cluster_config(text, "c.yaml");
  ASSERT_EQ(config.nodes.size(), 2U);
  const NodeConfig& sampler = config.nodes[0];
  const NodeConfig& replay = config.nodes[1];
  EXPECT_EQ(sampler.data_port, 7000);
  EXPECT_EQ(sampler.metrics_port, 9100);
  EXPECT_EQ(sampler.data_port_line, 2) << "a merged key keeps the line where it is written";
  EXPECT_EQ(replay.data_port, 7100);
  EXPECT_EQ(replay.metrics_port, 9101);
  EXPECT_EQ(replay.params.at("capacity"), "2000");
  EXPECT_EQ(replay.params.at("min_size"), "10");
  EXPECT_EQ(replay.params.at("batch_size"), "16");
  EXPECT_EQ(replay.params.count("<<"), 0U);
}

TEST(YamlReader, AMergeKeyThatNamesNoMapOrComesTwiceIsRefusedAtItsLine) {
  const std::string head = "cluster: t\nx-d: &d {data_port: 7000}\nnodes:\n";
  const std::string tail = "stop: {env_steps: 1}\n";
  EXPECT_EQ(yaml_error_of(head + "  sampler: {kind: sampler, <<: 7000}\n" + tail),
            "c.yaml:4: nodes.sampler.<<: a merge key takes a map or a list of maps, such as "
            "*defaults or [*a, *b] (an alias of a map marked &defaults)");
  EXPECT_NE(yaml_error_of(head + "  sampler: {kind: sampler, <<: [*d, 1]}\n" + tail)
                .find("c.yaml:4: nodes.sampler.<<: a merge key takes a map"),
            std::string::npos);
  // An alias of something else: at the `<<`, not at the line of the anchor it names (line 2).
  const std::string scalar = "cluster: t\nx-p: &p 7000\nnodes:\n";
  EXPECT_NE(yaml_error_of(scalar + "  sampler:\n    kind: sampler\n    <<: *p\n" + tail)
                .find("c.yaml:6: nodes.sampler.<<: a merge key takes a map"),
            std::string::npos);
  EXPECT_EQ(yaml_error_of(head + "  sampler:\n    kind: sampler\n    <<: *d\n    <<: *d\n" + tail),
            "c.yaml:7: nodes.sampler.<<: duplicate key (it appears earlier in the same map)");
  // Quoted, `<<` is an ordinary key, and no node has it.
  EXPECT_NE(yaml_error_of(head + "  sampler: {kind: sampler, \"<<\": *d}\n" + tail)
                .find("c.yaml:4: nodes.sampler.<<: unknown key"),
            std::string::npos);
}

// A map written in place under a merge key leaves the tree with the merge: a key it gives twice,
// a tag inside it, or a key the merging map wins are checked as everywhere else.
TEST(YamlReader, AMapMergedInPlaceIsCheckedAsTheTreeIs) {
  const std::string head = "cluster: t\nnodes:\n";
  const std::string tail = "  replay: {kind: replay, data_port: 7100}\nstop: {env_steps: 1}\n";
  EXPECT_EQ(
      yaml_error_of(head + "  sampler: {<<: {kind: sampler, data_port: 7000, data_port: 7200}}\n" +
                    tail),
      "c.yaml:3: nodes.sampler.<<.data_port: duplicate key (it appears earlier in the same map)");
  EXPECT_EQ(yaml_error_of(head + "  sampler: {<<: {kind: !!str replay}, kind: sampler, " +
                          "data_port: 7000}\n" + tail),
            "c.yaml:3: nodes.sampler.<<.kind: the YAML tag '!!str' is not supported: write the "
            "value without a tag");
}

// `trace:` takes a boolean or a map; a value of neither, or none, says both.
TEST(YamlReader, TraceIsABooleanOrAMap) {
  const std::string says =
      "c.yaml:9: trace: expected true, false or a map of keys (events, digests, values_mb)";
  EXPECT_EQ(yaml_error_of(std::string(kValidYaml) + "trace:\n"), says);
  EXPECT_EQ(yaml_error_of(std::string(kValidYaml) + "trace: 1\n"), says);
  EXPECT_EQ(yaml_error_of(std::string(kValidYaml) + "trace: true\n"), "");
  EXPECT_EQ(yaml_error_of(std::string(kValidYaml) + "trace: {events: 1000}\n"), "");
}

TEST(YamlReader, OnlyTopLevelKeysStartingWithXDashGoUnread) {
  EXPECT_EQ(yaml_error_of(std::string(kValidYaml) + "x-notes: {anything: [1, 2]}\n"), "");
  const std::string other = yaml_error_of(std::string(kValidYaml) + "x_notes: 1\n");
  EXPECT_NE(other.find("c.yaml:9: x_notes: unknown key (known here: "), std::string::npos) << other;
  EXPECT_NE(other.find(", and any key starting with x-)"), std::string::npos) << other;
  std::string nested = kValidYaml;
  nested.replace(nested.find("data_port: 7000"), 15, "data_port: 7000, x-note: 1");
  EXPECT_NE(yaml_error_of(nested).find("c.yaml:4: nodes.sampler.x-note: unknown key"),
            std::string::npos)
      << yaml_error_of(nested);
}

TEST(YamlReader, ExplicitTagsAreRefusedAsWritten) {
  std::string text = kValidYaml;
  text.replace(text.find("seed: 7"), 7, "seed: !!int 7");
  EXPECT_EQ(yaml_error_of(text),
            "c.yaml:2: seed: the YAML tag '!!int' is not supported: write the value without a tag");
  text = kValidYaml;
  text.replace(text.find("{capacity"), 1, "!custom {");
  EXPECT_EQ(yaml_error_of(text),
            "c.yaml:5: nodes.replay.params: the YAML tag '!custom' is not supported: write the "
            "value without a tag");
  // On a merged map written in place, which leaves the tree with the merge.
  text = std::string(kValidYaml) + "x-a: {<<: !!map {k: 1}}\n";
  EXPECT_EQ(yaml_error_of(text),
            "c.yaml:9: x-a.<<: the YAML tag '!!map' is not supported: write the value without a "
            "tag");
  text = kValidYaml;
  text.replace(text.find("cluster: t"), 10, "cluster: 't'");  // quoted: no tag
  EXPECT_EQ(yaml_error_of(text), "");
}

TEST(YamlReader, MergesThatMultiplyTheTreeAreRefused) {
  // Each map merges the one before and adds ten keys of its own: map i has 10 (i + 1) keys, and
  // a few hundred such maps copy millions of entries.
  std::string bomb = std::string(kValidYaml) + "x-m0: &m0 {k0_0: 0}\n";
  for (int i = 1; i <= 600; ++i) {
    bomb +=
        "x-m" + std::to_string(i) + ": &m" + std::to_string(i) + " {<<: *m" + std::to_string(i - 1);
    for (int k = 0; k < 10; ++k)
      bomb += ", k" + std::to_string(i) + "_" + std::to_string(k) + ": 0";
    bomb += "}\n";
  }
  EXPECT_NE(yaml_error_of(bomb).find("too many nodes"), std::string::npos) << yaml_error_of(bomb);
}

}  // namespace
}  // namespace tagflow::cluster
