#include "tracing/trace_merge.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "common/atomic_file.hpp"
#include "common/trace_recorder.hpp"

namespace tagflow::tracing {
namespace {

/// The output, handed to the AtomicFile a megabyte at a time.
class Output {
 public:
  explicit Output(const std::string& path) : file_(path) { buffer_.reserve(kChunk + 4096); }

  std::string& text() { return buffer_; }
  /// Separates the events of the traceEvents array.
  void next_event() {
    if (!first_) buffer_ += ",\n";
    first_ = false;
    if (buffer_.size() >= kChunk) flush();
  }
  void flush() {
    file_.write(buffer_);
    buffer_.clear();
  }
  void commit() {
    flush();
    file_.commit();
  }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << 20;
  AtomicFile file_;
  std::string buffer_;
  bool first_ = true;
};

/// Nanoseconds as the microseconds Chrome's format counts, to the nanosecond (non-negative).
void append_us(std::string& out, std::int64_t ns) {
  char text[40];
  const int n = std::snprintf(text, sizeof text, "%lld.%03lld", static_cast<long long>(ns / 1000),
                              static_cast<long long>(ns % 1000));
  out.append(text, static_cast<std::size_t>(n));
}

void append_int(std::string& out, std::int64_t value) {
  char text[24];
  const int n = std::snprintf(text, sizeof text, "%lld", static_cast<long long>(value));
  out.append(text, static_cast<std::size_t>(n));
}

void append_tag(std::string& out, const Tag& tag) {
  if (tag.is_never()) {
    out += "\"NEVER\"";
  } else if (tag.is_forever()) {
    out += "\"FOREVER\"";
  } else {
    out += '"';
    append_int(out, tag.time_ns());
    out += '/';
    append_int(out, tag.microstep());
    out += '"';
  }
}

/// What identifies one message at both of its ends: (sender, receiver, port or message name,
/// tag). The views point into the files' strings, which outlive the merge.
struct FlowKey {
  bool control = false;
  std::string_view sender, receiver, name;
  std::uint32_t port = 0;
  Tag tag;

  bool operator==(const FlowKey& o) const {
    return control == o.control && port == o.port && tag == o.tag && sender == o.sender &&
           receiver == o.receiver && name == o.name;
  }
};

struct FlowKeyHash {
  std::size_t operator()(const FlowKey& k) const {
    const std::hash<std::string_view> h;
    std::size_t seed = h(k.sender);
    const auto mix = [&seed](std::size_t v) {
      seed ^= v + 0x9e3779b97f4a7c15ULL + (seed << 6U) + (seed >> 2U);
    };
    mix(h(k.receiver));
    mix(h(k.name));
    mix(k.port);
    mix(static_cast<std::size_t>(k.tag.time_ns()));
    mix(k.tag.microstep());
    mix(k.control ? 1U : 0U);
    return seed;
  }
};

/// One end of a message on the merged timeline.
struct End {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::int64_t ts = 0;        // from the origin
  std::int64_t error_ns = 0;  // its host's clock error
};

struct Ends {
  std::vector<End> sends, receives;
};

struct Flow {
  const FlowKey* key;
  End from, to;
};

}  // namespace

MergeReport merge_traces(const std::string& log_dir) {
  return merge_trace_files(read_trace_dir(log_dir),
                           (std::filesystem::path(log_dir) / "trace.json").string());
}

MergeReport merge_trace_files(const std::vector<ProcessTraceFile>& files, const std::string& path) {
  MergeReport report;
  report.path = path;
  report.processes = files.size();

  // The run's first event and first logical tag are the origins of the file's numbers.
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  Tag first_tag = Tag::forever();
  for (const ProcessTraceFile& file : files) {
    if (!file.events.empty()) origin = std::min(origin, file.events.front().start_ns);
    for (const TraceEvent& e : file.events) {
      if (e.has_real_tag() && e.tag < first_tag) first_tag = e.tag;
    }
  }
  if (origin == std::numeric_limits<std::int64_t>::max()) origin = 0;
  const bool has_first_tag = !first_tag.is_forever();

  Output out(path);
  std::string& text = out.text();
  text += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";

  std::unordered_map<FlowKey, Ends, FlowKeyHash> messages;
  // The parties the files record ends for: a message with one of them and another party (another
  // host's launcher, which is not traced) has only one end to record, and is no unmatched one.
  std::unordered_set<std::string_view> recorded;
  for (const ProcessTraceFile& file : files) {
    recorded.insert(file.process);
    for (const TraceThread& thread : file.threads) {
      recorded.insert(thread.federate.empty() ? std::string_view("coordinator")
                                              : std::string_view(thread.federate));
    }
  }
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> clocks;  // host → offset, error
  for (std::size_t p = 0; p < files.size(); ++p) {
    const ProcessTraceFile& file = files[p];
    const auto pid = static_cast<std::uint32_t>(p + 1);
    clocks[file.host] = {file.clock_offset_ns, file.clock_error_ns};
    report.max_clock_error_ns = std::max(report.max_clock_error_ns, file.clock_error_ns);
    report.dropped += file.dropped;

    out.next_event();
    text += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":";
    append_int(text, pid);
    text += ",\"args\":{\"name\":";
    trace::append_json_string(
        text, file.host.empty() ? file.process : file.process + " (" + file.host + ")");
    text += "}}";
    out.next_event();
    text += "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":";
    append_int(text, pid);
    text += ",\"args\":{\"sort_index\":";
    append_int(text, pid);
    text += "}}";
    for (std::size_t t = 0; t < file.threads.size(); ++t) {
      out.next_event();
      text += "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":";
      append_int(text, pid);
      text += ",\"tid\":";
      append_int(text, static_cast<std::int64_t>(t + 1));
      text += ",\"args\":{\"name\":";
      trace::append_json_string(text, file.threads[t].name);
      text += "}}";
      ++report.threads;
    }

    for (const TraceEvent& e : file.events) {
      const std::uint32_t tid = e.thread + 1;
      const std::int64_t ts = e.start_ns - origin;
      out.next_event();
      text += e.is_span() ? "{\"ph\":\"X\",\"cat\":\"" : "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"";
      text += trace::kind_name(e.kind);
      text += "\",\"name\":";
      switch (e.kind) {
        case Kind::kReaction:
        case Kind::kHandler:
        case Kind::kControlSend:
        case Kind::kControlReceive:
          trace::append_json_string(text, e.name);
          break;
        case Kind::kSend:
          trace::append_json_string(text, "send to " + std::string(e.peer));
          break;
        case Kind::kReceive:
          trace::append_json_string(text, "receive from " + std::string(e.peer));
          break;
        default:
          text += '"';
          text += trace::kind_name(e.kind);
          text += '"';
          break;
      }
      text += ",\"pid\":";
      append_int(text, pid);
      text += ",\"tid\":";
      append_int(text, tid);
      text += ",\"ts\":";
      append_us(text, ts);
      if (e.is_span()) {
        text += ",\"dur\":";
        append_us(text, e.duration_ns);
      }
      text += ",\"args\":{\"tag\":";
      append_tag(text, e.tag);
      if (e.has_real_tag() && has_first_tag) {
        char offset[48];
        const int n =
            std::snprintf(offset, sizeof offset, ",\"tag_ms\":%.6f",
                          static_cast<double>(e.tag.time_ns() - first_tag.time_ns()) / 1e6);
        text.append(offset, static_cast<std::size_t>(n));
      }
      if (!e.peer.empty()) {
        text += ",\"peer\":";
        trace::append_json_string(text, e.peer);
      }
      const bool message = e.kind == Kind::kSend || e.kind == Kind::kReceive;
      if (message) {
        text += ",\"port\":";
        append_int(text, e.port);
      }
      if (message || e.bytes != 0) {
        text += ",\"bytes\":";
        append_int(text, static_cast<std::int64_t>(e.bytes));
      }
      text += "}}";
      ++report.events;

      const End end{pid, tid, ts, file.clock_error_ns};
      switch (e.kind) {
        case Kind::kSend:
          messages[FlowKey{false, e.name, e.peer, {}, e.port, e.tag}].sends.push_back(end);
          break;
        case Kind::kReceive:
          messages[FlowKey{false, e.peer, e.name, {}, e.port, e.tag}].receives.push_back(end);
          break;
        case Kind::kControlSend:
          messages[FlowKey{true, file.party(e), e.peer, e.name, 0, e.tag}].sends.push_back(end);
          break;
        case Kind::kControlReceive:
          messages[FlowKey{true, e.peer, file.party(e), e.name, 0, e.tag}].receives.push_back(end);
          break;
        default:
          break;
      }
    }
  }

  // Pair each message's ends: per key, receives in time order, each with the earliest unpaired
  // send recorded before it (a data message has one end of each, a control message sent again at
  // the same tag several).
  std::vector<Flow> flows;
  for (auto& [key, ends] : messages) {
    const auto by_ts = [](const End& a, const End& b) { return a.ts < b.ts; };
    std::stable_sort(ends.sends.begin(), ends.sends.end(), by_ts);
    std::stable_sort(ends.receives.begin(), ends.receives.end(), by_ts);
    // One end of each: the same message whatever the clocks say. Several: the time decides.
    const bool one_each = ends.sends.size() == 1 && ends.receives.size() == 1;
    std::size_t s = 0;
    for (const End& r : ends.receives) {
      if (s < ends.sends.size() &&
          (one_each || ends.sends[s].ts <= r.ts + ends.sends[s].error_ns + r.error_ns)) {
        flows.push_back({&key, ends.sends[s], r});
        ++s;
        ++(key.control ? report.control_flows : report.data_flows);
      } else if (recorded.count(key.sender) != 0) {
        ++report.unmatched;
      }
    }
    if (recorded.count(key.receiver) != 0) report.unmatched += ends.sends.size() - s;
  }
  std::sort(flows.begin(), flows.end(), [](const Flow& a, const Flow& b) {
    return a.from.ts < b.from.ts || (a.from.ts == b.from.ts && a.to.ts < b.to.ts);
  });
  std::size_t id = 0;
  std::string name;
  for (const Flow& flow : flows) {
    const FlowKey& key = *flow.key;
    name.assign(key.sender);
    name += " → ";
    name += key.receiver;
    if (key.control) {
      name += ' ';
      name += key.name;
    } else {
      name += " port " + std::to_string(key.port);
    }
    ++id;
    for (const bool start : {true, false}) {
      const End& end = start ? flow.from : flow.to;
      out.next_event();
      text += start ? "{\"ph\":\"s\",\"cat\":\"" : "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"";
      text += key.control ? "control" : "data";
      text += "\",\"name\":";
      trace::append_json_string(text, name);
      text += ",\"id\":";
      append_int(text, static_cast<std::int64_t>(id));
      text += ",\"pid\":";
      append_int(text, end.pid);
      text += ",\"tid\":";
      append_int(text, end.tid);
      text += ",\"ts\":";
      append_us(text, end.ts);
      text += '}';
    }
  }

  text += "\n],\"metadata\":{\"format\":\"tagflow merged trace\",\"origin_realtime_ns\":";
  append_int(text, origin);
  text += ",\"first_tag\":";
  append_tag(text, first_tag);
  text += ",\"processes\":{";
  for (std::size_t p = 0; p < files.size(); ++p) {
    if (p != 0) text += ',';
    trace::append_json_string(text, files[p].process);
    text += ":{\"pid\":";
    append_int(text, static_cast<std::int64_t>(p + 1));
    text += ",\"os_pid\":";
    append_int(text, files[p].pid);
    text += ",\"host\":";
    trace::append_json_string(text, files[p].host);
    text += '}';
  }
  text += "},\"clock_alignment\":{";
  bool first_host = true;
  for (const auto& [host, clock] : clocks) {
    if (!first_host) text += ',';
    first_host = false;
    trace::append_json_string(text, host.empty() ? "(coordinator's host)" : host);
    text += ":{\"offset_ns\":";
    append_int(text, clock.first);
    text += ",\"error_ns\":";
    append_int(text, clock.second);
    text += '}';
  }
  text += "},\"max_clock_error_ns\":";
  append_int(text, report.max_clock_error_ns);
  text += ",\"dropped\":{";
  for (std::size_t p = 0; p < files.size(); ++p) {
    if (p != 0) text += ',';
    trace::append_json_string(text, files[p].process);
    text += ':';
    append_int(text, static_cast<std::int64_t>(files[p].dropped));
  }
  text += "},\"data_flows\":";
  append_int(text, static_cast<std::int64_t>(report.data_flows));
  text += ",\"control_flows\":";
  append_int(text, static_cast<std::int64_t>(report.control_flows));
  text += ",\"unmatched\":";
  append_int(text, static_cast<std::int64_t>(report.unmatched));
  text += "}}\n";
  out.commit();
  return report;
}

}  // namespace tagflow::tracing
