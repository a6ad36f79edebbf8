#include "common/trace_recorder.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "common/atomic_file.hpp"

namespace tagflow::trace {
namespace {

// Every recorder started in this process: a thread's ring pointer is valid only for the recorder
// of its generation, so a thread that recorded for an earlier one makes a new ring.
std::atomic<std::uint64_t> g_generation{0};
// The recorders started so far, kept alive until the process ends: a thread may still hold a
// pointer from active() when stop() or a later start() replaces it.
std::mutex g_recorders_mutex;
std::vector<std::unique_ptr<TraceRecorder>>& recorders() {
  static std::vector<std::unique_ptr<TraceRecorder>> all;
  return all;
}

struct ThreadRing {
  std::uint64_t generation = 0;
  void* ring = nullptr;
};
thread_local ThreadRing t_ring;

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", u);
      out += escaped;
    } else {
      out += c;  // UTF-8 passes through whole
    }
  }
  out += '"';
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kReaction:
      return "reaction";
    case Kind::kWaitGrant:
      return "wait_grant";
    case Kind::kWaitData:
      return "wait_data";
    case Kind::kWaitTime:
      return "wait_time";
    case Kind::kWaitSocket:
      return "wait_socket";
    case Kind::kSend:
      return "send";
    case Kind::kReceive:
      return "receive";
    case Kind::kControlSend:
      return "control_send";
    case Kind::kControlReceive:
      return "control_receive";
    case Kind::kCheckpoint:
      return "checkpoint";
    case Kind::kHandler:
      return "handler";
  }
  return "unknown";
}

TraceRecorder::TraceRecorder(TraceOptions options)
    : options_(std::move(options)), generation_(++g_generation) {
  if (options_.events_per_thread == 0) options_.events_per_thread = 1;
  names_.emplace_back();
  index_.emplace("", 0);
}

TraceRecorder& TraceRecorder::start(TraceOptions options) {
  const std::lock_guard<std::mutex> lock(g_recorders_mutex);
  recorders().push_back(std::make_unique<TraceRecorder>(std::move(options)));
  TraceRecorder& recorder = *recorders().back();
  detail::g_active.store(&recorder, std::memory_order_release);
  return recorder;
}

void TraceRecorder::stop() { detail::g_active.store(nullptr, std::memory_order_release); }

std::int64_t TraceRecorder::now_ns() noexcept {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

std::uint32_t TraceRecorder::intern(std::string_view text) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = index_.find(std::string(text));
  if (it != index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(names_.size());
  names_.emplace_back(text);
  index_.emplace(std::string(text), id);
  return id;
}

TraceRecorder::Ring& TraceRecorder::this_thread_ring() {
  if (t_ring.generation == generation_) return *static_cast<Ring*>(t_ring.ring);
  const std::lock_guard<std::mutex> lock(mutex_);
  rings_.push_back(std::make_unique<Ring>());
  Ring& ring = *rings_.back();
  ring.events.resize(options_.events_per_thread);
  ring.name = "thread " + std::to_string(rings_.size() - 1);
  t_ring = {generation_, &ring};
  return ring;
}

void TraceRecorder::name_thread(const std::string& name, const std::string& federate) {
  Ring& ring = this_thread_ring();
  const std::lock_guard<std::mutex> lock(ring.mutex);
  ring.name = name;
  ring.federate = federate;
}

void TraceRecorder::record(const Event& event) {
  Ring& ring = this_thread_ring();
  const std::lock_guard<std::mutex> lock(ring.mutex);
  ring.events[ring.written % ring.events.size()] = event;
  ++ring.written;
}

std::size_t TraceRecorder::held() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::size_t total = 0;
  for (const auto& ring : rings_) {
    const std::lock_guard<std::mutex> ring_lock(ring->mutex);
    total += static_cast<std::size_t>(std::min<std::uint64_t>(ring->written, ring->events.size()));
  }
  return total;
}

std::uint64_t TraceRecorder::dropped() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::uint64_t total = 0;
  for (const auto& ring : rings_) {
    const std::lock_guard<std::mutex> ring_lock(ring->mutex);
    if (ring->written > ring->events.size()) total += ring->written - ring->events.size();
  }
  return total;
}

void TraceRecorder::write(const std::string& path) {
  // Copy every ring (each under its own mutex), then the names, which the copies refer to.
  struct Copy {
    std::string name, federate;
    std::vector<Event> events;
  };
  std::vector<Copy> copies;
  std::uint64_t dropped_total = 0;
  std::vector<std::string> names;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& ring : rings_) {
      const std::lock_guard<std::mutex> ring_lock(ring->mutex);
      Copy copy{ring->name, ring->federate, {}};
      const std::uint64_t size = ring->events.size();
      const std::uint64_t held = std::min(ring->written, size);
      if (ring->written > size) dropped_total += ring->written - size;
      copy.events.reserve(held);
      for (std::uint64_t i = ring->written - held; i < ring->written; ++i) {
        copy.events.push_back(ring->events[i % size]);
      }
      copies.push_back(std::move(copy));
    }
    names = names_;
  }
  std::string out;
  out.reserve(1 << 20);
  out += "{\"format\":\"tagflow-trace-1\",\"process\":";
  append_json_string(out, options_.process);
  out += ",\"host\":";
  append_json_string(out, options_.host);
  out += ",\"pid\":" + std::to_string(::getpid());
  out += ",\"clock\":\"realtime\",\"clock_offset_ns\":0,\"clock_error_ns\":0";
  out += ",\"dropped\":" + std::to_string(dropped_total);
  out += ",\"threads\":[";
  for (std::size_t t = 0; t < copies.size(); ++t) {
    if (t != 0) out += ',';
    out += "{\"id\":" + std::to_string(t) + ",\"name\":";
    append_json_string(out, copies[t].name);
    out += ",\"federate\":";
    append_json_string(out, copies[t].federate);
    out += '}';
  }
  out += "],\n\"events\":[";
  bool first = true;
  for (std::size_t t = 0; t < copies.size(); ++t) {
    for (const Event& e : copies[t].events) {
      out += first ? "\n[" : ",\n[";
      first = false;
      out += '"';
      out += kind_name(e.kind);
      out += "\",";
      out += std::to_string(e.start_ns) + ',' + std::to_string(e.duration_ns) + ',' +
             std::to_string(t) + ',' + std::to_string(e.tag.time_ns()) + ',' +
             std::to_string(e.tag.microstep()) + ',';
      append_json_string(out, e.name < names.size() ? names[e.name] : std::string());
      out += ',';
      append_json_string(out, e.peer < names.size() ? names[e.peer] : std::string());
      out += ',' + std::to_string(e.port) + ',' + std::to_string(e.bytes) + ']';
    }
  }
  out += "\n]}\n";
  write_file_atomically(path, out);
}

}  // namespace tagflow::trace
