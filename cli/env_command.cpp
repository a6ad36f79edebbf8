// `tagflow env list` and `tagflow env step --env ID` (rl/envs/README.md).
//
// `env step` reads JSON lines {"state": [...], "action": a} from stdin, where `state` is
// Gymnasium's `env.unwrapped.state`, steps a fresh copy of the env once from that state, and
// writes one JSON line per input line: {"next_state", "observation", "reward", "terminated",
// "truncated"}. The first bad line stops the command with an error naming the line; the lines
// before it have been answered.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "common/log_text.hpp"
#include "rl/envs/registry.hpp"

namespace tagflow::cli {
namespace {

using nlohmann::json;

/// Thrown for a bad input line; the message says what is wrong with it.
struct BadLine : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string space_summary(const envs::Space& s) { return s.to_string(); }

void list_envs() {
  std::cout << std::left << std::setw(26) << "id" << std::setw(8) << "agents" << std::setw(10)
            << "max steps" << std::setw(30) << "action space"
            << "observation space\n";
  for (const envs::EnvEntry& entry : envs::registered_envs()) {
    std::string agents = "1";
    std::string action;
    std::string observation;
    int max_steps = 0;
    if (entry.multi_agent) {
      const auto env = envs::make_multi_agent_env(entry.id);
      agents = std::to_string(env->spec().num_agents);
      action = space_summary(env->spec().action_space) + " each";
      observation = space_summary(env->spec().observation_space) + " each";
      max_steps = env->spec().max_episode_steps;
    } else {
      const auto env = envs::make_env(entry.id);
      action = space_summary(env->spec().action_space);
      observation = space_summary(env->spec().observation_space);
      max_steps = env->spec().max_episode_steps;
    }
    std::cout << std::setw(26) << entry.id << std::setw(8) << agents << std::setw(10)
              << (max_steps > 0 ? std::to_string(max_steps) : "-") << std::setw(30) << action
              << observation << "\n    " << entry.description << "\n";
  }
  std::cout << "\nEnvs with more than one agent run in a cluster file as a `multi_agent` node, "
               "with the agents mapped to policies\n(configs/README.md, \"Multi-agent "
               "clusters\"; configs/marl.yaml trains them, configs/marl-serve.yaml serves them).\n";
}

std::vector<double> read_state(const json& line, std::size_t expected) {
  if (!line.contains("state") || !line["state"].is_array()) {
    throw BadLine("needs \"state\": an array of numbers");
  }
  std::vector<double> state;
  for (const json& v : line["state"]) {
    if (!v.is_number()) throw BadLine("\"state\" must hold numbers only");
    state.push_back(v.get<double>());
    if (!std::isfinite(state.back())) throw BadLine("\"state\" values must be finite");
  }
  if (state.size() != expected) {
    throw BadLine("\"state\" needs " + std::to_string(expected) + " values, got " +
                  std::to_string(state.size()));
  }
  return state;
}

/// Reads "action" for the env's action space; `box` receives Box values.
envs::Action read_action(const json& line, const envs::Space& space, std::vector<float>& box) {
  if (!line.contains("action")) throw BadLine("needs \"action\"");
  const json& a = line["action"];
  if (space.kind == envs::Space::Kind::kDiscrete) {
    if (!a.is_number_integer())
      throw BadLine("\"action\" must be an integer for " + space.to_string());
    const auto index = a.get<std::int64_t>();
    if (index < 0 || index >= space.n) {
      throw BadLine("action " + std::to_string(index) + " is outside " + space.to_string());
    }
    return envs::Action::discrete(index);
  }
  box.clear();
  if (a.is_number()) {
    box.push_back(a.get<float>());
  } else if (a.is_array()) {
    for (const json& v : a) {
      if (!v.is_number()) throw BadLine("\"action\" must hold numbers only");
      box.push_back(v.get<float>());
    }
  } else {
    throw BadLine("\"action\" must be a number or an array of numbers");
  }
  if (box.size() != space.size()) {
    throw BadLine("\"action\" needs " + std::to_string(space.size()) + " values, got " +
                  std::to_string(box.size()));
  }
  for (float v : box) {
    if (!std::isfinite(v)) throw BadLine("\"action\" values must be finite");
  }
  return envs::Action::box(box);
}

json step_line(const std::string& id, const std::string& text) {
  json line;
  try {
    line = json::parse(text);
  } catch (const json::exception& e) {  // a syntax error, or a number beyond a double (1e400)
    throw BadLine("malformed JSON: " + json_error_text(e));
  }
  if (!line.is_object()) throw BadLine("expected a JSON object");
  const std::unique_ptr<envs::Env> env = envs::make_env(id);
  const std::vector<double> state = read_state(line, env->state().size());
  std::vector<float> box;
  const envs::Action action = read_action(line, env->spec().action_space, box);
  env->set_state(state);
  std::vector<float> observation(env->spec().observation_space.size());
  const envs::StepResult result = env->step(action, observation);
  json out;
  out["next_state"] = env->state();
  json obs = json::array();
  for (float v : observation) obs.push_back(static_cast<double>(v));
  out["observation"] = obs;
  out["reward"] = static_cast<double>(result.reward);
  out["terminated"] = result.terminated;
  out["truncated"] = result.truncated;
  return out;
}

/// Whether `env step` takes `entry`: a single-agent env whose state can be set.
bool steppable(const envs::EnvEntry& entry) {
  return !entry.multi_agent && !envs::make_env(entry.id)->state().empty();
}

/// The ids `env step` takes.
std::string steppable_envs() {
  std::string ids;
  for (const envs::EnvEntry& entry : envs::registered_envs()) {
    if (steppable(entry)) ids += (ids.empty() ? "" : ", ") + entry.id;
  }
  return ids;
}

void step_envs(const std::string& id) {
  const auto& known = envs::registered_envs();
  const auto entry =
      std::find_if(known.begin(), known.end(), [&](const envs::EnvEntry& e) { return e.id == id; });
  if (entry == known.end() || !steppable(*entry)) {
    // One refusal for an unknown id, a multi-agent env and an env without a settable state, naming
    // what it takes (the env list has more).
    fail_command("env step",
                 "'" + id + "' cannot be stepped from a state: env step takes " + steppable_envs() +
                     " (tagflow env list shows every env)",
                 kExitBadFile);
  }
  std::string text;
  for (long number = 1; std::getline(std::cin, text); ++number) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      std::cout << step_line(id, text).dump() << "\n" << std::flush;
    } catch (const BadLine& e) {
      fail_command("env step", "line " + std::to_string(number) + ": " + e.what(), kExitFailed);
    }
  }
}

}  // namespace

void add_env_command(CLI::App& app) {
  auto* command =
      app.add_subcommand("env", "Environments: list them, or step one from a given state");
  command->require_subcommand(1);
  auto* list = command->add_subcommand("list", "List every registered environment and its spaces");
  list->callback(list_envs);
  auto* step = command->add_subcommand(
      "step",
      "Read JSON lines {\"state\": [...], \"action\": a} on stdin (state = Gymnasium's "
      "env.unwrapped.state), step once from each, write {\"next_state\", \"observation\", "
      "\"reward\", \"terminated\", \"truncated\"} lines. For checking dynamics against Gymnasium.");
  auto id = std::make_shared<std::string>();
  step->add_option("--env", *id, "Environment id, e.g. CartPole-v1")->required();
  step->callback([id] { step_envs(*id); });
}

}  // namespace tagflow::cli
