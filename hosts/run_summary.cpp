#include "hosts/run_summary.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace tagflow::hosts {

std::string RunSummary::digest_hex() const {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(digest));
  return text;
}

std::string RunSummary::numerics_line() const {
  return numerics ? "numerics: " + numerics::describe(*numerics) : std::string();
}

std::vector<std::string> RunSummary::detail_lines() const {
  std::vector<std::string> lines;
  if (multi_agent) {
    const MultiAgentFigures& f = *multi_agent;
    // The evaluated policy: greedy, or acting with the node's eval_epsilon.
    char policy[32] = "greedy";
    if (f.epsilon > 0.0) std::snprintf(policy, sizeof policy, "epsilon %g", f.epsilon);
    char text[288];
    std::snprintf(text, sizeof text,
                  "multi_agent: %s mean return %.2f, success rate %.2f, %.2f collisions per "
                  "episode; random play %.2f, %.2f, %.2f (%d episodes)",
                  policy, f.mean_return, f.success_rate, f.collisions_per_episode, f.random_return,
                  f.random_success_rate, f.random_collisions_per_episode, f.episodes);
    lines.emplace_back(text);
    if (!f.final_evaluation) {
      lines.push_back(
          "multi_agent: the run stopped before its final evaluation: these are of "
          "the evaluation at " +
          std::to_string(f.evaluated_at) + " joint steps");
    }
  }
  if (numerics) lines.push_back(numerics_line());
  return lines;
}

std::string RunSummary::to_json() const {
  nlohmann::ordered_json j;
  j["mode"] = mode;
  j["placement"] = placement;
  j["security"] = security;
  j["stop_reason"] = stop_reason;
  j["mean_return"] = mean_return;
  j["env_steps"] = env_steps;
  j["seconds"] = seconds;
  j["updates"] = updates;
  j["weights_version"] = weights_version;
  j["digest"] = digest_hex();
  j["digest_reproducible"] = digest_reproducible;
  j["target_reached"] = target_reached;
  if (numerics) j["numerics"] = nlohmann::ordered_json::parse(nodes::numerics_json(*numerics));
  j["evaluations"] = evaluations;
  if (!evaluators.empty()) {
    nlohmann::ordered_json list = nlohmann::ordered_json::object();
    for (const EvaluatorFigures& e : evaluators) {
      nlohmann::ordered_json one;
      one["evaluations"] = e.evaluations;
      one["mean_return"] = e.evaluations.empty() ? nlohmann::ordered_json()
                                                 : nlohmann::ordered_json(e.evaluations.back());
      one["target_reached"] = e.target_reached;
      list[e.name] = one;
    }
    j["evaluators"] = list;
  }
  if (multi_agent) {
    j["multi_agent"] = nlohmann::ordered_json::parse(nodes::multi_agent_json(*multi_agent));
  }
  if (joint_step_p50 && joint_step_p99) {
    j["joint_step_seconds"] = {{"p50", *joint_step_p50}, {"p99", *joint_step_p99}};
  }
  if (outside_transitions) j["outside_transitions"] = *outside_transitions;
  if (resent_in_transit) j["resent_in_transit"] = *resent_in_transit;
  if (!policy_files.empty()) {
    nlohmann::ordered_json files = nlohmann::ordered_json::object();
    for (const auto& [policy, path] : policy_files) files[policy] = path;
    j["policies"] = files;
  }
  nlohmann::ordered_json per_node = nlohmann::ordered_json::object();
  for (const NodeThroughput& n : nodes) {
    per_node[n.name] = {
        {"kind", n.kind}, {"unit", n.unit}, {"count", n.count}, {"per_second", n.per_second}};
  }
  j["nodes"] = per_node;
  if (!silences.empty()) {
    nlohmann::ordered_json by_federate = nlohmann::ordered_json::object();
    for (const auto& [federate, silence] : silences) {
      by_federate[federate] = {{"count", silence.first}, {"seconds", silence.second}};
    }
    j["silences"] = by_federate;
  }
  if (!restarts.empty()) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const RestartRecord& r : restarts) {
      nlohmann::ordered_json one;
      one["process"] = r.process;
      one["how"] = r.how;
      if (r.resumed_from) {
        one["resumed_from_ns"] = *r.resumed_from;
      } else {
        one["resumed_from_ns"] = nullptr;
      }
      one["lost_seconds"] = r.lost_seconds;
      if (!r.replicas.empty()) {
        nlohmann::ordered_json replicas = nlohmann::ordered_json::array();
        for (const ReplicaRestart& x : r.replicas) {
          nlohmann::ordered_json entry;
          entry["replica"] = x.replica;
          entry["unit"] = x.unit;
          entry["checkpoint"] = x.checkpoint ? nlohmann::ordered_json(*x.checkpoint) : nullptr;
          entry["checkpoint_count"] = x.checkpoint_count;
          entry["since_checkpoint"] =
              x.since_checkpoint ? nlohmann::ordered_json(*x.since_checkpoint) : nullptr;
          replicas.push_back(entry);
        }
        one["replicas"] = replicas;
        one["messages_in_flight"] =
            r.messages_in_flight ? nlohmann::ordered_json(*r.messages_in_flight) : nullptr;
      }
      list.push_back(one);
    }
    j["restarts"] = list;
    j["wall_seconds"] = wall_seconds;
  }
  return j.dump(2);
}

}  // namespace tagflow::hosts
