#include "federation/federation_spec.hpp"

#include <string>

#include <gtest/gtest.h>

namespace tagflow::coordinator {
namespace {

constexpr const char* kDiamond = R"(
cluster: test
federation:
  coordinator: tcp://127.0.0.1:7700
  heartbeat_timeout: 500ms
  federates:
    source: {downstreams: [left, right]}
    left:   {upstreams: [source], downstreams: [sink]}
    right:  {upstreams: [{id: source, after: 0}], downstreams: [sink]}
    sink:   {upstreams: [{id: left, after: 1ms}, right]}
)";

TEST(FederationSpec, ParsesFederatesNeighboursAndDelays) {
  const FederationSpec spec = parse_federation_spec(kDiamond);
  EXPECT_EQ(spec.address, "tcp://127.0.0.1:7700");
  EXPECT_EQ(spec.heartbeat_timeout.count(), 500);
  ASSERT_EQ(spec.federates.size(), 4U);
  const FederateSpec* sink = spec.find("sink");
  ASSERT_NE(sink, nullptr);
  ASSERT_EQ(sink->upstreams.size(), 2U);
  EXPECT_EQ(sink->upstreams[0].federate, "left");
  EXPECT_EQ(sink->upstreams[0].delay, ConnectionDelay(1'000'000));
  EXPECT_EQ(sink->upstreams[1].delay, std::nullopt);
  EXPECT_EQ(spec.find("right")->upstreams[0].delay, ConnectionDelay(0));
  EXPECT_FALSE(spec.keys_dir.has_value());
}

TEST(FederationSpec, InconsistentNeighboursAreRejectedByName) {
  std::string text = kDiamond;
  text.replace(text.find("downstreams: [left, right]"), 26, "downstreams: [left]");
  try {
    (void)parse_federation_spec(text, "cluster.yaml");
    FAIL() << "accepted an inconsistent federation";
  } catch (const FederationConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cluster.yaml"), std::string::npos) << what;
    EXPECT_NE(what.find("'right'"), std::string::npos) << what;
  }
}

TEST(FederationSpec, BadValuesNameTheFileLineAndKey) {
  std::string text = kDiamond;
  text.replace(text.find("500ms"), 5, "soon");
  try {
    (void)parse_federation_spec(text, "cluster.yaml");
    FAIL();
  } catch (const FederationConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cluster.yaml:5"), std::string::npos) << what;
    EXPECT_NE(what.find("heartbeat_timeout"), std::string::npos) << what;
  }
  EXPECT_THROW((void)parse_federation_spec("cluster: x\n"), FederationConfigError);
  EXPECT_THROW((void)load_federation_spec("/nonexistent/cluster.yaml"), FederationConfigError);
}

/// The message of the FederationConfigError that parsing `text` raises ("" when it parses).
std::string spec_error_of(const std::string& text) {
  try {
    (void)parse_federation_spec(text, "f.yaml");
  } catch (const FederationConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(FederationSpec, AJoinTimeoutUnderAMillisecondIsRefusedAtItsLine) {
  std::string text = kDiamond;
  text.insert(text.find("  federates:"), "  join_timeout: 900us\n");
  EXPECT_EQ(spec_error_of(text), "f.yaml:6: federation.join_timeout: must be at least 1ms");
  text.replace(text.find("900us"), 5, "1ms");
  EXPECT_EQ(spec_error_of(text), "");
}

TEST(FederationSpec, AnUnknownKeyIsRefusedAtItsLineInsteadOfLeavingADefault) {
  std::string text = kDiamond;
  text.replace(text.find("heartbeat_timeout"), 17, "heartbeat_timout");
  EXPECT_EQ(spec_error_of(text),
            "f.yaml:5: federation.heartbeat_timout: unknown key (expected coordinator, "
            "heartbeat_timeout, join_timeout, security, federates)");
  text = kDiamond;
  text.replace(text.find("{downstreams: [left, right]}"), 1, "{downstream: [x], ");
  EXPECT_EQ(spec_error_of(text),
            "f.yaml:7: federation.federates.source.downstream: unknown key (expected upstreams, "
            "downstreams)");
  text = kDiamond;
  text.replace(text.find("after: 1ms"), 5, "delay");
  EXPECT_EQ(spec_error_of(text),
            "f.yaml:10: federation.federates.sink.upstreams[0].delay: unknown key (expected id, "
            "after)");
  // A merge key, which yaml-cpp reads as a key like any other (under `federates`, a federate).
  text = kDiamond;
  text.replace(text.find("    sink:"), 0, "    <<: {}\n");
  EXPECT_EQ(spec_error_of(text),
            "f.yaml:10: federation.federates.<<: merge keys are not read in a federation section: "
            "write the keys out");
  // A federate id that is not a single value (a list as a key).
  text = kDiamond;
  text.replace(text.find("    sink:"), 0, "    ? [a, b]\n    : {}\n");
  EXPECT_EQ(spec_error_of(text), "f.yaml:10: federation.federates: expected a single value");
  // Keys outside the section are the program's own.
  EXPECT_EQ(spec_error_of(std::string(kDiamond) + "pipeline: {stages: 3}\n"), "");
}

TEST(FederationSpec, SecurityIsSpelledAsInAClusterFile) {
  const auto with_security = [](const std::string& security) {
    std::string text = kDiamond;
    text.replace(text.find("  federates:"), 0, "  security: " + security + "\n");
    return text;
  };
  EXPECT_EQ(parse_federation_spec(with_security("{curve: true, keys_dir: /k}")).keys_dir, "/k");
  EXPECT_FALSE(parse_federation_spec(with_security("{curve: false}")).keys_dir.has_value());
  for (const char* bad : {"{keys: /k}", "{curve: true}", "{curve: maybe, keys_dir: /k}", "x"}) {
    EXPECT_THROW((void)parse_federation_spec(with_security(bad)), FederationConfigError) << bad;
  }
}

TEST(FederationSpec, DurationsAcceptTheUsualUnits) {
  EXPECT_EQ(parse_duration_ns("0"), 0);
  EXPECT_EQ(parse_duration_ns("5ns"), 5);
  EXPECT_EQ(parse_duration_ns("10us"), 10'000);
  EXPECT_EQ(parse_duration_ns("250ms"), 250'000'000);
  EXPECT_EQ(parse_duration_ns("2s"), 2'000'000'000);
  EXPECT_THROW((void)parse_duration_ns("-1ms"), std::invalid_argument);
  EXPECT_THROW((void)parse_duration_ns("3h"), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::coordinator
