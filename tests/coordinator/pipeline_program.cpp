#include "pipeline_program.hpp"

#include <chrono>
#include <thread>

#include "common/fnv1a.hpp"

namespace tagflow::coordinator::testing {
namespace {

constexpr std::int64_t kPeriodNs = 1'000'000;

std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::string tag_text(const WireTag& tag) {
  return std::to_string(tag.time_ns()) + "." + std::to_string(tag.microstep());
}

}  // namespace

std::string pipeline_config(const std::string& address, const std::string& heartbeat) {
  return "cluster: pipeline-test\n"
         "federation:\n"
         "  coordinator: " +
         address +
         "\n"
         "  heartbeat_timeout: " +
         heartbeat +
         "\n"
         "  join_timeout: 20s\n"
         "  federates:\n"
         "    source: {downstreams: [left, right]}\n"
         "    left:   {upstreams: [source], downstreams: [sink]}\n"
         "    right:  {upstreams: [{id: source, after: 0}], downstreams: [sink]}\n"
         "    sink:   {upstreams: [{id: left, after: 1ms}, {id: right, after: 1ms}]}\n";
}

PipelineProgram::PipelineProgram(std::string id, int events, std::uint64_t seed, int max_sleep_us)
    : id_(std::move(id)),
      events_(events),
      seed_(seed),
      max_sleep_us_(max_sleep_us),
      sleeps_(static_cast<std::mt19937::result_type>(
          std::chrono::steady_clock::now().time_since_epoch().count())) {}

WireTag PipelineProgram::next_local_event() {
  if (id_ != "source" || emitted_ >= events_) return transport::kForever;
  return {emitted_ * kPeriodNs, 0};
}

std::vector<std::pair<std::string, std::uint32_t>> PipelineProgram::input_ports() {
  if (id_ == "left" || id_ == "right") return {{"source", 1}};
  if (id_ == "sink") return {{"left", 1}, {"right", 2}};
  return {};
}

void PipelineProgram::react(const WireTag& tag, const std::vector<InputMessage>& inputs,
                            Outbox& out) {
  if (max_sleep_us_ > 0) {  // timing noise: must not change any result
    std::this_thread::sleep_for(std::chrono::microseconds(sleeps_() % (max_sleep_us_ + 1)));
  }
  trace_ += tag_text(tag) + " in";
  for (const InputMessage& input : inputs) {
    trace_ += " " + input.from + ":" + std::to_string(input.port) + "=" + input.bytes;
  }
  std::vector<std::pair<std::string, std::string>> sends;
  if (id_ == "source" && next_local_event() == tag) {
    const std::uint64_t value = mix(seed_ + static_cast<std::uint64_t>(emitted_)) % 1'000'000;
    ++emitted_;
    sends = {{"left", std::to_string(value)}, {"right", std::to_string(value)}};
  }
  for (const InputMessage& input : inputs) {
    const std::uint64_t x = std::stoull(input.bytes);
    if (id_ == "left") sends.emplace_back("sink", std::to_string((x * 3 + 1) % 1'000'003));
    if (id_ == "right") sends.emplace_back("sink", std::to_string(x ^ (x >> 7)));
  }
  trace_ += " out";
  for (auto& [to, value] : sends) {
    trace_ += " " + to + "=" + value;
    out.send(to, id_ == "right" ? 2 : 1, value);
  }
  trace_ += "\n";
}

std::map<std::string, std::string> run_in_one_process(const FederationSpec& spec, int events,
                                                      std::uint64_t seed) {
  std::vector<std::unique_ptr<PipelineProgram>> programs;
  std::vector<std::map<WireTag, std::vector<InputMessage>>> pending(spec.federates.size());
  for (const FederateSpec& f : spec.federates) {
    programs.push_back(std::make_unique<PipelineProgram>(f.id, events, seed, 0));
  }
  while (true) {
    std::size_t best = spec.federates.size();
    WireTag best_tag = transport::kForever;
    for (std::size_t i = 0; i < programs.size(); ++i) {
      WireTag next = programs[i]->next_local_event();
      if (!pending[i].empty()) next = std::min(next, pending[i].begin()->first);
      if (next < best_tag) {
        best_tag = next;
        best = i;
      }
    }
    if (best == spec.federates.size()) break;
    std::vector<InputMessage> inputs;
    if (auto at = pending[best].find(best_tag); at != pending[best].end()) {
      inputs = std::move(at->second);
      pending[best].erase(at);
    }
    std::stable_sort(inputs.begin(), inputs.end(), [](const auto& a, const auto& b) {
      return std::tie(a.from, a.port) < std::tie(b.from, b.port);
    });
    Outbox out;
    programs[best]->react(best_tag, inputs, out);
    const std::string& from = spec.federates[best].id;
    for (Outbox::Output& output : out.outputs()) {
      for (std::size_t d = 0; d < spec.federates.size(); ++d) {
        if (spec.federates[d].id != output.to) continue;
        for (const UpstreamLink& link : spec.federates[d].upstreams) {
          if (link.federate != from) continue;
          pending[d][transport::delayed(best_tag, link.delay)].push_back(
              {from, output.port, output.bytes});
        }
      }
    }
  }
  std::map<std::string, std::string> traces;
  for (std::size_t i = 0; i < programs.size(); ++i) {
    traces[spec.federates[i].id] = programs[i]->trace();
  }
  return traces;
}

std::uint64_t digest(const std::map<std::string, std::string>& traces) {
  std::uint64_t hash = kFnv1aOffset;
  for (const auto& [id, trace] : traces) hash = fnv1a64(id + "\n" + trace, hash);
  return hash;
}

}  // namespace tagflow::coordinator::testing
