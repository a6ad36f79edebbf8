#include "nodes/replay/replay_server.hpp"

#include <cmath>
#include <stdexcept>

#include "rl/replay/table.hpp"

namespace tagflow::nodes {

ReplayConfig ReplayConfig::from_params(const NodeParams& params, std::uint64_t seed) {
  params.check_known({"capacity", "selector", "priority_exponent", "importance_beta", "min_size",
                      "samples_per_insert", "batch_size", "max_batches_per_call"});
  ReplayConfig c;
  c.capacity = static_cast<std::size_t>(params.get_int("capacity", 50000, 1));
  const std::string selector = params.get_string("selector", "uniform");
  if (selector != "uniform" && selector != "prioritized") {
    params.fail("selector", "expected uniform or prioritized, got '" + selector + "'");
  }
  c.prioritized = selector == "prioritized";
  c.priority_exponent = params.get_double("priority_exponent", c.priority_exponent, 0.0, 10.0);
  c.importance_beta = params.get_double("importance_beta", c.importance_beta, 0.0, 1.0);
  c.min_size = static_cast<std::size_t>(params.get_int("min_size", 1000, 1));
  c.samples_per_insert = params.get_double("samples_per_insert", 8.0, 1e-6, 1e6);
  c.batch_size = static_cast<std::size_t>(params.get_int("batch_size", 64, 1));
  c.max_batches_per_call = static_cast<std::size_t>(params.get_int("max_batches_per_call", 4, 1));
  if (c.min_size < c.batch_size) params.fail("min_size", "must be at least batch_size");
  if (c.capacity < c.min_size) params.fail("capacity", "must be at least min_size");
  c.seed = seed;
  return c;
}

ReplayServer::ReplayServer(const ReplayConfig& config) : config_(config) {}
ReplayServer::~ReplayServer() = default;

void ReplayServer::insert(const TransitionsMessage& t) {
  if (!table_) {
    replay::TableConfig tc;
    tc.spec.observation = {replay::DType::kFloat32,
                           {static_cast<std::int64_t>(t.observation_size)}};
    tc.spec.action = {replay::DType::kInt64, {}};
    tc.max_items = config_.capacity;
    tc.selector =
        config_.prioritized ? replay::SelectorKind::kPrioritized : replay::SelectorKind::kUniform;
    tc.priority_exponent = config_.priority_exponent;
    tc.rate_limiter = {1, 0.0, 0.0};  // the server limits by its own counts
    tc.seed = config_.seed;
    table_ = std::make_unique<replay::Table>(tc);
    observation_size_ = t.observation_size;
  }
  if (t.observation_size != observation_size_) {
    throw std::invalid_argument("replay: observation size " + std::to_string(t.observation_size) +
                                " differs from the table's " + std::to_string(observation_size_));
  }
  const std::size_t width = observation_size_ * sizeof(float);
  const auto* obs = reinterpret_cast<const std::uint8_t*>(t.observations.data());
  const auto* next = reinterpret_cast<const std::uint8_t*>(t.next_observations.data());
  for (std::size_t row = 0; row < t.rows(); ++row) {
    replay::Transition item{
        {obs + row * width, width},
        {reinterpret_cast<const std::uint8_t*>(&t.actions[row]), sizeof(std::int64_t)},
        t.rewards[row],
        t.terminated[row] != 0,
        {next + row * width, width}};
    // New items get priority 1 (or the table's running maximum would need tracking).
    if (table_->try_insert(item, 1.0) != replay::ReplayStatus::kOk) {
      throw std::logic_error("replay: insert refused");
    }
    ++inserts_;
    if (table_->size() >= config_.min_size) credits_ += config_.samples_per_insert;
  }
}

std::vector<SampleBatchMessage> ReplayServer::due_batches() {
  std::vector<SampleBatchMessage> out;
  if (!table_ || table_->size() < config_.min_size) return out;
  const auto batch = static_cast<double>(config_.batch_size);
  replay::SampledBatch sampled;
  while (credits_ >= batch && out.size() < config_.max_batches_per_call) {
    if (table_->try_sample({config_.batch_size, config_.importance_beta}, sampled) !=
        replay::ReplayStatus::kOk) {
      break;
    }
    credits_ -= batch;
    ++batches_;
    SampleBatchMessage m;
    m.observation_size = observation_size_;
    m.keys = sampled.keys;
    const std::size_t n = sampled.keys.size();
    const float* o = sampled.observations_as<float>();
    const float* no = sampled.next_observations_as<float>();
    m.observations.assign(o, o + n * observation_size_);
    m.next_observations.assign(no, no + n * observation_size_);
    const std::int64_t* a = sampled.actions_as<std::int64_t>();
    m.actions.assign(a, a + n);
    m.rewards = sampled.rewards;
    m.terminated = sampled.dones;
    m.importance_weights = sampled.weights;
    out.push_back(std::move(m));
  }
  return out;
}

void ReplayServer::update(const PriorityUpdateMessage& update) {
  if (!table_ || !config_.prioritized) return;
  std::vector<double> priorities(update.priorities.begin(), update.priorities.end());
  (void)table_->update_priorities(update.keys, priorities);
}

std::size_t ReplayServer::size() const { return table_ ? table_->size() : 0; }

}  // namespace tagflow::nodes
