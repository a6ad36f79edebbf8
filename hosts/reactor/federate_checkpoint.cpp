#include "hosts/reactor/federate_checkpoint.hpp"

#include <filesystem>
#include <utility>

#include "common/atomic_file.hpp"
#include "common/trace_recorder.hpp"

#include "federation/checkpoint_store.hpp"

namespace tagflow::hosts {

/// The timer at every (k·E, 0) and the reaction that builds the part; at the shutdown, the
/// reaction that waits for the last part's writer.
class FederateCheckpoint::TimerReactor : public reactors::Reactor {
 public:
  reactors::Timer tick;
  reactors::Reaction* write = nullptr;

  TimerReactor(std::string name, reactors::Environment& env, std::chrono::nanoseconds every,
               FederateCheckpoint& owner)
      : reactors::Reactor(std::move(name), env), tick("tick", this, every, every) {
    write =
        &reaction("write_checkpoint").triggers(tick).body([this, &owner] { owner.write(tag()); });
    reaction("finish_checkpoint").triggers(shutdown()).body([&owner] { owner.wait_for_writer(); });
  }
};

FederateCheckpoint::FederateCheckpoint(std::string federate, std::string root,
                                       std::chrono::nanoseconds every, int keep,
                                       coordinator::ReactorFederate& federate_link,
                                       ReplicaBinding& binding, monitoring::ProcessMetrics* metrics)
    : federate_(std::move(federate)),
      root_(std::move(root)),
      every_(every),
      keep_(keep),
      link_(federate_link),
      binding_(binding) {
  if (metrics != nullptr) {
    using monitoring::Metric;
    parts_metric_ = &metrics->counter(Metric::checkpoint_parts);
    bytes_metric_ = &metrics->counter(Metric::checkpoint_written_bytes);
    resent_metric_ = &metrics->counter(Metric::checkpoint_resent_messages);
    resumed_from_metric_ = &metrics->gauge(Metric::checkpoint_resumed_from);
  }
}

FederateCheckpoint::~FederateCheckpoint() {
  if (writer_.joinable()) writer_.join();
}

void FederateCheckpoint::install(reactors::Environment& env) {
  auto& timer = env.add<TimerReactor>("__checkpoint", every_, *this);
  for (reactors::Reactor* reactor : env.reactors()) {
    if (reactor == &timer) continue;
    for (const auto& reaction : reactor->reactions()) env.order_before(*timer.write, *reaction);
  }
}

void FederateCheckpoint::record_sent(const std::string& to, std::uint32_t port,
                                     const reactors::Tag& sent, const reactors::Tag& arrival,
                                     const transport::Payload& bytes) {
  // The first checkpoint tag after `sent`: only a message arriving at or after it is in transit
  // there (most links deliver within the same millisecond and are never recorded).
  const std::int64_t next = (sent.time_ns() / every_.count() + 1) * every_.count();
  if (arrival < reactors::Tag(next, 0)) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  sent_.push_back({to, port, arrival, bytes});
}

namespace {

/// The start of the error that fails a federate whose part at `at` could not be written.
std::string cannot_write(const reactors::Tag& at) {
  return "cannot write its part of the checkpoint at logical time " + std::to_string(at.time_ns()) +
         " ns: ";
}

}  // namespace

/// The attachments of one part: each streams into its temporary file in the part's directory
/// (counted into `bytes`), kept in the part for the writer thread to complete.
class FederateCheckpoint::PartAttachments : public StateAttachments {
 public:
  PartAttachments(PendingPart& part, const std::string& federate, std::uint64_t& bytes)
      : part_(part), federate_(federate), bytes_(bytes) {}
  ByteSink add(const std::string& name, std::function<void(AtomicFile&)> finish) override {
    part_.attachments.push_back(
        coordinator::start_attachment(part_.directory, federate_, name, std::move(finish)));
    AtomicFile* file = part_.attachments.back().file.get();
    std::uint64_t* bytes = &bytes_;
    return [file, bytes](std::string_view piece) {
      file->write(piece);
      *bytes += piece.size();
    };
  }

 private:
  PendingPart& part_;
  const std::string& federate_;
  std::uint64_t& bytes_;
};

void FederateCheckpoint::wait_for_writer() {
  if (writer_.joinable()) writer_.join();
  if (writer_error_) std::rethrow_exception(std::exchange(writer_error_, nullptr));
}

void FederateCheckpoint::write(const reactors::Tag& at) {
  // One part at a time (memory stays bounded by one part in flight); a part that could not be
  // written fails the federate here, naming its file.
  wait_for_writer();
  const auto started = std::chrono::steady_clock::now();
  trace::Span span(trace::Kind::kCheckpoint, at);  // tracing/README.md
  PendingPart part;
  part.at = at;
  part.directory = coordinator::checkpoint_directory(root_, at.time_ns());
  StateWriter state;
  std::uint64_t attached_bytes = 0;
  {
    // The attachments (a replay table) stream into their temporary files now; the writer
    // completes them. One that cannot be started fails the federate here, named as the writer's.
    PartAttachments files(part, federate_, attached_bytes);
    try {
      binding_.save_state(state, files);
    } catch (const StateError& e) {
      throw StateError(cannot_write(at) + e.what());
    } catch (const AtomicFileError& e) {
      throw StateError(cannot_write(at) + e.what());
    }
  }
  StateWriter body;
  body.bytes(state.data());
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::vector<const Sent*> carried;
    for (const Sent& s : sent_) {
      if (!(s.arrival < at)) carried.push_back(&s);
    }
    body.u64(carried.size());
    for (const Sent* s : carried) {
      body.string(s->to);
      body.u32(s->port);
      body.i64(s->arrival.time_ns());
      body.u32(s->arrival.microstep());
      body.bytes(std::string_view(reinterpret_cast<const char*>(s->bytes.bytes()), s->bytes.size));
    }
    // Kept: what is still in transit at the next checkpoint tag.
    const reactors::Tag next(at.time_ns() + every_.count(), 0);
    std::vector<Sent> kept;
    for (Sent& s : sent_) {
      if (!(s.arrival < next)) kept.push_back(std::move(s));
    }
    sent_ = std::move(kept);
  }
  part.body = body.take();
  if (trace::TraceRecorder* tracer = trace::active(); span.on() && tracer != nullptr) {
    span.event().name = tracer->intern(federate_);
    span.event().bytes = part.body.size() + attached_bytes;
  }
  seconds_saving_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  writer_ = std::thread([this, part = std::move(part)]() mutable {
    try {
      write_files(part);
    } catch (const std::exception& e) {
      // Rethrown by the next checkpoint's reaction or the shutdown: say which part it was.
      writer_error_ = std::make_exception_ptr(StateError(cannot_write(part.at) + e.what()));
    } catch (...) {
      writer_error_ = std::current_exception();
    }
  });
}

void FederateCheckpoint::write_files(PendingPart& part) {
  const auto started = std::chrono::steady_clock::now();
  const coordinator::PartInfo info =
      coordinator::write_part(part.directory, federate_, {part.at.time_ns(), part.at.microstep()},
                              part.attachments, part.body);
  // On disk: the coordinator may count it (PROTOCOL.md §9.4).
  link_.report_checkpoint(part.at, info.bytes, info.checksum);
  prune(part.at.time_ns());
  ++parts_written_;
  const std::uint64_t written = info.bytes + info.attachment_bytes;
  bytes_written_ += written;
  if (parts_metric_ != nullptr) {
    parts_metric_->Increment();
    bytes_metric_->Increment(static_cast<double>(written));
  }
  seconds_writing_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // This federate's totals so far, beside the checkpoints (for `tagflow bench recovery`).
  write_file_atomically((std::filesystem::path(root_) / (federate_ + ".stats")).string(),
                        "parts " + std::to_string(parts_written_) + "\nbytes " +
                            std::to_string(bytes_written_) + "\nseconds " +
                            std::to_string(seconds_saving_) + "\nwrite_seconds " +
                            std::to_string(seconds_writing_) + "\n");
}

void FederateCheckpoint::resume(const std::string& directory, const reactors::Tag& start) {
  const std::string prefix = (std::filesystem::path(directory) / federate_).string();
  const std::string what = coordinator::part_path(directory, federate_);
  const coordinator::Part part = coordinator::read_part(directory, federate_);
  if (part.tag.time_ns() != start.time_ns() || part.tag.microstep() != start.microstep()) {
    throw StateError(what + ": resumes at logical time " + std::to_string(part.tag.time_ns()) +
                     " ns, but the coordinator started the run at " +
                     std::to_string(start.time_ns()) + " ns");
  }
  StateReader in(part.body, what);
  {
    const std::string state = in.bytes();
    StateReader replica(state, what);
    binding_.load_state(replica, prefix);
    replica.expect_end();
  }
  // The messages this federate had sent that arrive at the resume tag or later go out again,
  // reported before RESUMED: the receivers get them as they got them in the first run.
  const std::uint64_t n = in.u64();
  for (std::uint64_t i = 0; i < n; ++i) {
    Sent s;
    s.to = in.string();
    s.port = in.u32();
    const std::int64_t time = in.i64();
    const std::uint32_t micro = in.u32();
    s.arrival = reactors::Tag(time, micro);
    const std::string bytes = in.bytes();
    s.bytes = transport::Payload::copy_of(bytes.data(), bytes.size());
    if (s.arrival < start) in.fail("a message in transit that arrives before the resume tag");
    if (!link_.resend_in_transit(s.to, s.port, s.arrival, s.bytes)) {
      in.fail("a message in transit to '" + s.to + "', which is no downstream of this federate");
    }
    ++resent_;
    const std::lock_guard<std::mutex> lock(mutex_);
    sent_.push_back(std::move(s));
  }
  in.expect_end();
  link_.report_resumed(start);
  if (resent_metric_ != nullptr) {
    resent_metric_->Increment(static_cast<double>(resent_));
    resumed_from_metric_->Set(static_cast<double>(start.time_ns()) * 1e-9);
  }
}

void FederateCheckpoint::prune(std::int64_t newest) const {
  // Its own parts of checkpoints older than the newest keep + 2 it wrote: the coordinator keeps
  // `keep` complete ones, and the newest one or two may not be complete yet. On a host without
  // the coordinator nobody else removes them.
  prune_own_parts(root_, federate_, newest - static_cast<std::int64_t>(keep_ + 1) * every_.count());
}

void prune_own_parts(const std::string& root, const std::string& federate,
                     std::int64_t oldest_kept) {
  const std::string own = federate + ".";
  const std::string own_temporary = "." + own;  // AtomicFile's temporaries
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    std::int64_t time = 0;
    const std::string name = entry.path().filename().string();
    try {
      std::size_t used = 0;
      time = std::stoll(name, &used);
      if (used != name.size()) continue;
    } catch (const std::exception&) {
      continue;
    }
    if (time >= oldest_kept || !entry.is_directory(ec)) continue;
    for (const auto& file : std::filesystem::directory_iterator(entry.path(), ec)) {
      const std::string file_name = file.path().filename().string();
      if (file_name.rfind(own, 0) == 0 || file_name.rfind(own_temporary, 0) == 0) {
        std::filesystem::remove(file, ec);
      }
    }
    std::filesystem::remove(entry.path(), ec);  // only once empty
  }
}

void check_can_checkpoint(ReplicaBinding& binding) {
  // Nothing is written: the state goes to memory, the attachments nowhere.
  class Discard : public StateAttachments {
   public:
    ByteSink add(const std::string& /*name*/,
                 std::function<void(AtomicFile&)> /*finish*/) override {
      return [](std::string_view /*piece*/) {};
    }
  };
  StateWriter scratch;
  Discard nowhere;
  binding.save_state(scratch, nowhere);
}

}  // namespace tagflow::hosts
