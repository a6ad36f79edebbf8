#include "nodes/gateway/service_gateway.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include <zmq.hpp>

#include "monitoring/process_metrics.hpp"
#include "nodes/gateway/episode_experience.hpp"
#include "nodes/gateway/gateway_metrics.hpp"
#include "nodes/gateway/gateway_protocol.hpp"
#include "transport/zap_authenticator.hpp"

namespace tagflow::gateway {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxEnvelopeFrames = 3;  // routing id, optional REQ delimiter, one spare
constexpr std::size_t kMaxEpisodes = 1024;
constexpr std::size_t kMaxLoggedRefusals = 4096;
constexpr const char* kNoPolicy = "none";
// A max_wait beyond this is taken as this (a deadline must not overflow the clock).
constexpr std::chrono::nanoseconds kLongestWait = std::chrono::hours(24);

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string hex(const zmq::message_t& id) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  const auto* bytes = static_cast<const unsigned char*>(id.data());
  for (std::size_t i = 0; i < id.size() && i < 16; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

/// The families of one served policy (null pointers without metrics).
struct PolicySeries {
  prometheus::Counter* requests = nullptr;
  prometheus::Histogram* queue = nullptr;
  prometheus::Histogram* compute = nullptr;
  prometheus::Histogram* total = nullptr;
  prometheus::Histogram* batch = nullptr;
  prometheus::Gauge* in_flight = nullptr;
};

struct Pending {
  std::vector<zmq::message_t> envelope;
  std::string client;
  GatewayRequest request;
  nodes::AgentObservationsMessage rows;
  std::map<int, std::size_t> policy_rows;  // policy → rows of this request
  Clock::time_point arrival;
  Clock::time_point deadline;                   // arrival + the smallest max_wait of its policies
  std::optional<std::uint64_t> logged_episode;  // the logged episode it names
};

struct Episode {
  std::uint64_t steps = 0;
  std::map<std::uint32_t, double> returns;
  std::unique_ptr<EpisodeExperience> experience;  // null: not logged
  bool act_in_flight = false;                     // logged: an act of it is queued
  std::uint64_t logged = 0;                       // logged: transitions queued for the replay
};

}  // namespace

struct ServiceGateway::Impl {
  GatewayConfig config;
  std::unique_ptr<GatewayBackend> backend;
  monitoring::ProcessMetrics* metrics = nullptr;
  std::function<void(const std::string&)> log;
  zmq::context_t context;
  std::unique_ptr<transport::ZapAuthenticator> zap;
  zmq::socket_t router;
  RequestShape shape;
  std::vector<PolicySeries> series;  // by policy index
  std::deque<Pending> queue;
  std::size_t queued_bytes = 0;                              // observation bytes in `queue`
  std::unordered_map<std::string, std::uint32_t> in_flight;  // client → queued requests
  std::set<std::string> logged;                              // client + reason, logged once
  std::map<std::uint64_t, Episode> episodes;
  std::deque<std::uint64_t> episode_order;
  std::uint64_t next_episode = 1;

  [[nodiscard]] const GatewayModel& model() const { return backend->model(); }

  [[nodiscard]] std::uint32_t batch_of(int policy) const {
    const auto it = config.policy_batching.find(policy);
    return std::max<std::uint32_t>(it != config.policy_batching.end() && it->second.max_batch
                                       ? *it->second.max_batch
                                       : config.max_batch,
                                   1);
  }
  [[nodiscard]] std::chrono::nanoseconds wait_of(int policy) const {
    const auto it = config.policy_batching.find(policy);
    return it != config.policy_batching.end() && it->second.max_wait ? *it->second.max_wait
                                                                     : config.max_wait;
  }

  void count_error(const std::string& policy, const std::string& reason) {
    if (metrics != nullptr) {
      metrics->counter(metric::kErrors, {{"policy", policy}, {"reason", reason}}).Increment();
    }
  }

  /// Queues the transitions an episode completed; counts what is logged and what is dropped.
  void push_experience(const std::vector<nodes::TransitionsMessage>& made, Episode& episode,
                       const std::string& client, std::atomic<std::uint64_t>& queued_rows,
                       std::atomic<std::uint64_t>& dropped_rows) {
    for (std::size_t p = 0; p < made.size(); ++p) {
      const std::size_t rows = made[p].rows();
      if (rows == 0) continue;
      const bool queued = config.experience->try_push(static_cast<int>(p), made[p]);
      (queued ? queued_rows : dropped_rows).fetch_add(rows, std::memory_order_relaxed);
      if (queued) episode.logged += rows;
      if (metrics != nullptr) {
        metrics
            ->counter(metric::kTransitions, {{"policy", model().policy_names[p]},
                                             {"outcome", queued ? "logged" : "dropped"}})
            .Increment(static_cast<double>(rows));
      }
      if (!queued) {
        log_once(client, "experience_full",
                 "transitions of a logged episode were dropped: the experience queue holds " +
                     std::to_string(config.experience->max_rows()) +
                     " rows not yet sent to the replay");
      }
    }
  }

  void log_once(const std::string& client, const std::string& reason, const std::string& text) {
    if (!log || logged.size() >= kMaxLoggedRefusals) return;
    if (!logged.insert(client + "/" + reason).second) return;
    log(model().server + " gateway: client " + client + ": " + reason + ": " + text +
        " (further refusals of this client for this reason are only counted)");
  }
};

ServiceGateway::ServiceGateway(GatewayConfig config, std::unique_ptr<GatewayBackend> backend,
                               monitoring::ProcessMetrics* metrics,
                               std::function<void(const std::string&)> log)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.config = std::move(config);
  s.backend = std::move(backend);
  s.metrics = metrics;
  s.log = std::move(log);
  s.config.max_batch = std::max<std::uint32_t>(s.config.max_batch, 1);
  s.config.max_in_flight = std::max<std::uint32_t>(s.config.max_in_flight, 1);
  s.config.max_queue = std::max<std::size_t>(s.config.max_queue, 1);
  const GatewayModel& m = s.model();
  std::uint32_t widest = 1;  // `rows` of one request: at most the largest max_batch
  for (const int p : m.hosted) widest = std::max(widest, s.batch_of(p));
  s.shape = {m.observation_size, m.num_agents, widest};
  s.series.resize(m.policy_names.size());
  if (metrics != nullptr) {
    for (const int p : m.hosted) {
      const monitoring::Labels labels = {{"policy", m.policy_names[static_cast<std::size_t>(p)]}};
      PolicySeries& ps = s.series[static_cast<std::size_t>(p)];
      ps.requests = &metrics->counter(metric::kRequests, labels);
      ps.queue = &metrics->histogram(metric::kQueueDuration, labels);
      ps.compute = &metrics->histogram(metric::kComputeDuration, labels);
      ps.total = &metrics->histogram(metric::kRequestDuration, labels);
      ps.batch = &metrics->histogram(metric::kBatchSize, labels);
      ps.in_flight = &metrics->gauge(metric::kInFlight, labels);
    }
  }
  if (!s.config.curve_secret_key.empty() && !s.config.allowed_client_keys.empty()) {
    s.zap = std::make_unique<transport::ZapAuthenticator>(s.context, s.config.allowed_client_keys);
  }
  s.router = zmq::socket_t(s.context, zmq::socket_type::router);
  s.router.set(zmq::sockopt::linger, 0);
  s.router.set(zmq::sockopt::router_mandatory, 1);
  s.router.set(zmq::sockopt::maxmsgsize, s.config.max_message);
  s.router.set(zmq::sockopt::sndhwm, s.config.max_reply_queue);
  if (!s.config.curve_secret_key.empty()) {
    s.router.set(zmq::sockopt::curve_server, true);
    s.router.set(zmq::sockopt::curve_secretkey, s.config.curve_secret_key);
  }
  try {
    s.router.bind(s.config.endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error(m.server + " gateway: cannot bind " + s.config.endpoint + ": " +
                             e.what());
  }
  endpoint_ = s.router.get(zmq::sockopt::last_endpoint);
  port_ = static_cast<std::uint16_t>(std::stoi(endpoint_.substr(endpoint_.rfind(':') + 1)));
  thread_ = std::thread([this] { run(); });
}

ServiceGateway::~ServiceGateway() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

void ServiceGateway::offer_weights(int policy, nodes::WeightsMessage weights) {
  const std::lock_guard<std::mutex> lock(weights_mutex_);
  offered_.emplace_back(policy, std::move(weights));
  weights_pending_.store(true, std::memory_order_release);
}

namespace {

/// Sends one reply on `envelope`; false when the connection cannot take it (gone or full).
bool send_reply(zmq::socket_t& router, const std::vector<zmq::message_t>& envelope,
                const Frame& body) {
  try {
    for (const zmq::message_t& part : envelope) {
      if (!router.send(zmq::message_t(part.data(), part.size()),
                       zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
        return false;  // the first frame: the connection's queue is full, nothing was sent
      }
    }
    return router.send(zmq::message_t(body.data(), body.size()), zmq::send_flags::dontwait)
        .has_value();
  } catch (const zmq::error_t&) {
    return false;  // EHOSTUNREACH: the client is gone
  }
}

}  // namespace

void ServiceGateway::run() {
  Impl& s = *impl_;
  const GatewayModel& model = s.model();
  const auto reply = [&](const std::vector<zmq::message_t>& envelope, const std::string& client,
                         const Frame& body) {
    if (send_reply(s.router, envelope, body)) return;
    dropped_.fetch_add(1, std::memory_order_relaxed);
    s.count_error(kNoPolicy, "slow_reader");
    s.log_once(client, "slow_reader", "a reply was dropped: the client does not read them");
  };
  const auto refuse = [&](const std::vector<zmq::message_t>& envelope, const std::string& client,
                          const GatewayError& error, const std::string& policy) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    if (error.code == "busy") busy_.fetch_add(1, std::memory_order_relaxed);
    s.count_error(policy, error.code);
    s.log_once(client, error.code, error.reason);
    reply(envelope, client, encode_error(error));
  };
  const auto statuses = [&] {
    std::vector<PolicyStatus> out;
    for (const int p : model.hosted) {
      out.push_back(
          {model.policy_names[static_cast<std::size_t>(p)], s.backend->version(p), true,
           s.batch_of(p),
           static_cast<std::uint64_t>(
               std::chrono::duration_cast<std::chrono::microseconds>(s.wait_of(p)).count())});
    }
    return out;
  };
  const auto apply_weights = [&] {
    if (!weights_pending_.load(std::memory_order_acquire)) return;
    std::vector<std::pair<int, nodes::WeightsMessage>> offered;
    {
      const std::lock_guard<std::mutex> lock(weights_mutex_);
      offered.swap(offered_);
      weights_pending_.store(false, std::memory_order_relaxed);
    }
    for (const auto& [policy, weights] : offered) {
      try {
        s.backend->load_weights(policy, weights);
      } catch (const std::exception& e) {
        if (s.log)
          s.log(model.server + " gateway: weights of policy " + std::to_string(policy) +
                " not loaded: " + e.what());
      }
    }
  };

  // Answers or queues one request; returns nothing (every outcome is a reply or a drop).
  const auto handle = [&](std::vector<zmq::message_t>& parts) {
    if (parts.size() < 2 || parts.size() > kMaxEnvelopeFrames + 1) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      s.count_error(kNoPolicy, "malformed");
      if (!parts.empty())
        s.log_once(hex(parts[0]), "malformed", "a message of too many frames, dropped");
      return;
    }
    zmq::message_t body = std::move(parts.back());
    parts.pop_back();
    const std::string client = hex(parts[0]);
    DecodeResult decoded = decode_request(body.data(), body.size(), s.shape);
    if (auto* error = std::get_if<GatewayError>(&decoded)) {
      refuse(parts, client, *error, kNoPolicy);
      return;
    }
    GatewayRequest& request = std::get<GatewayRequest>(decoded);
    const auto fail = [&](const std::string& code, const std::string& reason,
                          const std::string& policy = kNoPolicy) {
      refuse(parts, client, GatewayError{code, reason, request.op, request.id}, policy);
    };
    switch (request.op) {
      case GatewayOp::hello: {
        HelloInfo info;
        info.server = model.server;
        info.env = model.env;
        info.observation_size = model.observation_size;
        info.num_actions = model.num_actions;
        for (std::uint32_t a = 0; a < model.num_agents; ++a) {
          if (model.serves_agent(a)) {
            info.agents.emplace_back(
                a, model.policy_names[static_cast<std::size_t>(model.agent_policy[a])]);
          }
        }
        info.policies = statuses();
        info.max_batch = s.config.max_batch;
        info.max_in_flight = s.config.max_in_flight;
        info.max_wait_us = static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(s.config.max_wait).count());
        reply(parts, client, encode_hello(request.id, info));
        return;
      }
      case GatewayOp::health:
        reply(parts, client, encode_health(request.id, true, statuses()));
        return;
      case GatewayOp::episode_start: {
        const bool log = request.log.value_or(s.config.log_by_default);
        if (log && s.config.experience == nullptr) {
          fail("no_replay", model.server +
                                " has no replay linked to its experience port: it cannot log "
                                "episodes (start the episode without log)");
          return;
        }
        if (s.episodes.size() >= kMaxEpisodes) {
          s.episodes.erase(s.episode_order.front());
          s.episode_order.pop_front();
        }
        const std::uint64_t e = s.next_episode++;
        Episode& episode = s.episodes[e];
        if (log) episode.experience = std::make_unique<EpisodeExperience>(model);
        s.episode_order.push_back(e);
        reply(parts, client, encode_episode_start(request.id, e, log));
        return;
      }
      case GatewayOp::episode_end: {
        const auto it = s.episodes.find(*request.episode);
        if (it == s.episodes.end()) {
          fail("unknown_episode", "no open episode " + std::to_string(*request.episode));
          return;
        }
        Episode& episode = it->second;
        if (episode.experience != nullptr) {
          if (episode.act_in_flight) {
            fail("busy",
                 "an act of this logged episode is still in flight: end it after its reply");
            return;
          }
          if (const std::string why = episode.experience->check(request); !why.empty()) {
            fail("not_in_step", why);
            return;
          }
          std::vector<nodes::TransitionsMessage> made;
          episode.experience->complete(request, true, made);
          s.push_experience(made, episode, client, logged_, logged_dropped_);
        }
        for (const auto& [agent, reward] : request.rewards) episode.returns[agent] += reward;
        reply(parts, client,
              encode_episode_end(request.id, it->first, episode.steps, episode.returns,
                                 episode.logged));
        s.episode_order.erase(std::find(s.episode_order.begin(), s.episode_order.end(), it->first));
        s.episodes.erase(it);
        return;
      }
      case GatewayOp::act:
        break;
    }
    if (request.single) {  // one observation: the gateway must serve exactly one agent
      for (std::uint32_t a = 0; a < model.num_agents; ++a) {
        if (model.serves_agent(a)) request.agents.push_back(a);
      }
      if (request.agents.size() != 1) {
        fail("malformed", "obs is one observation, but this gateway serves " +
                              std::to_string(request.agents.size()) +
                              " agents: send a map agent -> observation");
        return;
      }
    }
    for (const std::uint32_t agent : request.agents) {
      if (model.serves_agent(agent) && request.rows > s.batch_of(model.agent_policy[agent])) {
        const auto policy = static_cast<std::size_t>(model.agent_policy[agent]);
        fail("too_large", "rows " + std::to_string(request.rows) + " is above policy " +
                              model.policy_names[policy] + "'s max_batch " +
                              std::to_string(s.batch_of(model.agent_policy[agent])));
        return;
      }
      if (!model.serves_agent(agent)) {
        const auto policy = static_cast<std::size_t>(model.agent_policy[agent]);
        const std::string& other = model.policy_server[policy];
        fail("not_served", "agent " + std::to_string(agent) + " (policy " +
                               model.policy_names[policy] + ") is not served by " + model.server +
                               (other.empty() ? std::string() : "; ask " + other + "'s gateway"));
        return;
      }
    }
    const auto found = s.in_flight.find(client);
    const std::uint32_t queued = found == s.in_flight.end() ? 0 : found->second;
    const std::size_t bytes = request.observations.size() * sizeof(float);
    if (queued >= s.config.max_in_flight || s.queue.size() >= s.config.max_queue ||
        (!s.queue.empty() && s.queued_bytes + bytes > s.config.max_queue_bytes)) {
      fail("busy", queued >= s.config.max_in_flight
                       ? "this client has max_in_flight requests queued"
                       : "the gateway's queue is full");
      return;
    }
    Episode* episode = nullptr;
    if (request.episode) {
      const auto it = s.episodes.find(*request.episode);
      if (it == s.episodes.end()) {
        fail("unknown_episode", "no open episode " + std::to_string(*request.episode));
        return;
      }
      episode = &it->second;
      if (episode->experience != nullptr) {
        if (episode->act_in_flight) {
          fail("busy",
               "an act of this logged episode is still in flight: send the next step "
               "after its reply");
          return;
        }
        if (const std::string why = episode->experience->check(request); !why.empty()) {
          fail(request.rows != 1 ? "too_large" : "not_in_step", why);
          return;
        }
      }
    }
    std::optional<std::uint64_t> logged_episode;
    if (episode != nullptr && episode->experience != nullptr) {
      std::vector<nodes::TransitionsMessage> made;
      episode->experience->complete(request, false, made);
      s.push_experience(made, *episode, client, logged_, logged_dropped_);
      episode->act_in_flight = true;
      logged_episode = request.episode;
    }
    if (episode != nullptr) {
      ++episode->steps;
      for (const auto& [agent, reward] : request.rewards) episode->returns[agent] += reward;
    }
    ++s.in_flight[client];
    Pending p;
    p.envelope = std::move(parts);
    p.client = client;
    p.arrival = Clock::now();
    p.logged_episode = logged_episode;
    p.rows.observation_size = model.observation_size;
    for (const std::uint32_t agent : request.agents) {
      const int policy = model.agent_policy[agent];
      p.policy_rows[policy] += request.rows;
      for (std::uint32_t r = 0; r < request.rows; ++r) {
        p.rows.agents.push_back(agent);
        p.rows.policies.push_back(static_cast<std::uint32_t>(policy));
      }
    }
    std::chrono::nanoseconds wait = kLongestWait;
    for (const auto& entry : p.policy_rows) wait = std::min(wait, s.wait_of(entry.first));
    p.deadline = p.arrival + (p.policy_rows.empty() ? std::chrono::nanoseconds(0) : wait);
    p.rows.observations = std::move(request.observations);
    p.request = std::move(request);
    for (const auto& [policy, rows] : p.policy_rows) {
      if (auto* g = s.series[static_cast<std::size_t>(policy)].in_flight)
        g->Increment(static_cast<double>(rows));
    }
    s.queued_bytes += p.rows.observations.size() * sizeof(float);
    s.queue.push_back(std::move(p));
    if (s.queue.size() > peak_queued_.load(std::memory_order_relaxed)) {
      peak_queued_.store(s.queue.size(), std::memory_order_relaxed);
    }
  };

  // The policies with max_batch rows queued: their requests are due whatever their deadline.
  const auto full_policies = [&] {
    std::map<int, std::size_t> rows;
    std::set<int> full;
    for (const Pending& p : s.queue) {
      for (const auto& [policy, n] : p.policy_rows) {
        if ((rows[policy] += n) >= s.batch_of(policy)) full.insert(policy);
      }
    }
    return full;
  };
  const auto is_due = [](const Pending& p, Clock::time_point now, const std::set<int>& full) {
    if (now >= p.deadline) return true;
    return std::any_of(p.policy_rows.begin(), p.policy_rows.end(),
                       [&](const auto& entry) { return full.count(entry.first) != 0; });
  };
  const auto due = [&](Clock::time_point now) {
    if (s.queue.empty()) return false;
    const std::set<int> full = full_policies();
    return std::any_of(s.queue.begin(), s.queue.end(),
                       [&](const Pending& p) { return is_due(p, now, full); });
  };

  // Takes the due requests in arrival order while every policy stays within its max_batch (the
  // first due request always: a lone request is served whatever its size); the others stay.
  const auto serve_batch = [&] {
    const Clock::time_point now = Clock::now();
    const std::set<int> full = full_policies();
    std::vector<Pending> batch;
    std::map<int, std::size_t> rows;
    std::deque<Pending> waiting;
    while (!s.queue.empty()) {
      Pending next = std::move(s.queue.front());
      s.queue.pop_front();
      bool take = is_due(next, now, full);
      for (const auto& [policy, n] : next.policy_rows) {
        take = take && (batch.empty() || rows[policy] + n <= s.batch_of(policy));
      }
      if (!take) {
        waiting.push_back(std::move(next));
        continue;
      }
      for (const auto& [policy, n] : next.policy_rows) rows[policy] += n;
      s.queued_bytes -= next.rows.observations.size() * sizeof(float);
      batch.push_back(std::move(next));
    }
    s.queue.swap(waiting);
    std::vector<nodes::AgentObservationsMessage> requests;
    requests.reserve(batch.size());
    for (Pending& p : batch) requests.push_back(std::move(p.rows));
    const Clock::time_point started = Clock::now();
    std::vector<nodes::AgentActionsMessage> answers;
    std::string failure;
    try {
      answers = s.backend->serve(requests);
      if (answers.size() != requests.size()) failure = "the policy answered the wrong count";
    } catch (const std::exception& e) {
      failure = e.what();
    }
    const Clock::time_point computed = Clock::now();
    passes_.fetch_add(1, std::memory_order_relaxed);
    for (const auto& [policy, n] : rows) {
      const PolicySeries& ps = s.series[static_cast<std::size_t>(policy)];
      if (ps.batch != nullptr) ps.batch->Observe(static_cast<double>(n));
      if (ps.compute != nullptr) ps.compute->Observe(seconds(computed - started));
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
      Pending& p = batch[i];
      const GatewayRequest& request = p.request;
      // Counted before the reply leaves: a client that reads the metrics after its reply sees it.
      for (const auto& [policy, n] : p.policy_rows) {
        const PolicySeries& ps = s.series[static_cast<std::size_t>(policy)];
        if (ps.requests != nullptr && failure.empty())
          ps.requests->Increment(static_cast<double>(n));
        if (ps.queue != nullptr) ps.queue->Observe(seconds(started - p.arrival));
      }
      if (failure.empty()) {
        const nodes::AgentActionsMessage& a = answers[i];
        ActAnswer answer;
        answer.agents = request.agents;
        for (std::size_t k = 0; k < request.agents.size(); ++k) {
          const std::size_t first = k * request.rows;
          answer.policies.push_back(model.policy_names[a.policies.at(first)]);
          answer.versions.push_back(a.versions.at(first));
        }
        answer.actions = a.actions;
        if (p.logged_episode) {
          // Its episode's steps open with what the policies chose (the episode may be forgotten).
          const auto e = s.episodes.find(*p.logged_episode);
          if (e != s.episodes.end() && e->second.experience != nullptr) {
            e->second.experience->open(request.agents, requests[i].observations, a.actions,
                                       answer.versions);
            answer.logged = e->second.logged;
          }
        }
        rows_answered_.fetch_add(a.rows(), std::memory_order_relaxed);
        reply(p.envelope, p.client, encode_act(request, answer));
      } else {
        if (s.log) s.log(model.server + " gateway: a forward pass failed: " + failure);
        refuse(p.envelope, p.client, GatewayError{"internal", failure, request.op, request.id},
               kNoPolicy);
      }
      const Clock::time_point sent = Clock::now();
      for (const auto& [policy, n] : p.policy_rows) {
        const PolicySeries& ps = s.series[static_cast<std::size_t>(policy)];
        if (ps.total != nullptr) ps.total->Observe(seconds(sent - p.arrival));
        if (ps.in_flight != nullptr) ps.in_flight->Decrement(static_cast<double>(n));
      }
      const auto it = s.in_flight.find(p.client);
      if (it != s.in_flight.end() && --it->second == 0) s.in_flight.erase(it);
      if (p.logged_episode) {
        const auto e = s.episodes.find(*p.logged_episode);
        if (e != s.episodes.end()) e->second.act_in_flight = false;
      }
    }
  };

  std::vector<zmq::message_t> parts;
  Clock::time_point last_refresh = Clock::now();
  while (!stop_.load(std::memory_order_relaxed)) {
    if (Clock::now() - last_refresh >= std::chrono::seconds(1)) {
      last_refresh = Clock::now();
      const std::string line = s.backend->refresh();  // between passes: a pass sees one bank
      if (!line.empty() && s.log) s.log(line);
    }
    auto timeout = std::chrono::milliseconds(20);
    for (const Pending& p : s.queue) {
      const auto left = p.deadline - Clock::now();
      timeout = std::max(std::chrono::milliseconds(0),
                         std::min(timeout, std::chrono::ceil<std::chrono::milliseconds>(left)));
    }
    zmq::pollitem_t item{s.router.handle(), 0, ZMQ_POLLIN, 0};
    try {
      zmq::poll(&item, 1, timeout);
    } catch (const zmq::error_t&) {
      continue;  // EINTR
    }
    // Read what is waiting (bounded, so that a flood cannot starve the forward passes).
    for (std::size_t n = 0; n < s.config.max_queue + 64; ++n) {
      parts.clear();
      zmq::message_t first;
      if (!s.router.recv(first, zmq::recv_flags::dontwait)) break;
      bool more = first.more();
      bool too_many = false;
      parts.push_back(std::move(first));
      while (more) {  // the rest of a multipart message is already here
        zmq::message_t next;
        if (!s.router.recv(next, zmq::recv_flags::dontwait)) break;
        more = next.more();
        if (parts.size() <= kMaxEnvelopeFrames) {
          parts.push_back(std::move(next));
        } else {
          too_many = true;  // the rest is read and dropped
        }
      }
      if (too_many) parts.resize(kMaxEnvelopeFrames + 2);  // handle() drops it, counted
      handle(parts);
    }
    apply_weights();
    while (due(Clock::now())) serve_batch();
  }
}

}  // namespace tagflow::gateway
