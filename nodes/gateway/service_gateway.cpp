#include "nodes/gateway/service_gateway.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <stdexcept>
#include <unordered_map>

#include <zmq.hpp>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "monitoring/process_metrics.hpp"
#include "nodes/gateway/episode_experience.hpp"
#include "nodes/gateway/gateway_metrics.hpp"
#include "nodes/gateway/gateway_protocol.hpp"
#include "transport/connection_guard.hpp"
#include "transport/peer_drop_counters.hpp"
#include "transport/zap_authenticator.hpp"

namespace tagflow::gateway {
namespace {

using Clock = std::chrono::steady_clock;

/// Whole requests of one connection ZeroMQ reads ahead of the gateway (ZMQ_RCVHWM).
constexpr int kReadAhead = 4;

// The routing id the ROUTER adds, then at most two envelope frames of the client's (PROTOCOL.md
// §2).
constexpr std::size_t kMaxEnvelopeFrames = 1 + kMaxClientFrames - 1;
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

/// One decoded request and where its reply goes.
struct Incoming {
  std::vector<zmq::message_t> envelope;
  std::string client;
  GatewayRequest request;
};

/// The due requests of one forward pass, and their rows per policy.
struct Batch {
  std::vector<Pending> requests;
  std::map<int, std::size_t> rows;
};

/// What one forward pass gave: an answer per request, or why there is none.
struct ForwardPass {
  std::vector<nodes::AgentActionsMessage> answers;
  std::string failure;  // empty: answered
};

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

/// True when `p` is due: its deadline has passed, or one of its policies has max_batch rows
/// queued (`full`).
bool is_due(const Pending& p, Clock::time_point now, const std::set<int>& full) {
  if (now >= p.deadline) return true;
  return std::any_of(p.policy_rows.begin(), p.policy_rows.end(),
                     [&](const auto& entry) { return full.count(entry.first) != 0; });
}

/// A gateway's instance: 64 random bits, never 0, new at every start (PROTOCOL.md §4, step 3).
std::uint64_t new_instance() {
  std::random_device device;
  std::uint64_t value = 0;
  while (value == 0) value = (std::uint64_t{device()} << 32U) | device();
  return value;
}

}  // namespace

struct ServiceGateway::Impl {
  explicit Impl(ServiceGateway& gateway) : owner(gateway) {}

  ServiceGateway& owner;  // its counters, its stop flag and the weights it is offered
  GatewayConfig config;
  std::unique_ptr<GatewayBackend> backend;
  monitoring::ProcessMetrics* metrics = nullptr;
  std::function<void(const std::string&)> log;
  zmq::context_t context;
  std::unique_ptr<transport::ZapAuthenticator> zap;
  zmq::socket_t router;
  transport::PeerDropCounters drops;                  // connections the guard cut
  std::unique_ptr<transport::ConnectionGuard> guard;  // closes before router
  RequestShape shape;
  std::vector<PolicySeries> series;  // by policy index
  std::deque<Pending> queue;
  std::size_t queued_bytes = 0;       // observation bytes in `queue`
  std::uint64_t read_since_trim = 0;  // request bytes read since memory was last given back
  std::uint64_t cuts_at_trim = 0;     // guard->cuts_made() then
  std::size_t most_connections = 0;   // the guard's connections at most since then
  Clock::time_point trimmed_at{};
  std::unordered_map<std::string, std::uint32_t> in_flight;  // client → queued requests
  std::set<std::string> logged;                              // client + reason, logged once
  std::map<std::uint64_t, Episode> episodes;
  std::deque<std::uint64_t> episode_order;
  std::uint64_t next_episode = 1;
  const std::uint64_t instance = new_instance();

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

  /// Whether policy `p`'s logged transitions reach a replay.
  [[nodiscard]] bool replayed(int p) const {
    return config.experience != nullptr &&
           (!config.replayed_policies || config.replayed_policies->count(p) != 0);
  }

  /// Queues the transitions an episode completed; counts what is logged and what is dropped (the
  /// queue is full, or the policy has no replay).
  void push_experience(const std::vector<nodes::TransitionsMessage>& made, Episode& episode,
                       const std::string& client) {
    for (std::size_t p = 0; p < made.size(); ++p) {
      const std::size_t rows = made[p].rows();
      if (rows == 0) continue;
      const bool has_replay = replayed(static_cast<int>(p));
      const bool queued = has_replay && config.experience->try_push(static_cast<int>(p), made[p]);
      std::atomic<std::uint64_t>& count = queued       ? owner.logged_
                                          : has_replay ? owner.logged_dropped_
                                                       : owner.without_replay_;
      count.fetch_add(rows, std::memory_order_relaxed);
      if (queued) episode.logged += rows;
      const char* outcome = queued ? "logged" : has_replay ? "dropped" : "no_replay";
      if (metrics != nullptr) {
        metrics
            ->counter(metric::kTransitions,
                      {{"policy", model().policy_names[p]}, {"outcome", outcome}})
            .Increment(static_cast<double>(rows));
      }
      if (!has_replay) {
        log_once(client, "no_replay",
                 "transitions of policy " + model().policy_names[p] +
                     " were dropped: no replay of it is linked to the experience port");
      } else if (!queued) {
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

  // The loop's steps (run(), in this order).
  void refresh_backend(Clock::time_point& last_refresh);
  [[nodiscard]] bool wait_for_frames();  // false: the wait was interrupted
  /// Returns how many messages it read.
  std::size_t read_waiting(std::vector<zmq::message_t>& parts);
  /// `idle`: nothing was read and nothing is queued.
  void give_back_memory(bool idle);
  void apply_weights();
  [[nodiscard]] bool due(Clock::time_point now) const;
  void serve_batch();

  // Reading and dispatching one request.
  [[nodiscard]] std::chrono::milliseconds poll_timeout() const;
  [[nodiscard]] bool receive(std::vector<zmq::message_t>& parts);
  void handle(std::vector<zmq::message_t>& parts);
  void answer_hello(const Incoming& in);
  void start_episode(const Incoming& in);
  void end_episode(const Incoming& in);

  // Admitting an act: the checks in the order a refusal names, then the queue.
  void admit_act(Incoming& in);
  [[nodiscard]] bool agents_served(Incoming& in);
  [[nodiscard]] bool has_room(const Incoming& in);
  [[nodiscard]] bool episode_accepts(const Incoming& in, Episode*& episode);
  [[nodiscard]] bool of_another_instance(const Incoming& in);
  std::optional<std::uint64_t> record_step(Incoming& in, Episode* episode);
  void enqueue(Incoming& in, std::optional<std::uint64_t> logged_episode);

  // Replies.
  void reply(const std::vector<zmq::message_t>& envelope, const std::string& client,
             const Frame& body);
  void refuse(const std::vector<zmq::message_t>& envelope, const std::string& client,
              const GatewayError& error, const std::string& policy);
  void fail(const Incoming& in, const std::string& code, const std::string& reason,
            const std::string& policy = kNoPolicy);
  /// `busy`, saying whose limit it is (`scope`, §5).
  void fail_busy(const Incoming& in, const std::string& scope, const std::string& reason);
  [[nodiscard]] std::vector<PolicyStatus> statuses() const;

  // Batching and serving.
  [[nodiscard]] std::set<int> full_policies() const;
  Batch take_due(Clock::time_point now);
  ForwardPass forward(const std::vector<nodes::AgentObservationsMessage>& requests);
  void observe_pass(const std::map<int, std::size_t>& rows, Clock::duration compute);
  void answer_act(const Pending& p, const nodes::AgentObservationsMessage& rows,
                  const nodes::AgentActionsMessage& answer);
  void finish(const Pending& p);
};

ServiceGateway::ServiceGateway(GatewayConfig config, std::unique_ptr<GatewayBackend> backend,
                               monitoring::ProcessMetrics* metrics,
                               std::function<void(const std::string&)> log)
    : impl_(std::make_unique<Impl>(*this)) {
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
    s.zap = std::make_unique<transport::ZapAuthenticator>(s.context, s.config.allowed_client_keys,
                                                          "the gateway");
    if (s.metrics != nullptr) {  // refused CURVE handshakes: a client key not in gateway_clients
      prometheus::Counter* refused = &s.metrics->counter(
          monitoring::Metric::transport_invalid_messages,
          {{"peer", "unknown"},
           {"reason", transport::drop_reason_name(transport::DropReason::kRefusedHandshake)}});
      s.zap->set_refused_observer([refused] { refused->Increment(); });
    }
  }
  s.router = zmq::socket_t(s.context, zmq::socket_type::router);
  s.router.set(zmq::sockopt::linger, 0);
  s.router.set(zmq::sockopt::router_mandatory, 1);
  s.router.set(zmq::sockopt::maxmsgsize, s.config.max_message);
  s.router.set(zmq::sockopt::sndhwm, s.config.max_reply_queue);
  // ZeroMQ reads at most 4 whole requests of a connection ahead of the loop; TCP's flow control
  // holds the rest in the kernel. What a connection the guard cuts had received whole stays
  // queued until read, out of the guard's count: this bounds it (transport/WIRE.md §3.1). Fewer
  // cost well-behaved clients throughput (2: about 8 % at 4 and 16 clients, `tagflow bench
  // serve`); the default (1000) let a flood of 300 clients take a process past 800 MB.
  s.router.set(zmq::sockopt::rcvhwm, kReadAhead);
  // Without CURVE anyone may connect: bound what ZeroMQ holds for them (transport/WIRE.md
  // §3.1); a request is one frame of at most max_message bytes after a small envelope. With
  // CURVE the bytes on the wire are boxed, so the guard only keeps the connections within
  // max_clients: an admitted client may still open connections and leave them idle.
  transport::ConnectionLimits limits =
      transport::limits_for_messages(static_cast<std::size_t>(s.config.max_message), 0);
  limits.max_connections = std::max<std::size_t>(s.config.max_clients, 1);
  // Clients, not upstreams: over the budget, the ones being read are cut too (PROTOCOL.md §5).
  limits.budget_cuts_read_connections = true;
  limits.socket_name = "the gateway";
  if (!s.config.curve_secret_key.empty()) {
    s.router.set(zmq::sockopt::curve_server, true);
    s.router.set(zmq::sockopt::curve_secretkey, s.config.curve_secret_key);
    limits.count_only = true;
    // Only the count is judged: a look every 250 ms, not a system call per connection every
    // 5 ms (which only the byte rules need).
    limits.check_every = std::chrono::milliseconds(250);
  }
  s.guard = std::make_unique<transport::ConnectionGuard>(s.context, s.router, limits);
  if (metrics != nullptr) {
    s.drops.set_observer([metrics](const std::string& peer, transport::DropReason reason) {
      metrics
          ->counter(monitoring::Metric::transport_invalid_messages,
                    {{"peer", peer}, {"reason", transport::drop_reason_name(reason)}})
          .Increment();
    });
  }
  // An IPv6 address (`tcp://[::1]:7830`; `tcp://[::]:7830`, every interface, IPv4 too) needs
  // ZMQ_IPV6; `*`, an IPv4 address and an interface name bind as before, without a name lookup.
  if (s.config.endpoint.rfind("tcp://[", 0) == 0) s.router.set(zmq::sockopt::ipv6, 1);
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

void ServiceGateway::run() {
  Impl& s = *impl_;
  std::vector<zmq::message_t> parts;
  Clock::time_point last_refresh = Clock::now();
  while (!stop_.load(std::memory_order_relaxed)) {
    s.refresh_backend(last_refresh);
    if (!s.wait_for_frames()) continue;  // EINTR
    const std::size_t read = s.read_waiting(parts);
    s.apply_weights();
    while (s.due(Clock::now())) s.serve_batch();
    s.give_back_memory(read == 0 && s.queue.empty());
  }
}

// --- the loop's steps

void ServiceGateway::Impl::refresh_backend(Clock::time_point& last_refresh) {
  if (Clock::now() - last_refresh < std::chrono::seconds(1)) return;
  last_refresh = Clock::now();
  const std::string line = backend->refresh();  // between passes: a pass sees one bank
  if (!line.empty() && log) log(line);
}

/// Until the earliest deadline of a queued request, 20 ms at the most.
std::chrono::milliseconds ServiceGateway::Impl::poll_timeout() const {
  auto timeout = std::chrono::milliseconds(20);
  for (const Pending& p : queue) {
    const auto left = p.deadline - Clock::now();
    timeout = std::max(std::chrono::milliseconds(0),
                       std::min(timeout, std::chrono::ceil<std::chrono::milliseconds>(left)));
  }
  return timeout;
}

bool ServiceGateway::Impl::wait_for_frames() {
  const std::chrono::milliseconds timeout = poll_timeout();
  zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
  try {
    zmq::poll(&item, 1, timeout);
  } catch (const zmq::error_t&) {
    return false;
  }
  return true;
}

/// Reads and handles what is waiting (bounded, so that a flood cannot starve the forward passes).
std::size_t ServiceGateway::Impl::read_waiting(std::vector<zmq::message_t>& parts) {
  std::size_t n = 0;
  for (; n < config.max_queue + 64; ++n) {
    if (!receive(parts)) break;
    handle(parts);
  }
  return n;
}

/// Hands the allocator's free memory back to the system after at least 64 MiB of requests were
/// read: once the gateway is idle (nothing waiting, nothing queued), or at most every 250 ms
/// while the connection guard is cutting connections (a flood: the gateway may not be idle for
/// as long as it lasts). Large requests are allocated by ZeroMQ's I/O threads and freed here;
/// glibc keeps what they freed for reuse, so one burst of large acts left the process hundreds
/// of megabytes larger for good, and a flood held about 300 MB freed but resident while it
/// lasted. Also once idle after at least 256 connections ended (ZeroMQ's buffers for each: a
/// few thousand idle connections left about 40 MB behind them). A steady stream of clients
/// within their limits is never trimmed under: the pages would only be faulted in again.
void ServiceGateway::Impl::give_back_memory(bool idle) {
  constexpr std::uint64_t kTrimAfter = std::uint64_t{64} << 20;
  constexpr std::size_t kTrimAfterConnections = 256;
  constexpr auto kFloodTrimEvery = std::chrono::milliseconds(250);
  if (idle) {
    const std::size_t connections = guard ? guard->connections() : 0;
    most_connections = std::max(most_connections, connections);
    const bool many_ended = most_connections - connections >= kTrimAfterConnections;
    if (read_since_trim < kTrimAfter && !many_ended) return;
    read_since_trim = 0;
    most_connections = connections;
  } else {
    if (read_since_trim < kTrimAfter) return;
    const std::uint64_t cuts = guard ? guard->cuts_made() : 0;
    if (cuts == cuts_at_trim || Clock::now() - trimmed_at < kFloodTrimEvery) return;
    // read_since_trim stays: the trim once the flood is over still comes
  }
  cuts_at_trim = guard ? guard->cuts_made() : 0;
  trimmed_at = Clock::now();
#if defined(__GLIBC__)
  (void)::malloc_trim(0);
#endif
}

/// One waiting message into `parts`; false when none waits. Frames beyond the envelope's are read
/// and dropped, leaving `parts` one frame too long for handle() to refuse (counted).
bool ServiceGateway::Impl::receive(std::vector<zmq::message_t>& parts) {
  parts.clear();
  zmq::message_t first;
  if (!router.recv(first, zmq::recv_flags::dontwait)) {
    if (guard) (void)guard->check(drops);
    return false;
  }
  bool more = first.more();
  read_since_trim += first.size();
  bool too_many = false;
  int fd = -1;  // the connection, from a frame that crossed it (what ZMQ_SRCFD reads)
  // The routing id ROUTER puts first did not cross the wire.
  std::size_t wire_bytes = 0;
  parts.push_back(std::move(first));
  while (more) {  // the rest of a multipart message is already here
    zmq::message_t next;
    if (!router.recv(next, zmq::recv_flags::dontwait)) break;
    more = next.more();
    read_since_trim += next.size();
    wire_bytes += transport::zmtp_frame_bytes(next.size());
    if (guard && fd < 0) {
      if (const char* text = zmq_msg_gets(next.handle(), "__fd")) fd = std::atoi(text);
    }
    if (parts.size() <= kMaxEnvelopeFrames) {
      parts.push_back(std::move(next));
    } else {
      too_many = true;  // the rest is read and dropped
    }
  }
  if (too_many) parts.resize(kMaxEnvelopeFrames + 2);
  // Named as the logs name the client: its routing id in hex (ZeroMQ's own ids are bytes).
  if (fd >= 0) guard->note_read(fd, hex(parts.front()), wire_bytes);
  return true;
}

/// Loads the weights offered since the last pass, so that a pass runs on one version of each.
void ServiceGateway::Impl::apply_weights() {
  if (!owner.weights_pending_.load(std::memory_order_acquire)) return;
  std::vector<std::pair<int, nodes::WeightsMessage>> offered;
  {
    const std::lock_guard<std::mutex> lock(owner.weights_mutex_);
    offered.swap(owner.offered_);
    owner.weights_pending_.store(false, std::memory_order_relaxed);
  }
  for (const auto& [policy, weights] : offered) {
    try {
      backend->load_weights(policy, weights);
    } catch (const std::exception& e) {
      if (log)
        log(model().server + " gateway: weights of policy " + std::to_string(policy) +
            " not loaded: " + e.what());
    }
  }
}

bool ServiceGateway::Impl::due(Clock::time_point now) const {
  if (queue.empty()) return false;
  const std::set<int> full = full_policies();
  return std::any_of(queue.begin(), queue.end(),
                     [&](const Pending& p) { return is_due(p, now, full); });
}

/// Serves the due requests in one backend call and answers each.
void ServiceGateway::Impl::serve_batch() {
  Batch batch = take_due(Clock::now());
  std::vector<nodes::AgentObservationsMessage> requests;
  requests.reserve(batch.requests.size());
  for (Pending& p : batch.requests) requests.push_back(std::move(p.rows));
  const Clock::time_point started = Clock::now();
  ForwardPass pass = forward(requests);
  observe_pass(batch.rows, Clock::now() - started);
  // One request's rows may be what the policy fails on: a failed pass of several requests is
  // served again one request at a time (the same weights), so only the requests that fail alone
  // are refused.
  std::vector<std::string> failures(batch.requests.size(), pass.failure);
  if (!pass.failure.empty() && requests.size() > 1) {
    pass.answers.resize(requests.size());
    std::size_t answered = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      ForwardPass alone = forward({requests[i]});
      failures[i] = alone.failure;
      if (alone.failure.empty()) {
        pass.answers[i] = std::move(alone.answers.front());
        ++answered;
      }
    }
    if (log)
      log(model().server + " gateway: a forward pass of " + std::to_string(requests.size()) +
          " requests failed (" + pass.failure + "); served one at a time: " +
          std::to_string(answered) + " of " + std::to_string(requests.size()) + " answered");
  } else if (!pass.failure.empty() && log) {
    log(model().server + " gateway: a forward pass failed: " + pass.failure);
  }
  for (std::size_t i = 0; i < batch.requests.size(); ++i) {
    const Pending& p = batch.requests[i];
    // Counted before the reply leaves: a client that reads the metrics after its reply sees it.
    for (const auto& [policy, n] : p.policy_rows) {
      const PolicySeries& ps = series[static_cast<std::size_t>(policy)];
      if (ps.requests != nullptr && failures[i].empty())
        ps.requests->Increment(static_cast<double>(n));
      if (ps.queue != nullptr) ps.queue->Observe(seconds(started - p.arrival));
    }
    if (failures[i].empty()) {
      answer_act(p, requests[i], pass.answers[i]);
    } else {
      refuse(p.envelope, p.client, error_of(p.request, "internal", failures[i]), kNoPolicy);
    }
    finish(p);
  }
}

// --- reading and dispatching one request

/// Answers or queues one request; every outcome is a reply or a drop.
void ServiceGateway::Impl::handle(std::vector<zmq::message_t>& parts) {
  if (parts.size() < 2) return;  // a ROUTER always gives the routing id and a frame
  if (parts.size() > kMaxEnvelopeFrames + 1) {
    // Which frame is the request is unknown: `malformed` with a nil op and id, on the routing
    // id and, when the client's first frame is empty (a REQ socket's delimiter), that frame.
    const std::string client = hex(parts[0]);
    parts.resize(parts[1].size() == 0 ? 2 : 1);
    refuse(parts, client,
           GatewayError{"malformed",
                        "a message of more than " + std::to_string(kMaxClientFrames) +
                            " frames: the request was not read",
                        std::nullopt, std::nullopt, std::nullopt},
           kNoPolicy);
    return;
  }
  zmq::message_t body = std::move(parts.back());
  parts.pop_back();
  const std::string client = hex(parts[0]);
  DecodeResult decoded = decode_request(body.data(), body.size(), shape);
  if (auto* error = std::get_if<GatewayError>(&decoded)) {
    refuse(parts, client, *error, kNoPolicy);
    return;
  }
  Incoming in{std::move(parts), client, std::move(std::get<GatewayRequest>(decoded))};
  switch (in.request.op) {
    case GatewayOp::hello:
      answer_hello(in);
      return;
    case GatewayOp::health:
      reply(in.envelope, in.client, encode_health(in.request.id, true, statuses(), instance));
      return;
    case GatewayOp::episode_start:
      start_episode(in);
      return;
    case GatewayOp::episode_end:
      end_episode(in);
      return;
    case GatewayOp::act:
      admit_act(in);
      return;
  }
}

void ServiceGateway::Impl::answer_hello(const Incoming& in) {
  const GatewayModel& m = model();
  HelloInfo info;
  info.instance = instance;
  info.server = m.server;
  info.env = m.env;
  info.observation_size = m.observation_size;
  info.num_actions = m.num_actions;
  info.time_input = m.time_input;
  info.max_episode_steps = m.max_episode_steps;
  for (std::uint32_t a = 0; a < m.num_agents; ++a) {
    if (m.serves_agent(a)) {
      info.agents.emplace_back(a, m.policy_names[static_cast<std::size_t>(m.agent_policy[a])]);
    }
  }
  info.policies = statuses();
  info.max_batch = config.max_batch;
  info.max_in_flight = config.max_in_flight;
  info.max_wait_us = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(config.max_wait).count());
  info.limits = request_limits(shape);
  info.max_rows = shape.max_rows;
  info.max_frame_bytes = static_cast<std::uint64_t>(config.max_message);
  info.max_queue = config.max_queue;
  info.max_queue_bytes = config.max_queue_bytes;
  info.max_open_episodes = kMaxEpisodes;
  info.max_clients = std::max<std::uint64_t>(config.max_clients, 1);
  reply(in.envelope, in.client, encode_hello(in.request.id, info));
}

void ServiceGateway::Impl::start_episode(const Incoming& in) {
  const bool logs = in.request.log.value_or(config.log_by_default);
  if (logs && config.experience == nullptr) {
    fail(in, "no_replay",
         model().server +
             " has no replay linked to its experience port: it cannot log "
             "episodes (start the episode without log)");
    return;
  }
  if (episodes.size() >= kMaxEpisodes) {
    episodes.erase(episode_order.front());
    episode_order.pop_front();
  }
  const std::uint64_t e = next_episode++;
  Episode& episode = episodes[e];
  if (logs) episode.experience = std::make_unique<EpisodeExperience>(model());
  episode_order.push_back(e);
  reply(in.envelope, in.client, encode_episode_start(in.request.id, e, logs, instance));
}

void ServiceGateway::Impl::end_episode(const Incoming& in) {
  const GatewayRequest& request = in.request;
  if (of_another_instance(in)) return;
  const auto it = episodes.find(*request.episode);
  if (it == episodes.end()) {
    fail(in, "unknown_episode", "no open episode " + std::to_string(*request.episode));
    return;
  }
  Episode& episode = it->second;
  if (episode.experience != nullptr) {
    if (episode.act_in_flight) {
      fail_busy(in, "episode",
                "an act of this logged episode is still in flight: end it after its reply");
      return;
    }
    if (const std::string why = episode.experience->check(request); !why.empty()) {
      fail(in, "not_in_step", why);
      return;
    }
    std::vector<nodes::TransitionsMessage> made;
    episode.experience->complete(request, true, made);
    push_experience(made, episode, in.client);
  }
  for (const auto& [agent, reward] : request.rewards) episode.returns[agent] += reward;
  reply(in.envelope, in.client,
        encode_episode_end(request.id, it->first, episode.steps, episode.returns, episode.logged,
                           instance));
  episode_order.erase(std::find(episode_order.begin(), episode_order.end(), it->first));
  episodes.erase(it);
}

// --- admitting an act

void ServiceGateway::Impl::admit_act(Incoming& in) {
  if (!agents_served(in) || !has_room(in)) return;
  Episode* episode = nullptr;
  if (!episode_accepts(in, episode)) return;
  const std::optional<std::uint64_t> logged_episode = record_step(in, episode);
  enqueue(in, logged_episode);
}

/// The request's agents (the one this gateway serves, for a single observation) are served here,
/// each policy within its max_batch; otherwise refuses it.
bool ServiceGateway::Impl::agents_served(Incoming& in) {
  const GatewayModel& m = model();
  GatewayRequest& request = in.request;
  if (request.single) {  // one observation: the gateway must serve exactly one agent
    for (std::uint32_t a = 0; a < m.num_agents; ++a) {
      if (m.serves_agent(a)) request.agents.push_back(a);
    }
    if (request.agents.size() != 1) {
      fail(in, "malformed",
           "obs is one observation, but this gateway serves " +
               std::to_string(request.agents.size()) + " agents: send a map agent -> observation");
      return false;
    }
  }
  for (const std::uint32_t agent : request.agents) {
    const auto policy = static_cast<std::size_t>(m.agent_policy[agent]);
    if (m.serves_agent(agent) && request.rows > batch_of(m.agent_policy[agent])) {
      fail(in, "too_large",
           "rows " + std::to_string(request.rows) + " is above policy " + m.policy_names[policy] +
               "'s max_batch " + std::to_string(batch_of(m.agent_policy[agent])));
      return false;
    }
    if (!m.serves_agent(agent)) {
      const std::string& other = m.policy_server[policy];
      fail(in, "not_served",
           "agent " + std::to_string(agent) + " (policy " + m.policy_names[policy] +
               ") is not served by " + m.server +
               (other.empty() ? std::string() : "; ask " + other + "'s gateway"));
      return false;
    }
  }
  return true;
}

/// The client is below max_in_flight and the queue below its bounds; otherwise `busy`.
bool ServiceGateway::Impl::has_room(const Incoming& in) {
  const auto found = in_flight.find(in.client);
  const std::uint32_t queued = found == in_flight.end() ? 0 : found->second;
  const std::size_t bytes = in.request.observations.size() * sizeof(float);
  if (queued >= config.max_in_flight || queue.size() >= config.max_queue ||
      (!queue.empty() && queued_bytes + bytes > config.max_queue_bytes)) {
    const bool own = queued >= config.max_in_flight;
    fail_busy(
        in, own ? "client" : "gateway",
        own ? "this client has max_in_flight requests queued" : "the gateway's queue is full");
    return false;
  }
  return true;
}

/// True, having refused it as `unknown_episode`, when the request names an episode of another
/// gateway instance (`instance`, PROTOCOL.md §4, step 3): one this gateway's id may name anew.
bool ServiceGateway::Impl::of_another_instance(const Incoming& in) {
  const GatewayRequest& request = in.request;
  if (!request.instance || *request.instance == instance) return false;
  fail(in, "unknown_episode",
       "the request names episode " + std::to_string(*request.episode) + " of gateway instance " +
           std::to_string(*request.instance) + ", and this one is " + std::to_string(instance) +
           ": the episode was started on another gateway, or before this one restarted");
  return true;
}

/// The episode the request names (`episode`, null when it names none) is open and, when logged,
/// ready for this step; otherwise refuses it.
bool ServiceGateway::Impl::episode_accepts(const Incoming& in, Episode*& episode) {
  const GatewayRequest& request = in.request;
  if (!request.episode) return true;
  if (of_another_instance(in)) return false;
  const auto it = episodes.find(*request.episode);
  if (it == episodes.end()) {
    fail(in, "unknown_episode", "no open episode " + std::to_string(*request.episode));
    return false;
  }
  episode = &it->second;
  if (episode->experience == nullptr) return true;
  if (episode->act_in_flight) {
    fail_busy(in, "episode",
              "an act of this logged episode is still in flight: send the next step after its "
              "reply");
    return false;
  }
  if (const std::string why = episode->experience->check(request); !why.empty()) {
    fail(in, request.rows != 1 ? "too_large" : "not_in_step", why);
    return false;
  }
  return true;
}

/// Counts the step in its episode; a logged episode's rewards complete its previous transitions.
/// Returns the logged episode the act belongs to.
std::optional<std::uint64_t> ServiceGateway::Impl::record_step(Incoming& in, Episode* episode) {
  if (episode == nullptr) return std::nullopt;
  const GatewayRequest& request = in.request;
  std::optional<std::uint64_t> logged_episode;
  if (episode->experience != nullptr) {
    std::vector<nodes::TransitionsMessage> made;
    episode->experience->complete(request, false, made);
    push_experience(made, *episode, in.client);
    episode->act_in_flight = true;
    logged_episode = request.episode;
  }
  ++episode->steps;
  for (const auto& [agent, reward] : request.rewards) episode->returns[agent] += reward;
  return logged_episode;
}

/// Queues the act with its rows per policy and its deadline (arrival + its smallest max_wait).
void ServiceGateway::Impl::enqueue(Incoming& in, std::optional<std::uint64_t> logged_episode) {
  const GatewayModel& m = model();
  GatewayRequest& request = in.request;
  ++in_flight[in.client];
  Pending p;
  p.envelope = std::move(in.envelope);
  p.client = in.client;
  p.arrival = Clock::now();
  p.logged_episode = logged_episode;
  p.rows.observation_size = m.observation_size;
  for (const std::uint32_t agent : request.agents) {
    const int policy = m.agent_policy[agent];
    p.policy_rows[policy] += request.rows;
    for (std::uint32_t r = 0; r < request.rows; ++r) {
      p.rows.agents.push_back(agent);
      p.rows.policies.push_back(static_cast<std::uint32_t>(policy));
    }
  }
  std::chrono::nanoseconds wait = kLongestWait;
  for (const auto& entry : p.policy_rows) wait = std::min(wait, wait_of(entry.first));
  p.deadline = p.arrival + (p.policy_rows.empty() ? std::chrono::nanoseconds(0) : wait);
  p.rows.observations = std::move(request.observations);
  p.request = std::move(request);
  for (const auto& [policy, rows] : p.policy_rows) {
    if (auto* g = series[static_cast<std::size_t>(policy)].in_flight)
      g->Increment(static_cast<double>(rows));
  }
  queued_bytes += p.rows.observations.size() * sizeof(float);
  queue.push_back(std::move(p));
  if (queue.size() > owner.peak_queued_.load(std::memory_order_relaxed)) {
    owner.peak_queued_.store(queue.size(), std::memory_order_relaxed);
  }
}

// --- replies

void ServiceGateway::Impl::reply(const std::vector<zmq::message_t>& envelope,
                                 const std::string& client, const Frame& body) {
  if (send_reply(router, envelope, body)) return;
  owner.dropped_.fetch_add(1, std::memory_order_relaxed);
  count_error(kNoPolicy, "slow_reader");
  log_once(client, "slow_reader", "a reply was dropped: the client does not read them");
}

void ServiceGateway::Impl::refuse(const std::vector<zmq::message_t>& envelope,
                                  const std::string& client, const GatewayError& error,
                                  const std::string& policy) {
  owner.refused_.fetch_add(1, std::memory_order_relaxed);
  if (error.code == "busy") owner.busy_.fetch_add(1, std::memory_order_relaxed);
  count_error(policy, error.code);
  log_once(client, error.code, error.reason);
  reply(envelope, client, encode_error(error));
}

void ServiceGateway::Impl::fail(const Incoming& in, const std::string& code,
                                const std::string& reason, const std::string& policy) {
  refuse(in.envelope, in.client, error_of(in.request, code, reason), policy);
}

void ServiceGateway::Impl::fail_busy(const Incoming& in, const std::string& scope,
                                     const std::string& reason) {
  GatewayError error = error_of(in.request, "busy", reason);
  error.busy = scope;
  refuse(in.envelope, in.client, error, kNoPolicy);
}

std::vector<PolicyStatus> ServiceGateway::Impl::statuses() const {
  const GatewayModel& m = model();
  std::vector<PolicyStatus> out;
  for (const int p : m.hosted) {
    out.push_back({m.policy_names[static_cast<std::size_t>(p)], backend->version(p), true,
                   batch_of(p),
                   static_cast<std::uint64_t>(
                       std::chrono::duration_cast<std::chrono::microseconds>(wait_of(p)).count()),
                   replayed(p)});
  }
  return out;
}

// --- batching and serving

/// The policies with max_batch rows queued: their requests are due whatever their deadline.
std::set<int> ServiceGateway::Impl::full_policies() const {
  std::map<int, std::size_t> rows;
  std::set<int> full;
  for (const Pending& p : queue) {
    for (const auto& [policy, n] : p.policy_rows) {
      if ((rows[policy] += n) >= batch_of(policy)) full.insert(policy);
    }
  }
  return full;
}

/// Takes the due requests in arrival order while every policy stays within its max_batch (the
/// first due request always: a lone request is served whatever its size); the others stay.
Batch ServiceGateway::Impl::take_due(Clock::time_point now) {
  const std::set<int> full = full_policies();
  Batch batch;
  std::deque<Pending> waiting;
  while (!queue.empty()) {
    Pending next = std::move(queue.front());
    queue.pop_front();
    bool take = is_due(next, now, full);
    for (const auto& [policy, n] : next.policy_rows) {
      take = take && (batch.requests.empty() || batch.rows[policy] + n <= batch_of(policy));
    }
    if (!take) {
      waiting.push_back(std::move(next));
      continue;
    }
    for (const auto& [policy, n] : next.policy_rows) batch.rows[policy] += n;
    queued_bytes -= next.rows.observations.size() * sizeof(float);
    batch.requests.push_back(std::move(next));
  }
  queue.swap(waiting);
  return batch;
}

/// One backend call for the whole batch.
ForwardPass ServiceGateway::Impl::forward(
    const std::vector<nodes::AgentObservationsMessage>& requests) {
  ForwardPass pass;
  try {
    pass.answers = backend->serve(requests);
    if (pass.answers.size() != requests.size())
      pass.failure = "the policy answered the wrong count";
  } catch (const std::exception& e) {
    pass.failure = e.what();
  }
  owner.passes_.fetch_add(1, std::memory_order_relaxed);
  return pass;
}

void ServiceGateway::Impl::observe_pass(const std::map<int, std::size_t>& rows,
                                        Clock::duration compute) {
  for (const auto& [policy, n] : rows) {
    const PolicySeries& ps = series[static_cast<std::size_t>(policy)];
    if (ps.batch != nullptr) ps.batch->Observe(static_cast<double>(n));
    if (ps.compute != nullptr) ps.compute->Observe(seconds(compute));
  }
}

/// Replies to one served act; a logged episode's steps open with what the policies chose.
void ServiceGateway::Impl::answer_act(const Pending& p, const nodes::AgentObservationsMessage& rows,
                                      const nodes::AgentActionsMessage& a) {
  const GatewayRequest& request = p.request;
  ActAnswer answer;
  answer.agents = request.agents;
  for (std::size_t k = 0; k < request.agents.size(); ++k) {
    const std::size_t first = k * request.rows;
    answer.policies.push_back(model().policy_names[a.policies.at(first)]);
    answer.versions.push_back(a.versions.at(first));
  }
  answer.actions = a.actions;
  if (p.logged_episode) {
    // The episode may be forgotten meanwhile.
    const auto e = episodes.find(*p.logged_episode);
    if (e != episodes.end() && e->second.experience != nullptr) {
      e->second.experience->open(request.agents, rows.observations, a.actions, answer.versions);
      answer.logged = e->second.logged;
    }
  }
  owner.rows_answered_.fetch_add(a.rows(), std::memory_order_relaxed);
  reply(p.envelope, p.client, encode_act(request, answer));
}

/// After the reply: the request's latency and in-flight counts, its client's and episode's.
void ServiceGateway::Impl::finish(const Pending& p) {
  const Clock::time_point sent = Clock::now();
  for (const auto& [policy, n] : p.policy_rows) {
    const PolicySeries& ps = series[static_cast<std::size_t>(policy)];
    if (ps.total != nullptr) ps.total->Observe(seconds(sent - p.arrival));
    if (ps.in_flight != nullptr) ps.in_flight->Decrement(static_cast<double>(n));
  }
  const auto it = in_flight.find(p.client);
  if (it != in_flight.end() && --it->second == 0) in_flight.erase(it);
  if (p.logged_episode) {
    const auto e = episodes.find(*p.logged_episode);
    if (e != episodes.end()) e->second.act_in_flight = false;
  }
}

}  // namespace tagflow::gateway
