#include "actors/credit_ledger.hpp"

#include <gtest/gtest.h>

#include <caf/all.hpp>

#include "actors/actor_system_setup.hpp"

namespace tagflow::actors {
namespace {

class Idle : public caf::event_based_actor {
 public:
  using caf::event_based_actor::event_based_actor;
  caf::behavior make_behavior() override {
    return {[](int) {}};
  }
};

struct Actors : ::testing::Test {
  Actors() : config(make_actor_system_config({false, 1})), system(*config) {}
  ~Actors() override {
    for (const auto& a : spawned) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
  caf::actor spawn() {
    spawned.push_back(system.spawn<Idle>());
    return spawned.back();
  }
  std::unique_ptr<caf::actor_system_config> config;
  caf::actor_system system;
  std::vector<caf::actor> spawned;
};

TEST_F(Actors, LedgerSpendsOnlyGrantedCredits) {
  CreditLedger ledger("transitions");
  const caf::actor a = spawn();
  EXPECT_FALSE(ledger.try_spend(a.address())) << "unknown peer has no credit";
  EXPECT_TRUE(ledger.add_credit(a, 2));
  EXPECT_FALSE(ledger.add_credit(a, 1)) << "second grant is not a new downstream";
  EXPECT_EQ(ledger.credits(a.address()), 3U);
  EXPECT_TRUE(ledger.try_spend(a.address()));
  EXPECT_TRUE(ledger.try_spend(a.address()));
  EXPECT_TRUE(ledger.try_spend(a.address()));
  EXPECT_FALSE(ledger.try_spend(a.address()));
  EXPECT_EQ(ledger.credits(a.address()), 0U);
}

TEST_F(Actors, LedgerNeedsCreditAtEveryDownstream) {
  CreditLedger ledger("weights");
  EXPECT_FALSE(ledger.all_have_credit()) << "no downstream: nowhere to send";
  const caf::actor a = spawn();
  const caf::actor b = spawn();
  ledger.add_credit(a, 1);
  ledger.add_credit(b, 0);
  EXPECT_FALSE(ledger.all_have_credit());
  ledger.add_credit(b, 1);
  EXPECT_TRUE(ledger.all_have_credit());
  EXPECT_TRUE(ledger.remove(a.address()));
  EXPECT_FALSE(ledger.remove(a.address()));
  EXPECT_EQ(ledger.downstreams().size(), 1U);
  EXPECT_TRUE(ledger.all_have_credit());
}

}  // namespace
}  // namespace tagflow::actors
