// The sampler actor driven by a scoped actor in the replay's role: it offers its transitions,
// steps only under credit, and floods StopRun("env_steps") once its share is done.
#include "nodes/sampler/sampler_actor.hpp"

#include <gtest/gtest.h>

#include "actors/actor_system_setup.hpp"

namespace tagflow::nodes {
namespace {

TEST(SamplerActor, StepsUnderCreditUntilItsShareThenStopsTheRun) {
  auto system_config = actors::make_actor_system_config({false, 2});
  add_node_message_types(*system_config);
  caf::actor_system system(*system_config);
  SamplerConfig config;
  config.num_envs = 4;
  config.local_policy = true;
  config.seed = 8;
  auto report = std::make_shared<ReplicaReport>("sampler-0", "sampler");
  auto sampler = spawn_sampler_actor(system, config, {"sampler-0", 24, report});
  const auto timeout = std::chrono::seconds(10);
  std::size_t rows = 0;
  std::string stop_reason;
  {
    caf::scoped_actor replay{system};
    caf::anon_send(sampler, actors::connect_atom::value, std::string("transitions"),
                   std::string("replay"), caf::actor_cast<caf::actor>(replay));
    replay->receive([](const actors::Offer& o) { EXPECT_EQ(o.port, "transitions"); },
                    caf::after(timeout) >> [] { FAIL() << "no offer"; });
    // Two messages of credit: two rounds of 4 envs, then it waits.
    replay->send(sampler, actors::Credit{"transitions", 2, "replay"});
    for (int i = 0; i < 2; ++i) {
      replay->receive([&](const TransitionsMessage& t) { rows += t.rows(); },
                      caf::after(timeout) >> [] { FAIL() << "no transitions"; });
    }
    bool more = false;
    replay->receive([&](const TransitionsMessage&) { more = true; },
                    caf::after(std::chrono::milliseconds(200)) >> [] {});
    EXPECT_FALSE(more) << "sent without credit";
    EXPECT_EQ(rows, 8U);
    replay->send(sampler, actors::Credit{"transitions", 100, "replay"});
    while (stop_reason.empty()) {
      bool timed_out = false;
      replay->receive([&](const TransitionsMessage& t) { rows += t.rows(); },
                      [&](const actors::StopRun& s) { stop_reason = s.reason; },
                      caf::after(timeout) >> [&] { timed_out = true; });
      if (timed_out) break;
    }
  }
  system.await_all_actors_done();
  EXPECT_EQ(stop_reason, "env_steps");
  EXPECT_EQ(rows, 24U);  // its share: 6 rounds of 4 envs
  EXPECT_EQ(report->count.load(), 24);
}

}  // namespace
}  // namespace tagflow::nodes
