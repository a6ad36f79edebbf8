#include "federate/reactor_federate.hpp"

#include <algorithm>
#include <array>

#include "monitoring/process_metrics.hpp"
#include "transport/socket_wait.hpp"
#include "transport/wire_socket.hpp"

namespace tagflow::coordinator {

ReactorFederate::ReactorFederate(const FederationSpec& spec, std::string id,
                                 ReactorFederateOptions options)
    : spec_(spec),
      id_(std::move(id)),
      options_(std::move(options)),
      context_(1),
      plane_(context_, spec_, id_, options_.bind_endpoint, options_.metrics) {
  plane_.set_value_log(options_.value_log);
  if (options_.metrics != nullptr) {
    using monitoring::Metric;
    by_coordinator_ =
        &options_.metrics->counter(Metric::federation_grants, {{"by", "coordinator"}});
    by_upstreams_ = &options_.metrics->counter(Metric::federation_grants, {{"by", "upstreams"}});
    deferred_waits_ = &options_.metrics->counter(Metric::federation_deferred_waits);
    waiting_for_start_ = &options_.metrics->gauge(Metric::federation_waiting_for_start);
    waiting_for_start_->Set(1);  // from now until START (join())
  }
  if (const FederateSpec* me = spec_.find(id_)) {
    for (const UpstreamLink& link : me->upstreams) upstream_ids_.push_back(link.federate);
  }
  sent_upstream_.assign(upstream_ids_.size(), false);
}

ReactorFederate::~ReactorFederate() { client_.reset(); }

WireTag ReactorFederate::join(std::chrono::milliseconds timeout) {
  FederateOptions options = FederateOptions::from_spec(spec_, id_);
  options.data_endpoint =
      options_.advertised_endpoint.empty() ? plane_.endpoint() : options_.advertised_endpoint;
  options.answer_stop_requests = false;  // answered with the scheduler's floor (handle_stop)
  options.protocol_version = options_.protocol_version;
  client_ = std::make_unique<FederateClient>(context_, options);
  if (waiting_for_start_ != nullptr) waiting_for_start_->Set(1);
  const ControlMessage start = client_->join(timeout, [this] { plane_.watch_connections(); });
  plane_.connect(start, options_.protocol_version);
  if (waiting_for_start_ != nullptr) waiting_for_start_->Set(0);
  return start.tag;
}

void ReactorFederate::bind_input(const std::string& from, std::uint32_t port,
                                 reactors::PhysicalAction<transport::Payload>& action) {
  if (cycle_link_from(from)) {
    throw FederationConfigError(
        "federate '" + id_ + "': the input from '" + from +
        "' is on a zero-delay cycle across federates, and an input bound with bind_input() "
        "cannot wait inside a tag for its value or ABSENT; receive it with a NetworkReceiver, or "
        "give a connection of the cycle a delay");
  }
  inputs_[{from, port}] = &action;
  plane_.allow_input(from, port);
}

bool ReactorFederate::cycle_link_from(const std::string& from) const {
  return spec_.zero_delay_cycle_link(from, id_);
}

std::size_t ReactorFederate::bind_cycle_input(const std::string& from, std::uint32_t port,
                                              reactors::PhysicalAction<transport::Payload>& action,
                                              reactors::Reaction& deliver) {
  plane_.allow_input(from, port);
  cycle_delivers_.push_back(&deliver);
  return cycle_inputs_.add(from, port, action);
}

void ReactorFederate::bind_output(const std::string& to, std::uint32_t port,
                                  reactors::Reaction& sender) {
  if (!spec_.zero_delay_cycle_link(id_, to)) return;
  CycleOutput output;
  output.to = to;
  output.port = port;
  output.sender = &sender;
  cycle_outputs_.push_back(std::move(output));
}

std::optional<transport::Payload> ReactorFederate::await_cycle_input(std::size_t index,
                                                                     const reactors::Tag& tag,
                                                                     std::size_t level) {
  if (!cycle_inputs_.known(index, tag)) {
    // Whatever this federate sends on the cycle before this reaction is settled: tell the
    // downstreams now, since what they send back may be what this reaction waits for.
    push({Command::kAbsent, tag, {}, 0, {}, level});
  }
  return cycle_inputs_.take(index, tag);
}

void ReactorFederate::send_absents(const WireTag& tag, std::size_t below_level) {
  for (CycleOutput& output : cycle_outputs_) {
    if (output.level >= below_level || output.status_through >= tag) continue;
    if (!plane_.sends_to(output.to)) continue;
    output.status_through = tag;
    plane_.report_in_transit(*client_, output.to, tag);  // counted by grants like a data message
    plane_.send_absent(output.to, output.port, tag);
  }
}

void ReactorFederate::order_cycle_ports(reactors::Environment& env) {
  if (cycle_delivers_.empty() || cycle_outputs_.empty()) return;
  if (env.assembled()) {
    throw FederationError("federate '" + id_ +
                          "': its environment was assembled before run(); a zero-delay cycle "
                          "across federates needs run() to order its network ports first");
  }
  // Own cycle outputs first, so that this federate never waits for a cycle input before it has
  // sent what does not depend on it (hints that would make a cycle are skipped).
  for (reactors::Reaction* deliver : cycle_delivers_) {
    for (const CycleOutput& output : cycle_outputs_) env.order_before(*output.sender, *deliver);
  }
}

void ReactorFederate::push(Command command) {
  bool was_empty = false;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    was_empty = commands_.empty();
    commands_.push_back(std::move(command));
  }
  // One wake-up per batch: the network thread reads the eventfd before it takes the whole
  // queue, so a command pushed onto a non-empty queue is taken with the ones before it. The
  // environment's own thread, when it owns the sockets, drains the queue before it next waits.
  if (!was_empty) return;
  if (owner_is_runner_.load(std::memory_order_acquire) && std::this_thread::get_id() == runner_) {
    return;
  }
  wake_.signal();
}

ReactorFederate::Readable ReactorFederate::wait_for_sockets(std::chrono::milliseconds limit) {
  // A send on the control socket changes what it holds (ZeroMQ takes in its commands then).
  if (client_->sends() != control_sends_read_out_) {
    control_read_out_ = false;
    control_sends_read_out_ = client_->sends();
  }
  std::array<transport::WatchedSocket, 2> sockets{
      {{client_->socket(), control_read_out_}, {plane_.socket(), data_read_out_}}};
  if (transport::wait_for_input(sockets, wake_.fd(), limit)) wake_.clear();
  return {sockets[0].readable, sockets[1].readable};
}

void ReactorFederate::send(const std::string& to, std::uint32_t port, const reactors::Tag& tag,
                           transport::Payload value) {
  push({Command::kSend, plane_.arrival_tag(to, tag), to, port, std::move(value)});
}

reactors::Tag ReactorFederate::arrival_tag(const std::string& to, const reactors::Tag& tag) const {
  return plane_.arrival_tag(to, tag);
}

bool ReactorFederate::resend_in_transit(const std::string& to, std::uint32_t port,
                                        const reactors::Tag& tag, const transport::Payload& value) {
  if (!plane_.sends_to(to)) return false;
  // Reported before it is sent, and both before RESUMED: no grant can pass it (§9.6).
  client_->send_in_transit(to, tag);
  plane_.send_value(to, port, tag, value);
  return true;
}

void ReactorFederate::report_resumed(const reactors::Tag& tag) { client_->send_resumed(tag); }

void ReactorFederate::report_failure(const std::string& reason) noexcept {
  if (client_) client_->report_failure(reason);
}

void ReactorFederate::report_checkpoint(const reactors::Tag& tag, std::uint64_t bytes,
                                        std::uint64_t checksum) {
  Command command{Command::kCheckpoint, tag, "", 0, {}};
  command.part_bytes = bytes;
  command.part_checksum = checksum;
  push(std::move(command));
}

void ReactorFederate::drain_commands() {
  // The eventfd; with the environment's thread as the owner, wait_on_sockets reads it instead.
  if (!owner_is_runner_.load(std::memory_order_relaxed)) wake_.clear();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (commands_.empty()) return;
    batch_.swap(commands_);
  }
  mark_notices();
  for (Command& command : batch_) {
    switch (command.kind) {
      case Command::kNet:
        announce_or_defer(command.tag);
        break;
      case Command::kStop:
        propose_stop(command.tag);
        break;
      case Command::kAbsent:
        send_absents(command.tag, command.level);
        break;
      case Command::kLtc:
        // Every cycle output not written at the completed tag is absent there.
        send_absents(command.tag, static_cast<std::size_t>(-1));
        plane_.complete(command.tag);
        // The downstreams sent to hear of it directly, before the LTC leaves for the
        // coordinator (PROTOCOL.md §3.8).
        plane_.send_completed_notices();
        // Every upstream was sent a value at this tag: each will complete a tag at which it
        // sends back, and its notice will follow (§3.9).
        expect_notices_ =
            !sent_upstream_.empty() && std::all_of(sent_upstream_.begin(), sent_upstream_.end(),
                                                   [](bool sent) { return sent; });
        sent_upstream_.assign(sent_upstream_.size(), false);
        if (expect_notices_ && !answer_since_) {
          answer_since_ = std::chrono::steady_clock::now();
          answer_tag_ = command.tag;
        }
        break;
      case Command::kSend:
        send_value(command);
        break;
      case Command::kCheckpoint:
        client_->send_checkpoint_written(command.tag, command.part_bytes, command.part_checksum);
        break;
    }
  }
  batch_.clear();  // keeps its capacity for the next batch
  // No LTC at the end of the batch: the scheduler announces its next tag right after every tag
  // it completes (reactors/federation.hpp step 2), and announce() sends both in one frame.
}

void ReactorFederate::mark_notices() {
  // A tag's values to one downstream, then its COMPLETED notice to that downstream, in one go:
  // sent apart (a driver's values to 15 workers, then the 15 notices), a value and its notice
  // often leave in two writes and wake the receiver twice, the first time for a value it cannot
  // run yet. The notice may move up to the value only when nothing else for that downstream
  // comes between them: with cycle outputs, the LTC itself may send ABSENTs first.
  if (!cycle_outputs_.empty()) return;
  const WireTag* ltc = nullptr;  // the next LTC after the command, walking backwards
  std::vector<const std::string*> notified;
  for (auto command = batch_.rbegin(); command != batch_.rend(); ++command) {
    if (command->kind == Command::kLtc) {
      ltc = &command->tag;
      notified.clear();
    } else if (command->kind == Command::kSend && ltc != nullptr &&
               std::none_of(notified.begin(), notified.end(),
                            [&](const std::string* to) { return *to == command->to; })) {
      command->notice = *ltc;
      notified.push_back(&command->to);
    }
  }
}

void ReactorFederate::announce_or_defer(const WireTag& next) {
  pending_next_ = next;
  // About to wait: next is above every grant (a tag the grant covers already, e.g. one a
  // received value asks for, is announced too, but runs at once).
  const bool waits = next > granted_to_env_;
  bool eager = false;
  if (waits && eager_waits_ > 0) {
    --eager_waits_;
    eager = true;
  } else if (waits) {
    ++lazy_waits_;
  }
  // Only once the coordinator has heard that this federate may defer (so that it asks when
  // someone waits for its grant).
  if (!eager && reporting_now() == Reporting::kMayDefer &&
      plane_.announced_reporting() == Reporting::kMayDefer &&
      plane_.unreported_tags() < kMaxDeferredTags) {
    if (waits) {
      deferred_since_ = std::chrono::steady_clock::now();
      if (deferred_waits_ != nullptr) deferred_waits_->Increment();
    }
    return;
  }
  report(next);
}

Reporting ReactorFederate::reporting_now() const {
  // Waits its upstreams' notices will end do not need the coordinator's grant; outside an eager
  // stretch they may go unreported. Never on a zero-delay cycle, whose PTAG reads the NET.
  if (!expect_notices_ || plane_.on_zero_delay_cycle()) {
    return Reporting::kEveryWait;
  }
  return eager_waits_ > 0 ? Reporting::kEveryWaitByNotices : Reporting::kMayDefer;
}

void ReactorFederate::report(const WireTag& next) {
  deferred_since_.reset();
  if (next == transport::kNever) {
    plane_.flush_completed(*client_, std::nullopt);
  } else {
    plane_.announce(*client_, next, reporting_now());
  }
}

void ReactorFederate::report_eagerly() {
  // Asked again right after the last stretch: the coordinator needs this federate's reports
  // steadily (another federate's grants go through it), so the stretch doubles; else it is short.
  eager_stretch_ =
      lazy_waits_ <= 2 ? std::min(std::max(2, 2 * eager_stretch_), kMaxEagerStretch) : 2;
  eager_waits_ = eager_stretch_;
  lazy_waits_ = 0;
  report(pending_next_);
}

std::chrono::nanoseconds ReactorFederate::overdue() const {
  // Twice the answers' time: a federate whose peers answer in 2 ms (16 processes sharing two
  // cores) would otherwise report every wait at 1 ms, and the coordinator answer every report.
  return std::clamp<std::chrono::nanoseconds>(2 * answer_time_, kOverdue, kMaxOverdue);
}

void ReactorFederate::note_answer(const WireTag& bound) {
  if (!answer_since_ || bound <= answer_tag_) return;
  const std::chrono::nanoseconds took = std::chrono::steady_clock::now() - *answer_since_;
  answer_since_.reset();
  // Up at once, down by an eighth of the difference per answer: one quick answer does not undo
  // a slow stretch, and one slow answer is forgotten within a few dozen.
  answer_time_ = took >= answer_time_ ? took : answer_time_ - (answer_time_ - took) / 8;
}

std::chrono::milliseconds ReactorFederate::poll_limit(std::chrono::milliseconds limit) const {
  if (!deferred_since_ || pending_next_ <= granted_to_env_) return limit;
  // Rounded up: a poll of 0 ms would spin until the wait is overdue.
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deferred_since_ + overdue() -
                                                                 std::chrono::steady_clock::now());
  return std::min(std::max(left, std::chrono::milliseconds(1)), limit);
}

void ReactorFederate::send_value(const Command& command) {
  if (!plane_.sends_to(command.to)) return;
  for (std::size_t i = 0; i < upstream_ids_.size(); ++i) {
    if (upstream_ids_[i] == command.to) sent_upstream_[i] = true;
  }
  // Reported with the LTC that follows (PROTOCOL.md §3.2).
  plane_.report_in_transit(*client_, command.to, command.tag);
  plane_.send_value(command.to, command.port, command.tag, command.value, command.notice);
  for (CycleOutput& output : cycle_outputs_) {
    if (output.to == command.to && output.port == command.port) {
      output.status_through = std::max(output.status_through, command.tag);
    }
  }
}

void ReactorFederate::deliver(transport::ReceivedMessage& message) {
  const transport::WireHeader& header = message.header;
  const std::optional<std::size_t> cycle_input = cycle_inputs_.find(header.from, header.port);
  if (header.kind == transport::MessageKind::kPortAbsent) {
    if (cycle_input) cycle_inputs_.on_arrival(*cycle_input, header.tag, std::nullopt);
    return;
  }
  transport::Payload value = transport::take_payload(message);
  if (cycle_input) {
    cycle_inputs_.on_arrival(*cycle_input, header.tag, std::move(value));
  } else if (const auto input = inputs_.find({header.from, header.port}); input != inputs_.end()) {
    input->second->schedule_at(header.tag, std::move(value));
  }
}

void ReactorFederate::update_grant(reactors::Environment& env) {
  // Called after the data plane's receive(): every value counted here was scheduled before the
  // grant.
  const WireTag granted = client_->granted();
  const bool granted_later = granted > tag_applied_;
  const bool met = granted_later && plane_.counts_met(client_->granted_counts(), granted);
  if (granted_later) trace_data_wait(env, granted, met);
  if (met) {
    tag_applied_ = granted;
    cycle_inputs_.known_through(granted);
    if (granted > granted_to_env_) {
      if (by_coordinator_ != nullptr) by_coordinator_->Increment();
      granted_to_env_ = granted;
      env.grant(granted);
    }
  }
  // The upstreams' own COMPLETED notices: a bound as safe as a TAG, without the coordinator's
  // hop (PROTOCOL.md §3.8). Their values came before them and were scheduled above.
  const WireTag direct = plane_.upstream_bound();
  note_answer(direct);
  if (direct > granted_to_env_) {
    if (by_upstreams_ != nullptr) by_upstreams_->Increment();
    cycle_inputs_.known_through(direct);
    granted_to_env_ = direct;
    env.grant(direct);
  }
  // PTAG(g): nothing more arrives below g; at g only the cycle's outputs may. The tag may run,
  // its cycle inputs' deliver reactions waiting inside it for their status (§3.7).
  const WireTag provisional = client_->provisional();
  if (provisional <= granted_to_env_) return;
  const WireTag below = provisional.predecessor();
  if (!plane_.counts_met(client_->provisional_counts(), below)) return;
  cycle_inputs_.known_through(below);
  cycle_inputs_.provisional(provisional);  // the deliver reactions run at g, before the grant
  if (by_coordinator_ != nullptr) by_coordinator_->Increment();
  granted_to_env_ = provisional;
  env.grant(provisional);
}

void ReactorFederate::trace_data_wait(reactors::Environment& env, const WireTag& granted,
                                      bool met) {
  trace::TraceRecorder* const tracer = trace::active();
  if (tracer == nullptr) return;
  // The scheduler's own thread: its traced wait becomes this one, so the spans nest (a span of
  // their own overlapped the scheduler's wait for the grant).
  if (owner_is_runner_.load(std::memory_order_relaxed)) {
    if (met) {
      env.scheduler().end_data_wait();
    } else {
      env.scheduler().begin_data_wait(granted);
    }
    return;
  }
  if (!met) {
    if (data_wait_since_ == 0) {
      data_wait_since_ = trace::TraceRecorder::now_ns();
      data_wait_tag_ = granted;
    }
    return;
  }
  if (data_wait_since_ == 0) return;
  tracer->record({trace::Kind::kWaitData, data_wait_since_,
                  trace::TraceRecorder::now_ns() - data_wait_since_, data_wait_tag_, 0, 0, 0, 0});
  data_wait_since_ = 0;
}

void ReactorFederate::propose_stop(const WireTag& floor) {
  if (stop_tag_) return;  // decided already
  if (asked_) {
    client_->send_stop_reply(std::max(*asked_, floor));
    asked_.reset();
  } else if (!proposed_) {
    client_->send_stop_request(floor);
  }
  proposed_ = true;
}

void ReactorFederate::handle_stop(reactors::Environment& env) {
  if (const std::optional<WireTag> asked = client_->take_stop_request()) {
    // Another federate proposed a stop: ask the scheduler for its floor (it calls the
    // stop_requested hook at its next advance and holds there); the reply goes in propose_stop.
    asked_ = asked;
    env.request_stop();
  }
  if (!stop_applied_ && client_->stop_tag()) {
    stop_applied_ = true;
    stop_tag_ = client_->stop_tag();
    stop_proposal_ = client_->stop_proposal();
    env.stop_at(*stop_tag_);
  }
}

void ReactorFederate::network_round(reactors::Environment& env, Readable readable) {
  // A socket the poll found empty is not read; whatever comes to it after the poll makes the
  // next poll return at once (ZeroMQ's poll looks at each socket's queue before it sleeps).
  if (readable.data) {
    data_read_out_ = false;  // until it is: deliver() may throw
    data_read_out_ =
        !plane_.receive([this](transport::ReceivedMessage& message) { deliver(message); });
  } else {
    plane_.watch_connections();
  }
  if (readable.control) {
    control_read_out_ = false;
    const std::uint64_t sends = client_->sends();
    client_->poll(std::chrono::milliseconds(0));  // reads until nothing waits
    control_read_out_ = true;
    control_sends_read_out_ = sends;
    // FLOOR (§5.1; kNever until one came, which raises nothing): the channels' digest records
    // no cutoff can need go.
    env.raise_cutoff_floor(client_->cutoff_floor());
  } else {
    client_->check_coordinator();
  }
  update_grant(env);
  handle_stop(env);
  // A wait left unreported (§3.9): the coordinator asks for it when another federate waits for
  // its grant; and one the notices have not ended within overdue() is reported anyway.
  const bool asked = client_->take_report_request();
  const bool unreported = plane_.has_unreported() || pending_next_ != plane_.announced();
  if (asked && unreported) {
    report_eagerly();
  } else if (deferred_since_ && pending_next_ > granted_to_env_ &&
             std::chrono::steady_clock::now() - *deferred_since_ >= overdue()) {
    report_eagerly();
  }
}

void ReactorFederate::fail(reactors::Environment& env, const std::exception& e) {
  std::string reason = e.what();
  if (const auto* cap = dynamic_cast<const MessageCapError*>(&e); cap != nullptr) {
    if (options_.port_name) reason = cap->with_port_name(id_, options_.port_name(cap->port()));
    cap_error_.emplace(*cap, reason);  // run() throws it: no restart can send that value
  }
  // A data message its grants count was dropped: the coordinator ends the run now.
  if (dynamic_cast<const DataLossError*>(&e) != nullptr) client_->report_failure(reason);
  error_ = reason;
  cycle_inputs_.abort();  // a deliver reaction waiting for a cycle input gives up
  // The run is over: stop now, without waiting for grants or a stop decision.
  env.stop_without_grant();
}

void ReactorFederate::finish() {
  drain_commands();  // the last tag's outputs and LTC
  plane_.flush_completed(*client_, std::nullopt);
}

void ReactorFederate::network_loop(reactors::Environment& env) {
  if (trace::TraceRecorder* tracer = trace::active()) tracer->name_thread(id_ + " network", id_);
  try {
    while (!done_.load(std::memory_order_acquire)) {
      Readable readable{false, false};
      {
        const trace::Span waiting(trace::Kind::kWaitSocket, transport::kNever);
        readable = wait_for_sockets(poll_limit(std::chrono::milliseconds(20)));
      }
      drain_commands();
      network_round(env, readable);  // what is left over wakes the next wait at once
    }
    finish();
  } catch (const std::exception& e) {
    fail(env, e);
  }
}

void ReactorFederate::wait_on_sockets(reactors::Environment& env, std::int64_t timeout_ns) {
  // At most 20 ms, like the network loop: a lost coordinator is noticed by client_->poll().
  const auto limit = std::chrono::milliseconds(
      timeout_ns < 0 ? 20 : std::min<std::int64_t>(20, timeout_ns / 1'000'000));
  if (!error_.empty()) {  // failed: nothing more to do on the sockets; the run is stopping
    zmq::pollitem_t wake{nullptr, wake_.fd(), ZMQ_POLLIN, 0};
    zmq::poll(&wake, 1, limit);
    return;
  }
  try {
    drain_commands();  // what the last tag sent leaves before this thread sleeps
    const Readable readable = wait_for_sockets(poll_limit(limit));
    drain_commands();
    network_round(env, readable);
    last_look_ = std::chrono::steady_clock::now();
  } catch (const std::exception& e) {
    fail(env, e);
  }
}

void ReactorFederate::look_at_sockets(reactors::Environment& env) {
  if (!error_.empty()) return;
  try {
    drain_commands();
    // A federate granted far ahead may not wait for a while: its sockets are still read every
    // millisecond (stop requests, the coordinator's messages, bounded receive queues).
    const auto now = std::chrono::steady_clock::now();
    if (now - last_look_ < std::chrono::milliseconds(1)) return;
    last_look_ = now;
    network_round(env);
  } catch (const std::exception& e) {
    fail(env, e);
  }
}

void ReactorFederate::run(reactors::Environment& env) {
  if (!client_) throw FederationError("federate '" + id_ + "': run() before join()");
  reactors::FederationHooks hooks;
  hooks.next_event_tag = [this](reactors::Tag next) { push({Command::kNet, next, {}, 0, {}}); };
  hooks.tag_complete = [this](reactors::Tag tag) { push({Command::kLtc, tag, {}, 0, {}}); };
  hooks.stop_requested = [this](reactors::Tag proposed) {
    push({Command::kStop, proposed, {}, 0, {}});
  };
  // A deliver reaction waiting inside a tag for a cycle input needs someone else on the
  // sockets; so do reactions on several workers, which would send while the owner polls.
  const bool owner_is_runner =
      !options_.network_thread && env.config().workers == 1 && cycle_delivers_.empty();
  if (owner_is_runner) {
    runner_ = std::this_thread::get_id();
    owner_is_runner_.store(true, std::memory_order_release);  // runner_ first: push() reads it
    last_look_ = std::chrono::steady_clock::now();
    hooks.wait = [this, &env](std::int64_t timeout_ns) { wait_on_sockets(env, timeout_ns); };
    hooks.poll = [this, &env] { look_at_sockets(env); };
    hooks.wake = [this] { wake_.signal(); };
  }
  env.enable_tag_barrier(reactors::Tag::never());
  env.set_federation_hooks(std::move(hooks));
  order_cycle_ports(env);
  env.assemble();
  for (CycleOutput& output : cycle_outputs_) output.level = output.sender->level();
  std::thread network;
  if (!owner_is_runner) network = std::thread([this, &env] { network_loop(env); });
  const auto end_network = [&] {
    done_.store(true, std::memory_order_release);
    if (network.joinable()) {
      network.join();
    } else if (error_.empty()) {
      try {
        finish();
      } catch (const std::exception& e) {
        fail(env, e);
      }
    }
  };
  try {
    env.run();
  } catch (const reactors::ReactionError& e) {
    // A reaction of this federate threw: the coordinator ends the run, naming it (§3.4).
    end_network();
    const std::string why = "federate '" + id_ + "': " + e.what();
    client_->report_failure(why);
    throw FederationError(why);
  }
  end_network();
  if (cap_error_) throw *cap_error_;
  if (!error_.empty()) throw FederationError(error_);
  client_->resign();
}

std::optional<reactors::Tag> ReactorFederate::stop_proposal() const {
  if (!stop_proposal_) return std::nullopt;
  return *stop_proposal_;
}

std::optional<reactors::Tag> ReactorFederate::granted_stop_tag() const {
  if (!stop_tag_) return std::nullopt;
  return *stop_tag_;
}

NetworkReceiver::NetworkReceiver(std::string name, reactors::Environment& env,
                                 ReactorFederate& federate, const std::string& from,
                                 std::uint32_t port)
    : Reactor(std::move(name), env) {
  reactors::Reaction& deliver = reaction("deliver").triggers(received).effects(out);
  if (!federate.cycle_link_from(from)) {
    federate.bind_input(from, port, received);
    deliver.body([this] { out.set(received.get()); });  // shares the received frame
    return;
  }
  // On a zero-delay cycle: the value (or its absence) comes from the federate, maybe later in
  // the tag; the action only makes this reaction run at the tag.
  const std::size_t index = federate.bind_cycle_input(from, port, received, deliver);
  deliver.body([this, &federate, &deliver, index] {
    if (std::optional<transport::Payload> value =
            federate.await_cycle_input(index, tag(), deliver.level())) {
      out.set(std::move(*value));
    }
  });
}

NetworkSender::NetworkSender(std::string name, reactors::Environment& env,
                             ReactorFederate& federate, std::string to, std::uint32_t port)
    : Reactor(std::move(name), env) {
  reactors::Reaction& sender = reaction("send").triggers(in);
  federate.bind_output(to, port, sender);
  sender.body(
      [this, &federate, to = std::move(to), port] { federate.send(to, port, tag(), in.get()); });
}

}  // namespace tagflow::coordinator
