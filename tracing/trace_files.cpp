#include "tracing/trace_files.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "common/log_text.hpp"

namespace tagflow::tracing {
namespace {

namespace fs = std::filesystem;

constexpr std::array<Kind, 11> kKinds = {
    Kind::kReaction,       Kind::kWaitGrant,  Kind::kWaitData, Kind::kWaitTime,
    Kind::kWaitSocket,     Kind::kSend,       Kind::kReceive,  Kind::kControlSend,
    Kind::kControlReceive, Kind::kCheckpoint, Kind::kHandler};

constexpr std::array<const char*, 10> kFieldNames = {
    "kind",          "start_ns", "duration_ns", "thread", "tag_time_ns",
    "tag_microstep", "name",     "peer",        "port",   "bytes"};

/// Bounds of the times a trace holds, so that no sum of them overflows: an event's start (ns
/// since 1970; a file written by hand may count from elsewhere) is within ±2^62 (the year 2116),
/// a duration, a clock's error and the size of a clock offset are below 2^61 ns (73 years).
constexpr std::int64_t kMaxStartNs = std::int64_t{1} << 62;
constexpr std::int64_t kMaxSpanNs = std::int64_t{1} << 61;

/// The file read as a stream of JSON tokens (nlohmann's SAX interface): the header's scalars, the
/// threads and the events, each event straight into a TraceEvent. A callback that meets
/// something other than the format records why in `error` and returns false, which stops the
/// parse.
class TraceFileReader {
 public:
  using json = nlohmann::json;

  explicit TraceFileReader(ProcessTraceFile& file) : file_(file) {}

  std::string error;
  std::vector<std::uint64_t> thread_ids;  // per thread, the id events use
  bool has_format = false, has_process = false, has_threads = false, has_events = false;

  bool null() { return scalar(Value{}); }
  bool boolean(bool /*value*/) { return scalar(Value{Value::kOther}); }
  bool number_integer(json::number_integer_t value) {
    Value v{Value::kSigned};
    v.i = value;
    return scalar(v);
  }
  bool number_unsigned(json::number_unsigned_t value) {
    Value v{Value::kUnsigned};
    v.u = value;
    return scalar(v);
  }
  bool number_float(json::number_float_t /*value*/, const json::string_t& /*text*/) {
    return scalar(Value{Value::kOther});
  }
  bool string(json::string_t& value) {
    Value v{Value::kString};
    v.s = &value;
    return scalar(v);
  }
  bool binary(json::binary_t& /*value*/) { return scalar(Value{Value::kOther}); }

  bool start_object(std::size_t /*elements*/) {
    ++depth_;
    if (depth_ == 1) return true;
    if (section_ == Section::kThreads && depth_ == 3) {
      thread_ = TraceThread{};
      thread_id_.reset();
      return true;
    }
    if (section_ == Section::kEvents && depth_ == 3) return fail("an event is not an array");
    if (section_ == Section::kEvents && depth_ > 3) {
      return fail(this_event() + " has an object as a field");
    }
    if (section_ == Section::kThreads && depth_ == 2) return fail("\"threads\" is not an array");
    return true;
  }
  bool end_object() {
    if (section_ == Section::kThreads && depth_ == 3) {
      if (!thread_id_) return fail("a thread has no \"id\"");
      thread_ids.push_back(*thread_id_);
      file_.threads.push_back(std::move(thread_));
    }
    --depth_;
    return true;
  }
  bool start_array(std::size_t /*elements*/) {
    ++depth_;
    if (depth_ == 2 && key_ == "events") {
      section_ = Section::kEvents;
      has_events = true;
    } else if (depth_ == 2 && key_ == "threads") {
      section_ = Section::kThreads;
      has_threads = true;
    } else if (section_ == Section::kEvents && depth_ == 3) {
      event_ = TraceEvent{};
      field_ = 0;
    } else if (section_ == Section::kEvents) {
      return fail(depth_ == 4 ? this_event() + " has an array as a field"
                              : "\"events\" is not an array of events");
    }
    return true;
  }
  bool end_array() {
    if (section_ == Section::kEvents && depth_ == 3) {
      if (field_ != 10) {
        return fail(this_event() + " has " + std::to_string(field_) + " fields, not 10");
      }
      file_.events.push_back(event_);
    } else if (depth_ == 2) {
      section_ = Section::kNone;
    }
    --depth_;
    return true;
  }
  bool key(json::string_t& name) {
    if (depth_ == 1) key_ = name;
    if (section_ == Section::kThreads && depth_ == 3) thread_key_ = name;
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& e) {
    error = "is not JSON (at byte " + std::to_string(position) + "): " + json_error_text(e);
    return false;
  }

 private:
  enum class Section { kNone, kThreads, kEvents };
  struct Value {
    enum Type { kNull, kSigned, kUnsigned, kString, kOther } type = kNull;
    std::int64_t i = 0;
    std::uint64_t u = 0;
    json::string_t* s = nullptr;
  };

  bool fail(std::string why) {
    error = "does not have the fields of tagflow-trace-1: " + std::move(why);
    return false;
  }

  static bool to_int64(const Value& v, std::int64_t& out) {
    if (v.type == Value::kSigned) {
      out = v.i;
      return true;
    }
    if (v.type == Value::kUnsigned && v.u <= static_cast<std::uint64_t>(INT64_MAX)) {
      out = static_cast<std::int64_t>(v.u);
      return true;
    }
    return false;
  }
  static bool to_uint64(const Value& v, std::uint64_t max, std::uint64_t& out) {
    if (v.type != Value::kUnsigned || v.u > max) return false;
    out = v.u;
    return true;
  }

  bool scalar(const Value& v) {
    if (depth_ == 1) return header(v);
    if (section_ == Section::kThreads && depth_ == 3) return thread_field(v);
    if (section_ == Section::kThreads && depth_ == 2) return fail("a thread is not an object");
    if (section_ == Section::kEvents && depth_ == 3) return event_field(v);
    if (section_ == Section::kEvents) return fail("an event is not an array");
    return true;  // a key this reader does not use
  }

  bool header(const Value& v) {
    std::uint64_t u = 0;
    if (key_ == "format") {
      if (v.type != Value::kString || *v.s != "tagflow-trace-1") {
        error = "is not in the format tagflow-trace-1";
        return false;
      }
      has_format = true;
    } else if (key_ == "process" || key_ == "host") {
      if (v.type != Value::kString) return fail("\"" + key_ + "\" is not a string");
      (key_ == "process" ? file_.process : file_.host) = *v.s;
      has_process = has_process || key_ == "process";
    } else if (key_ == "pid" || key_ == "clock_offset_ns" || key_ == "clock_error_ns") {
      std::int64_t& out = key_ == "pid"               ? file_.pid
                          : key_ == "clock_offset_ns" ? file_.clock_offset_ns
                                                      : file_.clock_error_ns;
      if (!to_int64(v, out)) return fail("\"" + key_ + "\" is not an integer");
      if (key_ != "pid" &&
          (out <= -kMaxSpanNs || out >= kMaxSpanNs || (key_ == "clock_error_ns" && out < 0))) {
        return fail("\"" + key_ + "\" is out of range (" + std::to_string(out) + " ns)");
      }
    } else if (key_ == "dropped") {
      if (!to_uint64(v, UINT64_MAX, u)) return fail("\"dropped\" is not a count");
      file_.dropped = u;
    } else if (key_ == "threads" || key_ == "events") {
      return fail("\"" + key_ + "\" is not an array");
    }
    return true;
  }

  bool thread_field(const Value& v) {
    if (thread_key_ == "id") {
      std::uint64_t id = 0;
      if (!to_uint64(v, UINT64_MAX, id)) return fail("a thread's \"id\" is not a number");
      thread_id_ = id;
    } else if (thread_key_ == "name" || thread_key_ == "federate") {
      if (v.type != Value::kString) return fail("a thread's \"" + thread_key_ + "\" is no string");
      (thread_key_ == "name" ? thread_.name : thread_.federate) = *v.s;
    }
    return true;
  }

  /// The event being read, as every refusal names it: "event N (counted from 1)".
  std::string this_event() const {
    return "event " + std::to_string(file_.events.size() + 1) + " (counted from 1)";
  }

  bool event_field(const Value& v) {
    if (field_ >= 10) {
      return fail(this_event() + " has more than 10 fields");
    }
    const std::size_t f = field_++;
    std::uint64_t u = 0;
    bool ok = true;
    switch (f) {
      case 0:
        ok = v.type == Value::kString && kind_of(*v.s, event_.kind);
        if (!ok && v.type == Value::kString) {
          return fail(this_event() + " is of the unknown kind \"" + *v.s + "\"");
        }
        break;
      case 1:
        ok = to_int64(v, event_.start_ns) && event_.start_ns > -kMaxStartNs &&
             event_.start_ns < kMaxStartNs;
        break;
      case 2:
        ok = to_int64(v, event_.duration_ns) && event_.duration_ns >= 0 &&
             event_.duration_ns < kMaxSpanNs;
        break;
      case 3:
        // The thread's id; read_trace_file() turns it into an index once the threads are known.
        ok = to_uint64(v, UINT32_MAX, u);
        event_.thread = static_cast<std::uint32_t>(u);
        break;
      case 4: {
        std::int64_t time = 0;
        ok = to_int64(v, time);
        event_.tag = Tag(time, event_.tag.microstep());
        break;
      }
      case 5:
        ok = to_uint64(v, UINT32_MAX, u);
        event_.tag = Tag(event_.tag.time_ns(), static_cast<std::uint32_t>(u));
        break;
      case 6:
      case 7:
        ok = v.type == Value::kString;
        if (ok) (f == 6 ? event_.name : event_.peer) = intern(*v.s);
        break;
      case 8:
        ok = to_uint64(v, UINT32_MAX, u);
        event_.port = static_cast<std::uint32_t>(u);
        break;
      default:
        ok = to_uint64(v, UINT64_MAX, event_.bytes);
        break;
    }
    if (!ok) {
      return fail(this_event() + " has a bad " + kFieldNames[f] + " (field " +
                  std::to_string(f + 1) + ")");
    }
    return true;
  }

  static bool kind_of(const std::string& name, Kind& out) {
    for (const Kind kind : kKinds) {
      if (name == trace::kind_name(kind)) {
        out = kind;
        return true;
      }
    }
    return false;
  }

  std::string_view intern(json::string_t& text) {
    if (text.empty()) return {};
    return *file_.strings->insert(std::move(text)).first;
  }

  ProcessTraceFile& file_;
  int depth_ = 0;
  std::string key_;  // the header key being read
  Section section_ = Section::kNone;
  TraceThread thread_;
  std::string thread_key_;
  std::optional<std::uint64_t> thread_id_;
  TraceEvent event_;
  std::size_t field_ = 0;
};

}  // namespace

std::string_view ProcessTraceFile::party(const TraceEvent& event) const {
  const std::string& federate = threads[event.thread].federate;
  return federate.empty() ? std::string_view("coordinator") : std::string_view(federate);
}

void require_regular_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || status.type() == fs::file_type::not_found) {
    throw TraceError("cannot read the " + what + " " + path);
  }
  if (status.type() != fs::file_type::regular) {
    throw TraceError("the " + what + " " + path +
                     " is not a regular file (a directory, a pipe or a device)");
  }
}

std::string_view ProcessTraceFile::intern(std::string text) {
  if (text.empty()) return {};
  return *strings->insert(std::move(text)).first;
}

ProcessTraceFile read_trace_file(const std::string& path) {
  // The whole file in memory, then parsed where it lies: a fraction of what its document tree
  // would take, and the fastest input nlohmann's parser has.
  std::string text;
  require_regular_file(path, "trace file");
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw TraceError("cannot read the trace file " + path);
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    in.seekg(0, std::ios::beg);
    if (size < 0) throw TraceError("cannot read the trace file " + path);
    text.resize(static_cast<std::size_t>(size));
    if (!in.read(text.data(), size)) throw TraceError("cannot read the trace file " + path);
  }
  // JSON is text: a NUL byte (which the parser takes for the input's end) says the file is not.
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos) {
    throw TraceError("the trace file " + path + " is not JSON: a NUL byte at byte " +
                     std::to_string(nul + 1) + " (the file is not text)");
  }
  ProcessTraceFile file;
  file.path = path;
  TraceFileReader reader(file);
  bool parsed = false;
  try {
    parsed = nlohmann::json::sax_parse(text.data(), text.data() + text.size(), &reader);
  } catch (const std::exception& e) {
    reader.error = "cannot be read: " + json_error_text(e);
  }
  text = std::string();
  if (!parsed || !reader.error.empty()) {
    throw TraceError("the trace file " + path + " " +
                     (reader.error.empty() ? std::string("cannot be read") : reader.error));
  }
  std::string missing;
  if (!reader.has_format) missing = "format";
  if (!reader.has_process) missing = "process";
  if (!reader.has_threads) missing = "threads";
  if (!reader.has_events) missing = "events";
  if (!missing.empty()) {
    throw TraceError("the trace file " + path +
                     " does not have the fields of tagflow-trace-1: no \"" + missing + "\"");
  }

  // Thread ids to indexes (the recorder numbers them 0, 1, 2, ..., the common case).
  bool dense = true;
  for (std::size_t t = 0; t < reader.thread_ids.size(); ++t) {
    dense = dense && reader.thread_ids[t] == t;
  }
  std::unordered_map<std::uint64_t, std::uint32_t> index;
  if (!dense) {
    for (std::size_t t = 0; t < reader.thread_ids.size(); ++t) {
      index.emplace(reader.thread_ids[t], static_cast<std::uint32_t>(t));
    }
  }
  for (TraceEvent& e : file.events) {
    if (dense && e.thread < file.threads.size()) {
      // already its index
    } else if (const auto it = index.find(e.thread); !dense && it != index.end()) {
      e.thread = it->second;
    } else {
      throw TraceError("the trace file " + path + " has an event of thread " +
                       std::to_string(e.thread) + ", which it does not list");
    }
    e.start_ns += file.clock_offset_ns;
  }
  std::sort(file.events.begin(), file.events.end(),
            [](const TraceEvent& a, const TraceEvent& b) { return a.start_ns < b.start_ns; });
  return file;
}

void require_run_directory(const std::string& dir, const std::string& named_as) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw TraceError(fs::exists(dir, ec)
                         ? dir + " is not a directory: give the run directory" + named_as
                         : "no run directory " + dir);
  }
}

std::vector<ProcessTraceFile> read_trace_dir(const std::string& log_dir) {
  require_run_directory(log_dir, " (LOG_DIR)");
  std::error_code ec;
  const fs::path dir = fs::path(log_dir) / "trace";
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = ".trace.json";
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      paths.push_back(entry.path().string());
    }
  }
  if (paths.empty()) {
    throw TraceError("the run " + log_dir + " was not traced (no " + dir.string() +
                     "/*.trace.json), or its processes were killed (SIGKILL) before they wrote "
                     "theirs: trace a run with `trace: true` in the cluster file "
                     "or `tagflow up FILE --trace`");
  }
  std::sort(paths.begin(), paths.end());
  std::vector<ProcessTraceFile> files;
  files.reserve(paths.size());
  for (const std::string& path : paths) files.push_back(read_trace_file(path));
  return files;
}

std::string tag_text(const Tag& tag) {
  if (tag.is_never()) return "NEVER";
  if (tag.is_forever()) return "FOREVER";
  return std::to_string(tag.time_ns()) + "/" + std::to_string(tag.microstep());
}

}  // namespace tagflow::tracing
