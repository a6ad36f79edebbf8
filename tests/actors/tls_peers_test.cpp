// Actor mode's TLS peers (actors/tls_peers.hpp), with real CAF actor systems over loopback TLS:
// a dial bound to a certificate name reaches a peer holding that name and is refused by one
// holding another member's certificate; every refused handshake — a wrong name, another CA's
// certificate, a client without TLS — is counted, and in a process's metrics while a
// RefusedHandshakeMetrics lives.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "actors/actor_credentials.hpp"
#include "actors/actor_system_setup.hpp"
#include "actors/tls_peers.hpp"
#include "monitoring/process_metrics.hpp"
#include "tests/support/kind_families.hpp"

namespace tagflow::actors {
namespace {

namespace fs = std::filesystem;

/// One actor system of this process: TLS with `credentials`, or plain.
struct Endpoint {
  explicit Endpoint(std::optional<ActorCredentials> credentials)
      : config(make_actor_system_config({true, 1}, credentials)), system(*config) {}
  std::unique_ptr<caf::actor_system_config> config;
  caf::actor_system system;
};

/// Value of the series `family{...reason="refused_handshake"...}` in `text`, or -1.
double refused_series(const std::string& text) {
  const std::string family = "tagflow_transport_invalid_messages_total{";
  for (std::size_t at = text.find(family); at != std::string::npos;
       at = text.find(family, at + 1)) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    if (line.find("reason=\"refused_handshake\"") == std::string::npos) continue;
    return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return -1;
}

class TlsPeers : public ::testing::Test {
 protected:
  void SetUp() override {
    keys_ = fs::path(::testing::TempDir()) / ("tls_peers_" + std::to_string(::getpid()));
    foreign_ = keys_ / "foreign";
    mint_actor_credentials(keys_, {"replay", "learner", "inference"});
    mint_actor_credentials(foreign_, {"learner"});
    server_.emplace(actor_credentials(keys_, "replay"));
    echo_ = server_->system.spawn([]() -> caf::behavior { return {[](int x) { return x; }}; });
    auto published = publish_actor(server_->system, echo_, 0, "127.0.0.1");
    ASSERT_TRUE(published) << server_->system.render(published.error());
    port_ = *published;
  }
  void TearDown() override {
    caf::anon_send_exit(echo_, caf::exit_reason::user_shutdown);
    server_.reset();
    fs::remove_all(keys_);
  }

  /// Dials the server from a fresh system with `credentials`, requiring `name` (may be empty).
  bool dial(std::optional<ActorCredentials> credentials, const std::string& name) {
    Endpoint client(std::move(credentials));
    return static_cast<bool>(remote_actor_at(client.system, "127.0.0.1", port_, name));
  }

  fs::path keys_;
  fs::path foreign_;
  std::optional<Endpoint> server_;
  caf::actor echo_;
  std::uint16_t port_ = 0;
};

TEST_F(TlsPeers, ADialBoundToANameReachesOnlyThePeerHoldingIt) {
  const std::uint64_t before = refused_handshakes();
  EXPECT_TRUE(dial(actor_credentials(keys_, "learner"), "replay"));
  EXPECT_EQ(refused_handshakes(), before) << "a member's dial to the right name was refused";
  EXPECT_FALSE(dial(actor_credentials(keys_, "learner"), "inference"))
      << "the replay's certificate passed for the inference's";
  EXPECT_GT(refused_handshakes(), before);
}

TEST_F(TlsPeers, EveryRefusedHandshakeIsCountedAndInTheMetricsWhileTheyAreWatched) {
  monitoring::ProcessMetrics metrics({"replay", "replay", "actor"},
                                     tagflow::test::families("replay"));
  {
    const RefusedHandshakeMetrics watched(metrics, [](const std::string&) {});
    const std::uint64_t before = refused_handshakes();
    EXPECT_FALSE(dial(actor_credentials(foreign_, "learner"), "")) << "another CA got through";
    const std::uint64_t after_foreign = refused_handshakes();
    EXPECT_GT(after_foreign, before);
    EXPECT_FALSE(dial(std::nullopt, "")) << "a client without TLS got through";
    EXPECT_GT(refused_handshakes(), after_foreign);
    // The other end of a dial may count its side a moment after the dial returned: read the
    // series first, so it cannot be ahead of the count.
    const double series = refused_series(metrics.text());
    EXPECT_GE(series, 2);
    EXPECT_LE(series, static_cast<double>(refused_handshakes() - before));
  }
  const double counted = refused_series(metrics.text());
  EXPECT_FALSE(dial(std::nullopt, ""));
  EXPECT_EQ(refused_series(metrics.text()), counted) << "counted after the watch ended";
}

}  // namespace
}  // namespace tagflow::actors
