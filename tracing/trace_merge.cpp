#include "tracing/trace_merge.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "common/atomic_file.hpp"
#include "common/trace_recorder.hpp"
#include "tracing/trace_files.hpp"

namespace tagflow::tracing {
namespace {

/// Nanoseconds as the microseconds Chrome's format counts, to the nanosecond.
void append_us(std::string& out, std::int64_t ns) {
  char text[40];
  std::snprintf(text, sizeof text, "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000));
  out += text;
}

bool is_span(const std::string& kind) {
  return kind != "control_send" && kind != "control_receive";
}

std::string tag_text(const Tag& tag) {
  if (tag.is_never()) return "NEVER";
  if (tag.is_forever()) return "FOREVER";
  return std::to_string(tag.time_ns()) + "/" + std::to_string(tag.microstep());
}

/// Who sent or received a control message on a thread: its federate, or the coordinator.
const std::string& party(const ProcessTraceFile& file, const TraceEvent& event) {
  static const std::string coordinator = "coordinator";
  const std::string& federate = file.threads[event.thread].federate;
  return federate.empty() ? coordinator : federate;
}

struct End {
  int pid = 0;
  std::size_t tid = 0;
  std::int64_t ts = 0;
};

}  // namespace

MergeReport merge_traces(const std::string& log_dir) {
  const std::vector<ProcessTraceFile> files = read_trace_dir(log_dir);
  MergeReport report;
  report.path = (std::filesystem::path(log_dir) / "trace.json").string();
  report.processes = files.size();

  // The run's first event (and first logical tag) are the origins of the file's numbers.
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  Tag first_tag = Tag::forever();
  for (const ProcessTraceFile& file : files) {
    for (const TraceEvent& e : file.events) {
      origin = std::min(origin, e.start_ns);
      if (!e.tag.is_never() && !e.tag.is_forever() && e.tag < first_tag) first_tag = e.tag;
    }
  }
  if (origin == std::numeric_limits<std::int64_t>::max()) origin = 0;

  std::string out;
  out.reserve(std::size_t{1} << 22);
  out += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  const auto next = [&] {
    if (!first) out += ",\n";
    first = false;
  };

  // Flow ends, matched by (sender, receiver, port or message name, tag).
  using Key = std::tuple<std::string, std::string, std::string, std::int64_t, std::uint32_t>;
  std::map<Key, End> data_sends;
  std::map<Key, std::deque<End>> control_sends;
  struct Receive {
    Key key;
    End end;
    bool control;
  };
  std::vector<Receive> receives;

  std::map<std::string, std::pair<std::int64_t, std::int64_t>> clocks;  // host → offset, error
  for (std::size_t p = 0; p < files.size(); ++p) {
    const ProcessTraceFile& file = files[p];
    const int pid = static_cast<int>(p) + 1;
    clocks[file.host] = {file.clock_offset_ns, file.clock_error_ns};
    report.max_clock_error_ns = std::max(report.max_clock_error_ns, file.clock_error_ns);
    report.dropped += file.dropped;
    next();
    out += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(pid) +
           ",\"args\":{\"name\":";
    trace::append_json_string(
        out, file.host.empty() ? file.process : file.process + " (" + file.host + ")");
    out += "}}";
    next();
    out += "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" + std::to_string(pid) +
           ",\"args\":{\"sort_index\":" + std::to_string(pid) + "}}";
    for (std::size_t t = 0; t < file.threads.size(); ++t) {
      next();
      out += "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(pid) +
             ",\"tid\":" + std::to_string(t + 1) + ",\"args\":{\"name\":";
      trace::append_json_string(out, file.threads[t].name);
      out += "}}";
      ++report.threads;
    }
    for (const TraceEvent& e : file.events) {
      const std::size_t tid = e.thread + 1;
      const std::int64_t ts = e.start_ns - origin;
      next();
      out += "{\"ph\":\"";
      out += is_span(e.kind) ? "X" : "i";
      out += "\",\"cat\":";
      trace::append_json_string(out, e.kind);
      out += ",\"name\":";
      std::string name = e.kind;
      if (e.kind == "reaction" || e.kind == "handler" || e.kind == "control_send" ||
          e.kind == "control_receive") {
        name = e.name;
      } else if (e.kind == "send") {
        name = "send to " + e.peer;
      } else if (e.kind == "receive") {
        name = "receive from " + e.peer;
      }
      trace::append_json_string(out, name);
      out += ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
      append_us(out, ts);
      if (is_span(e.kind)) {
        out += ",\"dur\":";
        append_us(out, std::max<std::int64_t>(e.duration_ns, 0));
      } else {
        out += ",\"s\":\"t\"";
      }
      out += ",\"args\":{\"tag\":";
      trace::append_json_string(out, tag_text(e.tag));
      if (!e.tag.is_never() && !e.tag.is_forever() && !first_tag.is_forever()) {
        char offset[48];
        std::snprintf(offset, sizeof offset, ",\"tag_ms\":%.6f",
                      static_cast<double>(e.tag.time_ns() - first_tag.time_ns()) / 1e6);
        out += offset;
      }
      if (!e.peer.empty()) {
        out += ",\"peer\":";
        trace::append_json_string(out, e.peer);
      }
      if (e.kind == "send" || e.kind == "receive") out += ",\"port\":" + std::to_string(e.port);
      if (e.bytes != 0 || e.kind == "send" || e.kind == "receive") {
        out += ",\"bytes\":" + std::to_string(e.bytes);
      }
      out += "}}";
      ++report.events;

      const End end{pid, tid, ts};
      if (e.kind == "send") {
        data_sends[{e.name, e.peer, std::to_string(e.port), e.tag.time_ns(), e.tag.microstep()}] =
            end;
      } else if (e.kind == "receive") {
        receives.push_back(
            {{e.peer, e.name, std::to_string(e.port), e.tag.time_ns(), e.tag.microstep()},
             end,
             false});
      } else if (e.kind == "control_send") {
        control_sends[{party(file, e), e.peer, e.name, e.tag.time_ns(), e.tag.microstep()}]
            .push_back(end);
      } else if (e.kind == "control_receive") {
        receives.push_back(
            {{e.peer, party(file, e), e.name, e.tag.time_ns(), e.tag.microstep()}, end, true});
      }
    }
  }

  // Receives in time order, so that repeated control messages pair with their sends in order.
  std::stable_sort(receives.begin(), receives.end(),
                   [](const Receive& a, const Receive& b) { return a.end.ts < b.end.ts; });
  std::size_t matched_sends = 0;
  std::size_t flow_id = 0;
  std::size_t sends = data_sends.size();
  for (const auto& [key, queue] : control_sends) sends += queue.size();
  for (const Receive& r : receives) {
    End from;
    if (r.control) {
      const auto it = control_sends.find(r.key);
      if (it == control_sends.end() || it->second.empty()) {
        ++report.unmatched;
        continue;
      }
      from = it->second.front();
      it->second.pop_front();
      ++report.control_flows;
    } else {
      const auto it = data_sends.find(r.key);
      if (it == data_sends.end()) {
        ++report.unmatched;
        continue;
      }
      from = it->second;
      data_sends.erase(it);
      ++report.data_flows;
    }
    ++matched_sends;
    const std::string id = std::to_string(++flow_id);
    std::string name = std::get<0>(r.key) + " → " + std::get<1>(r.key) + " " +
                       (r.control ? std::get<2>(r.key) : "port " + std::get<2>(r.key));
    next();
    out += "{\"ph\":\"s\",\"cat\":";
    out += r.control ? "\"control\"" : "\"data\"";
    out += ",\"name\":";
    trace::append_json_string(out, name);
    out += ",\"id\":" + id + ",\"pid\":" + std::to_string(from.pid) +
           ",\"tid\":" + std::to_string(from.tid) + ",\"ts\":";
    append_us(out, from.ts);
    out += "}";
    next();
    out += "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":";
    out += r.control ? "\"control\"" : "\"data\"";
    out += ",\"name\":";
    trace::append_json_string(out, name);
    out += ",\"id\":" + id + ",\"pid\":" + std::to_string(r.end.pid) +
           ",\"tid\":" + std::to_string(r.end.tid) + ",\"ts\":";
    append_us(out, r.end.ts);
    out += "}";
  }
  report.unmatched += sends - matched_sends;

  out += "\n],\"metadata\":{\"format\":\"tagflow merged trace\",\"origin_realtime_ns\":" +
         std::to_string(origin) + ",\"first_tag\":";
  trace::append_json_string(out, tag_text(first_tag));
  out += ",\"clock_alignment\":{";
  bool first_host = true;
  for (const auto& [host, clock] : clocks) {
    if (!first_host) out += ',';
    first_host = false;
    trace::append_json_string(out, host.empty() ? "(coordinator's host)" : host);
    out += ":{\"offset_ns\":" + std::to_string(clock.first) +
           ",\"error_ns\":" + std::to_string(clock.second) + "}";
  }
  out += "},\"max_clock_error_ns\":" + std::to_string(report.max_clock_error_ns) + ",\"dropped\":{";
  for (std::size_t p = 0; p < files.size(); ++p) {
    if (p != 0) out += ',';
    trace::append_json_string(out, files[p].process);
    out += ":" + std::to_string(files[p].dropped);
  }
  out += "},\"data_flows\":" + std::to_string(report.data_flows) +
         ",\"control_flows\":" + std::to_string(report.control_flows) +
         ",\"unmatched\":" + std::to_string(report.unmatched) + "}}\n";
  write_file_atomically(report.path, out);
  return report;
}

}  // namespace tagflow::tracing
