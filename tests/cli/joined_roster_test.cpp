// Tests of cli/launch/joined_roster.hpp: how the launcher learns of samplers that joined a running
// actor-mode cluster from the members its nodes report, and what it keeps of them.
#include "cli/launch/joined_roster.hpp"

#include <gtest/gtest.h>

namespace tagflow::cli {
namespace {

constexpr const char* kCluster = R"(cluster: roster
mode: actor
hosts:
  local: {address: 127.0.0.1}
nodes:
  sampler: {kind: sampler, replicas: 2, host: local, data_port: 7000, metrics_port: 9000}
  replay: {kind: replay, host: local, data_port: 7100, metrics_port: 9100}
  learner: {kind: learner, host: local, data_port: 7200, metrics_port: 9200}
connections:
  - {from: sampler.transitions, to: replay.transitions}
  - {from: replay.batches, to: learner.batches}
  - {from: learner.priorities, to: replay.priorities, after: 0}
stop: {env_steps: 1000}
)";

ProcessSample hub(const std::string& name, std::map<std::string, double> members) {
  ProbeResult probe;
  probe.answered = true;
  probe.members = std::move(members);
  return ProcessSample{name, "replay", probe};
}

ProcessSample joined_answer(const std::string& name, double steps, double episodes) {
  ProbeResult probe;
  probe.answered = true;
  probe.values = {{"tagflow_env_steps_total", steps}, {"tagflow_episodes_total", episodes}};
  return ProcessSample{name, "sampler", probe, true};
}

class JoinedRosterTest : public ::testing::Test {
 protected:
  JoinedRosterTest()
      : config_(cluster::parse_cluster_config(kCluster, "roster.yaml")),
        roster_(config_, cluster::scrape_targets(config_)) {}
  cluster::ClusterConfig config_;
  JoinedRoster roster_;
};

TEST_F(JoinedRosterTest, ASamplerOutsideTheFileListedByANodeIsProbedOnItsOwnEndpoint) {
  const auto targets = roster_.update_members(
      {hub("replay", {{"sampler-0", 1}, {"sampler-1", 1}, {"sampler-4", 1}})});
  ASSERT_EQ(targets.size(), 1U);  // sampler-0 and -1 are processes of the file
  EXPECT_EQ(targets[0].process, "sampler-4");
  EXPECT_EQ(targets[0].kind, "sampler");
  EXPECT_EQ(targets[0].address(), "127.0.0.1:9004");
  ASSERT_EQ(roster_.joined().size(), 1U);
  EXPECT_TRUE(roster_.joined()[0].in);
}

TEST_F(JoinedRosterTest, ASamplerThatLeftKeepsItsLastCountAndIsNoLongerProbed) {
  roster_.update_members({hub("replay", {{"sampler-2", 1}})});
  roster_.record(joined_answer("sampler-2", 800, 3));
  roster_.record(joined_answer("sampler-2", 1600, 7));
  EXPECT_TRUE(roster_.update_members({hub("replay", {{"sampler-2", 0}})}).empty());
  ASSERT_EQ(roster_.joined().size(), 1U);
  EXPECT_FALSE(roster_.joined()[0].in);
  EXPECT_EQ(roster_.joined()[0].env_steps, 1600);
  EXPECT_EQ(roster_.joined()[0].episodes, 7);
}

TEST_F(JoinedRosterTest, AMissedScrapeIsNoLeaveAndOneNodeStillListingItKeepsItIn) {
  roster_.update_members({hub("replay", {{"sampler-2", 1}})});
  // The node that lists it did not answer: nothing changes.
  EXPECT_EQ(roster_.update_members({ProcessSample{"replay", "replay", ProbeResult{}}}).size(), 1U);
  // One node already forgot it, another still has it: in.
  EXPECT_EQ(
      roster_
          .update_members({hub("replay", {{"sampler-2", 0}}), hub("learner", {{"sampler-2", 1}})})
          .size(),
      1U);
  EXPECT_TRUE(roster_.joined()[0].in);
}

TEST_F(JoinedRosterTest, ASamplerThatJoinsAgainAddsItsNewCountsToTheOldOnes) {
  roster_.update_members({hub("replay", {{"sampler-2", 1}})});
  roster_.record(joined_answer("sampler-2", 500, 2));
  roster_.update_members({hub("replay", {{"sampler-2", 0}})});
  roster_.update_members({hub("replay", {{"sampler-2", 1}})});
  roster_.record(joined_answer("sampler-2", 100, 1));  // a new process counts from 0
  EXPECT_EQ(roster_.joined()[0].env_steps, 600);
  EXPECT_EQ(roster_.joined()[0].episodes, 3);
}

TEST_F(JoinedRosterTest, NamesThatAreNoSamplerOfAGroupWithAMetricsPortAreIgnored) {
  const auto targets = roster_.update_members(
      {hub("replay", {{"learner-3", 1}, {"stranger", 1}, {"sampler-x", 1}, {"sampler-5", 0}})});
  EXPECT_TRUE(targets.empty());
  EXPECT_TRUE(roster_.joined().empty());              // sampler-5 was never seen in
  roster_.record(joined_answer("sampler-9", 10, 0));  // never listed: ignored
  EXPECT_TRUE(roster_.joined().empty());
}

}  // namespace
}  // namespace tagflow::cli
