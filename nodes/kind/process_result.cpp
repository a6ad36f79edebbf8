#include "nodes/kind/process_result.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace tagflow::nodes {
namespace {

using Json = nlohmann::ordered_json;

const Json& field(const Json& object, const char* name, const std::string& where) {
  if (!object.is_object() || !object.contains(name)) {
    throw std::invalid_argument("process result: " + where + " has no field '" + name + "'");
  }
  return object.at(name);
}

template <typename T>
T get(const Json& object, const char* name, const std::string& where) {
  const Json& value = field(object, name, where);
  try {
    return value.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument("process result: " + where + "." + name + " has the wrong type");
  }
}

Json replica_json(const ReplicaResult& r) {
  Json j;
  j["name"] = r.name;
  j["kind"] = r.kind;
  j["unit"] = r.unit;
  j["count"] = r.count;
  const std::size_t listed = std::min(r.episode_returns.size(), kResultEpisodeReturns);
  j["episode_returns"] = std::vector<double>(
      r.episode_returns.end() - static_cast<std::ptrdiff_t>(listed), r.episode_returns.end());
  j["episodes"] = r.episodes.value_or(static_cast<std::int64_t>(r.episode_returns.size()));
  j["evaluations"] = r.evaluations;
  j["target_reached"] = r.target_reached;
  j["updates"] = r.updates;
  j["weights_version"] = r.weights_version;
  j["final_weights_hash"] = r.final_weights_hash ? Json(hex64(*r.final_weights_hash)) : Json();
  j["mean_return"] = r.mean_return ? Json(*r.mean_return) : Json();
  if (r.kind == "multi_agent") j["collisions"] = r.collisions;
  if (r.multi_agent) {
    j["multi_agent"] = Json::parse(multi_agent_json(*r.multi_agent));
  }
  if (r.joint_step_p50 && r.joint_step_p99) {
    j["joint_step_seconds"] = {{"p50", *r.joint_step_p50}, {"p99", *r.joint_step_p99}};
  }
  if (!r.policy.empty()) j["policy"] = r.policy;
  if (!r.policy_file.empty()) j["policy_file"] = r.policy_file;
  if (r.outside_transitions) j["outside_transitions"] = *r.outside_transitions;
  if (r.resent_in_transit) j["resent_in_transit"] = *r.resent_in_transit;
  Json channels = Json::array();
  for (const ChannelResult& c : r.channels) {
    channels.push_back(
        {{"port", c.port}, {"channel", c.channel}, {"count", c.count}, {"hash", hex64(c.hash)}});
  }
  j["channels"] = channels;
  if (!r.unanswered_at_loss.empty()) j["unanswered_at_loss"] = r.unanswered_at_loss;
  return j;
}

ReplicaResult replica_from_json(const Json& j, const std::string& where) {
  ReplicaResult r;
  r.name = get<std::string>(j, "name", where);
  const std::string here = where + "(" + r.name + ")";
  r.kind = get<std::string>(j, "kind", here);
  r.unit = get<std::string>(j, "unit", here);
  r.count = get<std::int64_t>(j, "count", here);
  r.episode_returns = get<std::vector<double>>(j, "episode_returns", here);
  r.episodes = j.contains("episodes") ? get<std::int64_t>(j, "episodes", here)
                                      : static_cast<std::int64_t>(r.episode_returns.size());
  r.evaluations = get<std::vector<double>>(j, "evaluations", here);
  r.target_reached = get<bool>(j, "target_reached", here);
  r.updates = get<std::int64_t>(j, "updates", here);
  r.weights_version = get<std::uint64_t>(j, "weights_version", here);
  const Json& weights = field(j, "final_weights_hash", here);
  if (!weights.is_null())
    r.final_weights_hash = parse_hex64(get<std::string>(j, "final_weights_hash", here));
  const Json& mean = field(j, "mean_return", here);
  if (!mean.is_null()) r.mean_return = get<double>(j, "mean_return", here);
  // Optional fields (multi-agent clusters only).
  if (j.contains("collisions")) r.collisions = get<std::int64_t>(j, "collisions", here);
  if (j.contains("multi_agent")) {
    const Json& m = j.at("multi_agent");
    const std::string at = here + ".multi_agent";
    r.multi_agent = MultiAgentFigures{get<double>(m, "mean_return", at),
                                      get<double>(m, "collisions_per_episode", at),
                                      get<double>(m, "random_return", at),
                                      get<double>(m, "random_collisions_per_episode", at),
                                      get<int>(m, "episodes", at),
                                      0.0,
                                      0.0};
    if (m.contains("success_rate")) {
      r.multi_agent->success_rate = get<double>(m, "success_rate", at);
      r.multi_agent->random_success_rate = get<double>(m, "random_success_rate", at);
    }
    if (m.contains("epsilon")) r.multi_agent->epsilon = get<double>(m, "epsilon", at);
    // Results from before these keys: the evaluation counted as the final one.
    if (m.contains("evaluated_at")) {
      r.multi_agent->evaluated_at = get<std::int64_t>(m, "evaluated_at", at);
      r.multi_agent->final_evaluation = get<bool>(m, "final_evaluation", at);
    }
  }
  if (j.contains("joint_step_seconds")) {
    const std::string at = here + ".joint_step_seconds";
    r.joint_step_p50 = get<double>(j.at("joint_step_seconds"), "p50", at);
    r.joint_step_p99 = get<double>(j.at("joint_step_seconds"), "p99", at);
  }
  if (j.contains("policy")) r.policy = get<std::string>(j, "policy", here);
  if (j.contains("policy_file")) r.policy_file = get<std::string>(j, "policy_file", here);
  if (j.contains("unanswered_at_loss")) {
    r.unanswered_at_loss =
        get<std::map<std::string, std::vector<std::int64_t>>>(j, "unanswered_at_loss", here);
  }
  if (j.contains("outside_transitions")) {
    r.outside_transitions = get<std::int64_t>(j, "outside_transitions", here);
  }
  if (j.contains("resent_in_transit")) {
    r.resent_in_transit = get<std::int64_t>(j, "resent_in_transit", here);
  }
  const Json& channels = field(j, "channels", here);
  if (!channels.is_array())
    throw std::invalid_argument("process result: " + here + ".channels is not a list");
  for (const Json& c : channels) {
    ChannelResult channel;
    channel.port = get<std::string>(c, "port", here + ".channels");
    channel.channel = get<std::size_t>(c, "channel", here + ".channels");
    channel.count = get<std::uint64_t>(c, "count", here + ".channels");
    channel.hash = parse_hex64(get<std::string>(c, "hash", here + ".channels"));
    r.channels.push_back(std::move(channel));
  }
  return r;
}

}  // namespace

const ChannelResult* ReplicaResult::find_channel(const std::string& port,
                                                 std::size_t channel) const {
  for (const ChannelResult& c : channels) {
    if (c.port == port && c.channel == channel) return &c;
  }
  return nullptr;
}

void set_joint_step_latency(ReplicaResult& result, std::vector<float> intervals) {
  if (intervals.empty()) return;
  const auto quantile = [&](double q) {
    const auto k = static_cast<std::size_t>(q * static_cast<double>(intervals.size() - 1));
    std::nth_element(intervals.begin(), intervals.begin() + static_cast<std::ptrdiff_t>(k),
                     intervals.end());
    return static_cast<double>(intervals[k]);
  };
  result.joint_step_p50 = quantile(0.5);
  result.joint_step_p99 = quantile(0.99);
}

void set_episode_returns(ReplicaResult& result, const EpisodeReturns& returns) {
  result.episode_returns = returns.kept();
  result.episodes = returns.count();
}

std::string hex64(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::uint64_t parse_hex64(const std::string& text) {
  if (text.size() != 16) throw std::invalid_argument("expected 16 hex digits, got '" + text + "'");
  std::uint64_t value = 0;
  for (const char c : text) {
    int digit = 0;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      throw std::invalid_argument("expected 16 hex digits, got '" + text + "'");
    }
    value = (value << 4) | static_cast<std::uint64_t>(digit);
  }
  return value;
}

std::string ProcessResult::to_json() const {
  Json j;
  j["process"] = process;
  j["mode"] = mode;
  j["seconds"] = seconds;
  j["stop_reason"] = stop_reason;
  j["cutoff"] =
      cutoff ? Json{{"time_ns", cutoff->time_ns()}, {"microstep", cutoff->microstep()}} : Json();
  Json list = Json::array();
  for (const ReplicaResult& r : replicas) list.push_back(replica_json(r));
  j["replicas"] = list;
  if (numerics) j["numerics"] = Json::parse(numerics_json(*numerics));
  return j.dump(2);
}

std::string numerics_json(const numerics::Report& report) {
  Json j;
  j["mode"] = report.mode;
  j["portable"] = report.portable;
  j["cpu"] = report.cpu;
  j["libm"] = report.libm;
  j["blas"] = report.blas;
  j["blas_core"] = report.blas_core;
  j["aten_capability"] = report.aten_capability;
  j["kernels"] = numerics::describe(report);
  return j.dump();
}

std::string multi_agent_json(const MultiAgentFigures& f) {
  const Json j = {{"mean_return", f.mean_return},
                  {"collisions_per_episode", f.collisions_per_episode},
                  {"random_return", f.random_return},
                  {"random_collisions_per_episode", f.random_collisions_per_episode},
                  {"episodes", f.episodes},
                  {"success_rate", f.success_rate},
                  {"random_success_rate", f.random_success_rate},
                  {"epsilon", f.epsilon},
                  {"evaluated_at", f.evaluated_at},
                  {"final_evaluation", f.final_evaluation}};
  return j.dump();
}

numerics::Report numerics_from_json(const std::string& text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("numerics: not JSON (") + e.what() + ")");
  }
  numerics::Report report;
  const std::string where = "numerics";
  report.mode = get<std::string>(j, "mode", where);
  report.portable = get<bool>(j, "portable", where);
  report.cpu = get<std::string>(j, "cpu", where);
  report.libm = get<std::string>(j, "libm", where);
  report.blas = get<std::string>(j, "blas", where);
  report.blas_core = get<std::string>(j, "blas_core", where);
  report.aten_capability = get<std::string>(j, "aten_capability", where);
  return report;
}

ProcessResult ProcessResult::from_json(const std::string& text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("process result: not JSON (") + e.what() + ")");
  }
  ProcessResult result;
  result.process = get<std::string>(j, "process", "result");
  const std::string where = "result(" + result.process + ")";
  result.mode = get<std::string>(j, "mode", where);
  result.seconds = get<double>(j, "seconds", where);
  result.stop_reason = get<std::string>(j, "stop_reason", where);
  const Json& cutoff = field(j, "cutoff", where);
  if (!cutoff.is_null()) {
    result.cutoff = reactors::Tag(get<std::int64_t>(cutoff, "time_ns", where + ".cutoff"),
                                  get<std::uint32_t>(cutoff, "microstep", where + ".cutoff"));
  }
  const Json& replicas = field(j, "replicas", where);
  if (!replicas.is_array())
    throw std::invalid_argument("process result: " + where + ".replicas is not a list");
  for (const Json& r : replicas)
    result.replicas.push_back(replica_from_json(r, where + ".replicas"));
  if (j.contains("numerics")) result.numerics = numerics_from_json(j.at("numerics").dump());
  return result;
}

}  // namespace tagflow::nodes
