#include "nodes/inference/policy_bank.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "nodes/multi_agent/agent_input.hpp"
#include "nodes/node_params.hpp"
#include "rl/learning/stacked_mlp.hpp"
#include "rl/learning/torchscript_policy.hpp"

namespace tagflow::nodes {
namespace {

constexpr std::int64_t kProbeRows = 4;

/// Deterministic probe observations in [-1, 1].
std::vector<float> probe_inputs(int width) {
  std::vector<float> probe(static_cast<std::size_t>(kProbeRows * width));
  for (std::size_t i = 0; i < probe.size(); ++i) {
    probe[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i + 1)));
  }
  return probe;
}

[[noreturn]] void refuse_file(const cluster::PolicyConfig& policy, const std::string& why) {
  throw ParamError("policies." + policy.name + ".torchscript: " + why, "torchscript",
                   policy.torchscript_line);
}

/// Whether a stacked MLP of `spec` with `parameters` scores `probe` as `expected`.
bool same_scores(const learning::MlpSpec& spec, const std::vector<float>& parameters,
                 const std::vector<float>& probe, const std::vector<float>& expected) {
  learning::StackedMlp check(spec, 1, kProbeRows);
  check.load(0, parameters);
  const std::vector<float> got = check.scores(probe.data());
  bool same = true;
  for (std::size_t i = 0; i < got.size(); ++i) {
    same = same && std::fabs(got[i] - expected[i]) <= 1e-4F * (1.0F + std::fabs(expected[i]));
  }
  return same;
}

/// Loads `policy`'s TorchScript file and checks that it scores observations of `spec`'s width
/// with one score per action (ParamError otherwise). `stackable` gets its MLP parameters when a
/// stacked MLP computes the same scores (the module is then not needed).
std::unique_ptr<learning::TorchScriptPolicy> load_policy_file(const cluster::PolicyConfig& policy,
                                                              const learning::MlpSpec& spec,
                                                              std::vector<float>& stackable) {
  if (!std::filesystem::is_regular_file(policy.torchscript)) {
    refuse_file(policy, "no such file '" + policy.torchscript + "'");
  }
  std::unique_ptr<learning::TorchScriptPolicy> module;
  try {
    module = std::make_unique<learning::TorchScriptPolicy>(policy.torchscript);
  } catch (const learning::TorchScriptError& e) {
    refuse_file(policy, e.what());
  }
  const std::vector<float> probe = probe_inputs(spec.input_size);
  std::vector<float> expected;
  try {
    expected = module->scores(probe.data(), kProbeRows, spec.input_size);
  } catch (const std::exception& e) {
    // The interpreter's error is a traceback whose last line says what failed (for a first
    // layer of another width: "mat1 and mat2 shapes cannot be multiplied (4x1350 and 325x64)").
    std::string why = e.what();
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    why = why.substr(why.find_last_of('\n') == std::string::npos ? 0 : why.find_last_of('\n') + 1);
    refuse_file(policy, "'" + policy.torchscript +
                            "' does not run on inputs of the policy's width " +
                            std::to_string(spec.input_size) + ": " + why);
  }
  if (expected.size() != static_cast<std::size_t>(kProbeRows * spec.output_size)) {
    refuse_file(policy, "'" + policy.torchscript + "' returns " +
                            std::to_string(expected.size() / kProbeRows) +
                            " scores per observation, the env has " +
                            std::to_string(spec.output_size) + " actions");
  }
  std::vector<float> parameters = module->mlp_parameters(spec);
  if (!parameters.empty() && same_scores(spec, parameters, probe, expected)) {
    stackable = std::move(parameters);
  }
  return module;
}

}  // namespace

learning::MlpSpec PolicyBankConfig::network(int policy) const {
  const cluster::PolicyConfig& p = agents.policies.at(static_cast<std::size_t>(policy));
  const NodeParams params("policy '" + p.name + "'", {{"hidden", p.hidden}});
  return {agents.input_size(policy), params.get_sizes("hidden", {64}), agents.num_actions};
}

struct PolicyBank::Hosted {
  int policy = 0;
  learning::MlpSpec spec;
  std::uint64_t version = 0;
  bool any_version_next = false;  // on_new_weights_source() until the next load
  bool from_file = false;
  std::unique_ptr<learning::TorchScriptPolicy> module;  // set when not stackable
  int group = -1;
  std::size_t slot = 0;
  std::vector<std::pair<std::size_t, std::size_t>> rows;  // (request, row) of this tag
};

struct PolicyBank::Group {
  std::unique_ptr<learning::StackedMlp> net;
  std::vector<std::size_t> members;  // positions in hosted_, by slot
  std::vector<std::int64_t> actions;
};

/// Where a serve() call's answers go: one per valid request, by request index.
struct PolicyBank::Answers {
  std::vector<AgentActionsMessage>& messages;  // the first `used` are this call's answers
  std::vector<std::size_t>& index_of;  // request → its answer, SIZE_MAX for a rejected one
  std::size_t used = 0;

  void record(const Hosted& h, std::size_t k, std::size_t j, std::int64_t action) {
    AgentActionsMessage& answer = messages[index_of[k]];
    answer.actions[j] = action;
    answer.versions[j] = h.version;
  }
};

PolicyBank::PolicyBank(const PolicyBankConfig& config)
    : config_(config), position_(config.agents.policies.size(), -1) {
  FileParameters file_parameters;
  for (const int p : config_.hosted) {
    Hosted h = make_hosted(p, file_parameters);
    position_[static_cast<std::size_t>(p)] = static_cast<int>(hosted_.size());
    hosted_.push_back(std::move(h));
  }
  stack_groups(file_parameters);
}

PolicyBank::Hosted PolicyBank::make_hosted(int p, FileParameters& file_parameters) const {
  const cluster::PolicyConfig& policy = config_.agents.policies.at(static_cast<std::size_t>(p));
  Hosted h;
  h.policy = p;
  h.spec = config_.network(p);
  h.spec.validate();
  if (!policy.torchscript.empty()) {
    h.from_file = true;
    std::vector<float> stackable;
    h.module = load_policy_file(policy, h.spec, stackable);
    if (!stackable.empty()) {
      file_parameters[policy.name] = std::move(stackable);
      h.module.reset();
    }
  }
  return h;
}

// Rows per slot: the most agents any policy of that shape in the whole file serves (the same in
// every server, whatever it hosts).
void PolicyBank::stack_groups(const FileParameters& file_parameters) {
  std::map<std::string, std::vector<std::size_t>> by_shape;
  for (std::size_t i = 0; i < hosted_.size(); ++i) {
    if (!hosted_[i].module) by_shape[hosted_[i].spec.to_string()].push_back(i);
  }
  for (const auto& [shape, members] : by_shape) {
    std::int64_t rows = 1;
    for (std::size_t p = 0; p < config_.agents.policies.size(); ++p) {
      if (config_.network(static_cast<int>(p)).to_string() != shape) continue;
      rows = std::max<std::int64_t>(
          rows, static_cast<std::int64_t>(config_.agents.policies[p].agents.size()));
    }
    Group g;
    const learning::MlpSpec& spec = hosted_[members.front()].spec;
    g.net = std::make_unique<learning::StackedMlp>(spec, members.size(), rows);
    g.members = members;
    g.actions.resize(members.size() * static_cast<std::size_t>(rows));
    for (std::size_t slot = 0; slot < members.size(); ++slot) {
      Hosted& h = hosted_[members[slot]];
      h.group = static_cast<int>(groups_.size());
      h.slot = slot;
      const cluster::PolicyConfig& policy =
          config_.agents.policies[static_cast<std::size_t>(h.policy)];
      g.net->load(slot, h.from_file
                            ? file_parameters.at(policy.name)
                            : learning::init_mlp_parameters(
                                  spec, config_.seed + static_cast<std::uint64_t>(h.policy)));
    }
    groups_.push_back(std::move(g));
  }
}

PolicyBank::~PolicyBank() = default;
PolicyBank::PolicyBank(PolicyBank&&) noexcept = default;
PolicyBank& PolicyBank::operator=(PolicyBank&&) noexcept = default;

bool PolicyBank::hosts(int policy) const {
  return policy >= 0 && static_cast<std::size_t>(policy) < position_.size() &&
         position_[static_cast<std::size_t>(policy)] >= 0;
}

std::uint64_t PolicyBank::version(int policy) const {
  if (!hosts(policy)) throw std::invalid_argument("no hosted policy " + std::to_string(policy));
  return hosted_[static_cast<std::size_t>(position_[static_cast<std::size_t>(policy)])].version;
}

std::size_t PolicyBank::stacked_groups() const { return groups_.size(); }

std::size_t PolicyBank::unstacked() const {
  return static_cast<std::size_t>(std::count_if(
      hosted_.begin(), hosted_.end(), [](const Hosted& h) { return h.module != nullptr; }));
}

void PolicyBank::on_weights(int policy, const WeightsMessage& weights) {
  if (!hosts(policy)) {
    throw std::invalid_argument("weights for policy " + std::to_string(policy) +
                                ", which this server does not host");
  }
  Hosted& h = hosted_[static_cast<std::size_t>(position_[static_cast<std::size_t>(policy)])];
  if (h.from_file) {
    ++weights_ignored_;
    return;
  }
  if (weights.version <= h.version && !h.any_version_next) return;
  groups_[static_cast<std::size_t>(h.group)].net->load(h.slot, weights.values);
  h.version = weights.version;
  h.any_version_next = false;
}

void PolicyBank::on_new_weights_source(int policy) {
  if (!hosts(policy)) return;
  hosted_[static_cast<std::size_t>(position_[static_cast<std::size_t>(policy)])].any_version_next =
      true;
}

std::string PolicyBank::invalid(const AgentObservationsMessage& request) const {
  if (!consistent(request)) return "inconsistent row counts";
  if (request.observation_size != static_cast<std::uint32_t>(config_.agents.observation_size)) {
    return "observations of width " + std::to_string(request.observation_size) +
           ", the env's are " + std::to_string(config_.agents.observation_size);
  }
  for (std::size_t j = 0; j < request.rows(); ++j) {
    const std::uint32_t agent = request.agents[j];
    const auto policy = static_cast<int>(request.policies[j]);
    if (agent >= static_cast<std::uint32_t>(config_.agents.num_agents)) {
      return "no agent " + std::to_string(agent);
    }
    if (config_.agents.agent_policy[agent] != policy) {
      return "agent " + std::to_string(agent) + " is not served by policy " +
             std::to_string(policy);
    }
    if (!hosts(policy)) return "policy " + std::to_string(policy) + " is not hosted here";
  }
  return {};
}

std::int64_t PolicyBank::rows_per_pass(const learning::StackedMlp& net, std::size_t most) const {
  const std::int64_t fixed = net.rows_per_slot();
  if (config_.rows_per_pass <= fixed) return fixed;
  std::int64_t rows = fixed;  // the rows in use, rounded up to a power of two: few shapes
  while (rows < static_cast<std::int64_t>(most) && rows < config_.rows_per_pass) rows *= 2;
  return std::min(rows, config_.rows_per_pass);
}

std::optional<std::pair<std::size_t, std::size_t>> PolicyBank::in_place_row(
    const Group& g, std::int64_t rows, std::size_t width) const {
  if (rows != 1 || width != static_cast<std::size_t>(config_.agents.observation_size)) {
    return std::nullopt;
  }
  const Hosted& first = hosted_[g.members.front()];
  if (first.rows.size() != 1) return std::nullopt;
  const auto [k, j] = first.rows.front();
  for (std::size_t slot = 0; slot < g.members.size(); ++slot) {
    const Hosted& h = hosted_[g.members[slot]];
    if (h.rows.size() != 1 || h.rows.front() != std::make_pair(k, j + slot)) return std::nullopt;
  }
  return std::make_pair(k, j);
}

std::vector<AgentActionsMessage> PolicyBank::serve(
    const std::vector<AgentObservationsMessage>& requests, std::vector<std::size_t>* answered) {
  std::vector<const AgentObservationsMessage*> in_place;
  in_place.reserve(requests.size());
  for (const AgentObservationsMessage& r : requests) in_place.push_back(&r);
  return serve(in_place, answered);
}

std::vector<AgentActionsMessage> PolicyBank::serve(const Requests& requests,
                                                   std::vector<std::size_t>* answered,
                                                   const SparseRequests* sparse) {
  std::vector<AgentActionsMessage> answers;
  serve_into(requests, answers, answered, sparse);
  return answers;
}

void PolicyBank::serve_into(const Requests& requests, std::vector<AgentActionsMessage>& messages,
                            std::vector<std::size_t>* answered, const SparseRequests* sparse) {
  if (sparse != nullptr && sparse->size() != requests.size()) {
    throw std::invalid_argument("PolicyBank: " + std::to_string(sparse->size()) +
                                " sparse views for " + std::to_string(requests.size()) +
                                " requests");
  }
  index_of_.assign(requests.size(), SIZE_MAX);
  Answers answers{messages, index_of_};
  if (answered != nullptr) answered->reserve(answered->size() + requests.size());
  assign_rows(requests, answered, answers);
  messages.resize(answers.used);
  for (Group& g : groups_) serve_group(g, requests, sparse, answers);
  for (const Hosted& h : hosted_) {
    if (h.module && !h.rows.empty()) serve_unstacked(h, requests, answers);
  }
  for (const Hosted& h : hosted_) rows_served_ += h.rows.size();
}

void PolicyBank::assign_rows(const Requests& requests, std::vector<std::size_t>* answered,
                             Answers& answers) {
  for (Hosted& h : hosted_) h.rows.clear();
  for (std::size_t k = 0; k < requests.size(); ++k) {
    const AgentObservationsMessage& request = *requests[k];
    const std::string why = invalid(request);
    if (!why.empty()) {
      ++rejected_;
      last_rejection_ = why;
      continue;
    }
    answers.index_of[k] = answers.used;
    if (answered != nullptr) answered->push_back(k);
    if (answers.used == answers.messages.size()) answers.messages.emplace_back();
    AgentActionsMessage& answer = answers.messages[answers.used++];
    answer.source = request.source;
    answer.agents.assign(request.agents.begin(), request.agents.end());
    answer.policies.assign(request.policies.begin(), request.policies.end());
    answer.versions.assign(request.rows(), 0);
    answer.actions.assign(request.rows(), 0);
    for (std::size_t j = 0; j < request.rows(); ++j) {
      const int policy = static_cast<int>(request.policies[j]);
      hosted_[static_cast<std::size_t>(position_[static_cast<std::size_t>(policy)])]
          .rows.emplace_back(k, j);
    }
  }
}

const float* PolicyBank::observation(const AgentObservationsMessage& request, std::size_t j) const {
  return request.observations.data() +
         j * static_cast<std::size_t>(config_.agents.observation_size);
}

void PolicyBank::serve_group(Group& g, const Requests& requests, const SparseRequests* sparse,
                             Answers& answers) {
  const auto width = static_cast<std::size_t>(g.net->spec().input_size);
  std::size_t most = 0;
  for (const std::size_t m : g.members) most = std::max(most, hosted_[m].rows.size());
  const std::int64_t rows = rows_per_pass(*g.net, most);
  g.actions.resize(g.members.size() * static_cast<std::size_t>(rows));
  for (std::size_t from = 0; from < most; from += static_cast<std::size_t>(rows)) {
    const auto in_place = in_place_row(g, rows, width);
    if (in_place && sparse != nullptr && (*sparse)[in_place->first]) {
      // The request's non-zero floats as its frame lists them: no scan of its rows.
      g.net->act(*(*sparse)[in_place->first], in_place->second * width, g.actions.data());
      ++passes_from_frames_;
    } else if (in_place) {
      g.net->act(observation(*requests[in_place->first], in_place->second), rows, g.actions.data());
    } else {
      g.net->act(stacked_input(g, requests, rows, width, from), rows, g.actions.data());
    }
    ++stacked_passes_;
    for (std::size_t slot = 0; slot < g.members.size(); ++slot) {
      const Hosted& h = hosted_[g.members[slot]];
      for (std::size_t r = 0; r < static_cast<std::size_t>(rows) && from + r < h.rows.size(); ++r) {
        const auto [k, j] = h.rows[from + r];
        answers.record(h, k, j, g.actions[slot * static_cast<std::size_t>(rows) + r]);
      }
    }
  }
}

const float* PolicyBank::stacked_input(const Group& g, const Requests& requests, std::int64_t rows,
                                       std::size_t width, std::size_t from) {
  // Every row in use is written whole (write_agent_input); only padding rows are zeroed.
  input_.resize(g.members.size() * static_cast<std::size_t>(rows) * width);
  for (std::size_t slot = 0; slot < g.members.size(); ++slot) {
    const Hosted& h = hosted_[g.members[slot]];
    std::size_t r = 0;
    float* const slot_input = input_.data() + slot * static_cast<std::size_t>(rows) * width;
    for (; r < static_cast<std::size_t>(rows) && from + r < h.rows.size(); ++r) {
      const auto [k, j] = h.rows[from + r];
      write_agent_input(config_.agents, h.policy, static_cast<int>(requests[k]->agents[j]),
                        observation(*requests[k], j), slot_input + r * width);
    }
    if (r < static_cast<std::size_t>(rows)) {
      std::memset(slot_input + r * width, 0,
                  (static_cast<std::size_t>(rows) - r) * width * sizeof(float));
    }
  }
  return input_.data();
}

void PolicyBank::serve_unstacked(const Hosted& h, const Requests& requests, Answers& answers) {
  const auto width = static_cast<std::size_t>(h.spec.input_size);
  input_.resize(h.rows.size() * width);  // every row written whole below
  for (std::size_t r = 0; r < h.rows.size(); ++r) {
    const auto [k, j] = h.rows[r];
    write_agent_input(config_.agents, h.policy, static_cast<int>(requests[k]->agents[j]),
                      observation(*requests[k], j), input_.data() + r * width);
  }
  const std::vector<std::int64_t> actions =
      h.module->act(input_.data(), static_cast<std::int64_t>(h.rows.size()), h.spec.input_size);
  for (std::size_t r = 0; r < h.rows.size(); ++r) {
    answers.record(h, h.rows[r].first, h.rows[r].second, actions[r]);
  }
}

}  // namespace tagflow::nodes
