// The per-peer transport families in actor mode (actors/peer_traffic.hpp, counted in
// nodes/actor_binding_base.hpp): real sampler and replay actors count messages and payload bytes
// per peer in both directions, and what a binding refuses (unknown sender, inconsistent sizes,
// unknown port) is dropped and counted per peer and reason instead of being handled.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <sstream>
#include <thread>

#include "actors/actor_system_setup.hpp"
#include "monitoring/process_metrics.hpp"
#include "nodes/actor_interfaces.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replay/replay_actor.hpp"
#include "nodes/sampler/sampler_actor.hpp"
#include "tests/support/kind_families.hpp"

namespace tagflow::actors {
namespace {

// The value of the series of `family` whose labels hold every one of `labels` (e.g.
// `peer="replay"`); -1 when there is none.
double series_value(const std::string& text, const std::string& family,
                    const std::vector<std::string>& labels) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(family + "{", 0) != 0) continue;
    const std::string label_set = line.substr(0, line.rfind('}') + 1);
    bool all = true;
    for (const std::string& label : labels) all = all && label_set.find(label) != std::string::npos;
    if (all) return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return -1;
}

bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Takes `limit` minibatches from whoever offers them (one credit at a time), then stops the run.
class CountingLearner : public caf::event_based_actor {
 public:
  CountingLearner(caf::actor_config& config, std::size_t limit, std::promise<void>* finished)
      : caf::event_based_actor(config), limit_(limit), finished_(finished) {}

  caf::behavior make_behavior() override {
    return {
        [this](const Offer& offer) {
          send(caf::actor_cast<caf::actor>(current_sender()), Credit{offer.port, 1, "learner"});
        },
        [this](const nodes::SampleBatchMessage&) {
          auto from = caf::actor_cast<caf::actor>(current_sender());
          if (++received_ == limit_) {
            send(from, StopRun{"test"});
            finished_->set_value();
            quit();
            return;
          }
          send(from, Credit{"batches", 1, "learner"});
        },
        [](const StopRun&) {},
    };
  }

 private:
  std::size_t limit_;
  std::size_t received_ = 0;
  std::promise<void>* finished_;
};

struct PeerTrafficTest : ::testing::Test {
  PeerTrafficTest() : config(make_actor_system_config({false, 2})), system(*config) {}
  std::unique_ptr<caf::actor_system_config> config;
  caf::actor_system system;
  monitoring::ProcessMetrics replay_metrics{{"replay", "replay", "actor"},
                                            tagflow::test::families("replay")};
  nodes::NodeMetrics replay_node{replay_metrics};
};

TEST_F(PeerTrafficTest, SamplerAndReplayCountMessagesAndBytesPerPeerBothWays) {
  monitoring::ProcessMetrics sampler_metrics({"sampler-0", "sampler", "actor"},
                                             tagflow::test::families("sampler"));
  nodes::NodeMetrics sampler_node(sampler_metrics);
  nodes::ReplayConfig replay_config;
  replay_config.min_size = 64;
  replay_config.batch_size = 32;
  std::promise<void> done;
  auto finished = done.get_future();
  auto learner = system.spawn<CountingLearner>(std::size_t{10}, &done);
  auto replay_report = std::make_shared<nodes::ReplicaReport>("replay", "replay");
  auto replay =
      nodes::spawn_replay_actor(system, replay_config, {"replay", 0, replay_report, &replay_node});
  nodes::SamplerConfig sampler_config;
  sampler_config.num_envs = 8;
  sampler_config.local_policy = true;
  auto sampler = nodes::spawn_sampler_actor(
      system, sampler_config,
      {"sampler-0", -1, std::make_shared<nodes::ReplicaReport>("sampler-0", "sampler"),
       &sampler_node});
  caf::anon_send(sampler, connect_atom::value, std::string("transitions"), std::string("replay"),
                 caf::actor_cast<caf::actor>(replay));
  caf::anon_send(replay, connect_atom::value, std::string("batches"), std::string("learner"),
                 learner);
  finished.get();
  system.await_all_actors_done();

  const std::string sampler_text = sampler_metrics.text();
  const std::string replay_text = replay_metrics.text();
  const std::vector<std::string> to_replay{"peer=\"replay\""};
  const std::vector<std::string> to_sampler{"peer=\"sampler-0\""};
  const std::vector<std::string> to_learner{"peer=\"learner\""};
  // Sampler → replay: the Offer and the transitions; replay → sampler: the credits.
  EXPECT_GT(series_value(sampler_text, "tagflow_transport_messages_sent_total", to_replay), 1);
  EXPECT_GT(series_value(sampler_text, "tagflow_transport_messages_received_total", to_replay), 1);
  EXPECT_GT(series_value(sampler_text, "tagflow_transport_received_bytes_total", to_replay), 0);
  const double inserted = static_cast<double>(replay_report->count.load());
  ASSERT_GT(inserted, 0);
  // A CartPole transition carries 2 × 4 floats, an int64 action, a float reward, a byte.
  const double row_bytes = 2 * 4 * 4 + 8 + 4 + 1;
  const double sent_bytes =
      series_value(sampler_text, "tagflow_transport_sent_bytes_total", to_replay);
  const double received_bytes =
      series_value(replay_text, "tagflow_transport_received_bytes_total", to_sampler);
  EXPECT_GE(received_bytes, inserted * row_bytes);
  EXPECT_LE(received_bytes, sent_bytes);  // a stop may overtake the sampler's last messages
  EXPECT_GT(series_value(replay_text, "tagflow_transport_messages_received_total", to_sampler),
            inserted / 8 - 1);  // one message per 8-env step
  EXPECT_GT(series_value(replay_text, "tagflow_transport_messages_sent_total", to_sampler), 1);
  // Replay → learner: its Offer and at least the 10 minibatches the learner took.
  EXPECT_GE(series_value(replay_text, "tagflow_transport_messages_sent_total", to_learner), 11);
  EXPECT_GT(series_value(replay_text, "tagflow_transport_sent_bytes_total", to_learner),
            10 * 32 * row_bytes);
  EXPECT_GE(series_value(replay_text, "tagflow_transport_messages_received_total", to_learner), 10);
  EXPECT_EQ(series_value(replay_text, "tagflow_actor_members", to_sampler), 1);
  EXPECT_EQ(replay_text.find("tagflow_transport_invalid_messages_total{"), std::string::npos)
      << "a well-behaved run drops nothing";
}

TEST_F(PeerTrafficTest, ReplayDropsAndCountsWhatItRefusesPerPeerAndReason) {
  nodes::ReplayConfig replay_config;
  replay_config.min_size = 1000;  // nothing is sampled: only inserts
  auto report = std::make_shared<nodes::ReplicaReport>("replay", "replay");
  auto replay =
      nodes::spawn_replay_actor(system, replay_config, {"replay", 0, report, &replay_node});
  caf::scoped_actor self{system};
  nodes::TransitionsMessage good;
  good.observation_size = 2;
  good.observations = {0.5F, 0.25F, 0.5F, 0.25F};
  good.next_observations = {0.25F, 0.125F, 0.25F, 0.125F};
  good.actions = {0, 1};
  good.rewards = {1.0F, 1.0F};
  good.terminated = {0, 0};
  nodes::TransitionsMessage short_rewards = good;
  short_rewards.rewards.pop_back();

  self->send(replay, good);  // before any Offer: a stranger
  self->send(replay, Offer{"transitions", "stranger-1"});
  self->send(replay, short_rewards);
  self->send(replay, Credit{"bogus", 1, "stranger-1"});
  self->send(replay, good);  // the one message it handles
  const bool handled = eventually([&] { return report->count.load() == 2; });
  if (!handled) caf::anon_send(replay, StopRun{""});  // end it, or the system waits forever
  ASSERT_TRUE(handled) << "inserted " << report->count.load();
  const std::string text = replay_metrics.text();
  const std::string family = "tagflow_transport_invalid_messages_total";
  EXPECT_EQ(series_value(text, family, {"peer=\"unknown\"", "reason=\"unknown_peer\""}), 1);
  EXPECT_EQ(series_value(text, family, {"peer=\"stranger-1\"", "reason=\"size_mismatch\""}), 1);
  EXPECT_EQ(series_value(text, family, {"peer=\"stranger-1\"", "reason=\"unknown_port\""}), 1);
  // Counted as received: the Offer, the Credit (a control message, then refused) and the good one.
  EXPECT_EQ(
      series_value(text, "tagflow_transport_messages_received_total", {"peer=\"stranger-1\""}), 3);
  EXPECT_EQ(series_value(text, "tagflow_actor_members", {"peer=\"stranger-1\""}), 1);

  self->send(replay, Leave{"stranger-1"});
  EXPECT_TRUE(eventually([&] {
    return series_value(replay_metrics.text(), "tagflow_actor_members", {"peer=\"stranger-1\""}) ==
           0;
  }));
  caf::anon_send(replay, StopRun{""});  // the system waits for it (and for `self`) on exit
}

// A peer linked as a fixed one (here the replay's learner) that later offers what a joining
// sampler offers stays no member: tagflow_actor_members lists only the peers that may join.
TEST_F(PeerTrafficTest, AFixedPeerThatOffersLikeASamplerIsNoMember) {
  auto report = std::make_shared<nodes::ReplicaReport>("replay", "replay");
  auto replay =
      nodes::spawn_replay_actor(system, nodes::ReplayConfig{}, {"replay", 0, report, &replay_node});
  caf::scoped_actor self{system};
  caf::anon_send(replay, connect_atom::value, std::string("batches"), std::string("learner"),
                 caf::actor_cast<caf::actor>(self));
  self->send(replay, Offer{"transitions", "learner"});
  self->send(replay, Offer{"transitions", "sampler-7"});  // ... from the same actor: known, fixed
  caf::scoped_actor sampler{system};
  sampler->send(replay, Offer{"transitions", "sampler-0"});
  const bool joined = eventually([&] {
    return series_value(replay_metrics.text(), "tagflow_actor_members", {"peer=\"sampler-0\""}) ==
           1;
  });
  caf::anon_send(replay, StopRun{""});
  self->wait_for(replay);  // the replay quits before the metrics it writes go away
  ASSERT_TRUE(joined);
  const std::string text = replay_metrics.text();
  EXPECT_EQ(series_value(text, "tagflow_actor_members", {"peer=\"learner\""}), -1) << text;
  EXPECT_EQ(series_value(text, "tagflow_actor_members", {"peer=\"sampler-7\""}), -1) << text;
}

}  // namespace
}  // namespace tagflow::actors
