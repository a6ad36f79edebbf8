#include "reactor_pipeline.hpp"

#include <thread>

namespace tagflow::coordinator::testing {
namespace {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::string tag_text(const reactors::Tag& tag) {
  return std::to_string(tag.time_ns()) + "." + std::to_string(tag.microstep());
}

reactors::EnvironmentConfig config_for(int events, unsigned workers = 2) {
  reactors::EnvironmentConfig config;
  config.workers = workers;
  config.start_time_ns = 0;
  config.timeout = reactor_pipeline_timeout(events);
  return config;
}

}  // namespace

// The heartbeat timeout is generous: under ThreadSanitizer on a loaded 2-core machine a thread
// can be starved for seconds, and failure detection is tested elsewhere (federation_failure_test).
std::string reactor_pipeline_config(const std::string& address) {
  return "federation:\n"
         "  coordinator: " +
         address +
         "\n"
         "  heartbeat_timeout: 10s\n"
         "  join_timeout: 20s\n"
         "  federates:\n"
         "    source: {downstreams: [mid, sink]}\n"
         "    mid:    {upstreams: [source], downstreams: [sink]}\n"
         "    sink:   {upstreams: [{id: mid, after: 1ms}, {id: source, after: 1ms}]}\n";
}

Jitter::Jitter(int max_us)
    : max_us_(max_us),
      random_(static_cast<std::mt19937::result_type>(
          std::chrono::steady_clock::now().time_since_epoch().count())) {}

void Jitter::operator()() {
  if (max_us_ > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(random_() % (max_us_ + 1)));
  }
}

Source::Source(std::string name, reactors::Environment& env, std::uint64_t seed, int max_sleep_us)
    : Reactor(std::move(name), env), seed_(seed), jitter_(max_sleep_us) {
  reaction("emit").triggers(tick).effects(out).body([this] {
    jitter_();
    const std::string value = std::to_string(mix(seed_ + count_++) % 1'000'000);
    trace += tag_text(tag()) + " " + value + "\n";
    out.set(payload(value));
  });
}

Mid::Mid(std::string name, reactors::Environment& env, int max_sleep_us, int stop_after)
    : Reactor(std::move(name), env), jitter_(max_sleep_us), stop_after_(stop_after) {
  reaction("transform").triggers(in).effects(out).body([this] {
    jitter_();
    if (++count_ == stop_after_) request_stop();
    const std::uint64_t x = std::stoull(text(in.get()));
    const std::string value = std::to_string((x * 3 + 1) % 1'000'003);
    trace += tag_text(tag()) + " " + text(in.get()) + "->" + value + "\n";
    out.set(payload(value));
  });
}

Sink::Sink(std::string name, reactors::Environment& env, int max_sleep_us)
    : Reactor(std::move(name), env), jitter_(max_sleep_us) {
  reaction("gather").triggers(direct, processed).body([this] {
    jitter_();
    trace += tag_text(tag()) + " direct=" + (direct.is_present() ? text(direct.get()) : "-") +
             " processed=" + (processed.is_present() ? text(processed.get()) : "-") + "\n";
  });
}

std::map<std::string, std::string> run_reactor_pipeline_in_one_process(int events,
                                                                       std::uint64_t seed) {
  reactors::Environment env(config_for(events));
  auto& source = env.add<Source>("source", seed, 0);
  auto& mid = env.add<Mid>("mid", 0);
  auto& sink = env.add<Sink>("sink", 0);
  env.connect(source.out, mid.in);
  env.connect(mid.out, sink.processed, std::chrono::milliseconds(1));
  env.connect(source.out, sink.direct, std::chrono::milliseconds(1));
  env.run();
  return {{"source", source.trace}, {"mid", mid.trace}, {"sink", sink.trace}};
}

FederateOutcome run_reactor_pipeline_federate(const FederationSpec& spec, const std::string& id,
                                              int events, std::uint64_t seed, int max_sleep_us,
                                              int mid_stop_after, ReactorFederateOptions options,
                                              unsigned workers) {
  ReactorFederate federate(spec, id, std::move(options));
  const WireTag start = federate.join();
  reactors::EnvironmentConfig config = config_for(events, workers);
  config.start_time_ns = start.time_ns();
  reactors::Environment env(config);
  std::string* trace = nullptr;
  if (id == "source") {
    auto& source = env.add<Source>("source", seed, max_sleep_us);
    auto& to_mid = env.add<NetworkSender>("to_mid", federate, "mid", 1);
    auto& to_sink = env.add<NetworkSender>("to_sink", federate, "sink", 1);
    env.connect(source.out, to_mid.in);
    env.connect(source.out, to_sink.in);
    trace = &source.trace;
  } else if (id == "mid") {
    auto& mid = env.add<Mid>("mid", max_sleep_us, mid_stop_after);
    auto& from_source = env.add<NetworkReceiver>("from_source", federate, "source", 1);
    auto& to_sink = env.add<NetworkSender>("to_sink", federate, "sink", 2);
    env.connect(from_source.out, mid.in);
    env.connect(mid.out, to_sink.in);
    trace = &mid.trace;
  } else {
    auto& sink = env.add<Sink>("sink", max_sleep_us);
    auto& from_source = env.add<NetworkReceiver>("from_source", federate, "source", 1);
    auto& from_mid = env.add<NetworkReceiver>("from_mid", federate, "mid", 2);
    env.connect(from_source.out, sink.direct);
    env.connect(from_mid.out, sink.processed);
    trace = &sink.trace;
  }
  federate.run(env);
  return {*trace, env.late_events(), federate.stop_proposal(), federate.granted_stop_tag()};
}

}  // namespace tagflow::coordinator::testing
