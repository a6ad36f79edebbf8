#include "tracing/trace_files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace tagflow::tracing {

namespace fs = std::filesystem;

ProcessTraceFile read_trace_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw TraceError("cannot read the trace file " + path);
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw TraceError("the trace file " + path + " is not JSON: " + e.what());
  }
  ProcessTraceFile file;
  file.path = path;
  try {
    if (json.at("format") != "tagflow-trace-1") {
      throw TraceError("the trace file " + path + " is not in the format tagflow-trace-1");
    }
    file.process = json.at("process").get<std::string>();
    file.host = json.value("host", "");
    file.pid = json.value("pid", std::int64_t{0});
    file.clock_offset_ns = json.value("clock_offset_ns", std::int64_t{0});
    file.clock_error_ns = json.value("clock_error_ns", std::int64_t{0});
    file.dropped = json.value("dropped", std::uint64_t{0});
    for (const nlohmann::json& thread : json.at("threads")) {
      file.threads.push_back(
          {thread.at("name").get<std::string>(), thread.value("federate", std::string())});
    }
    const nlohmann::json& events = json.at("events");
    file.events.reserve(events.size());
    for (const nlohmann::json& e : events) {
      if (!e.is_array() || e.size() != 10) {
        throw TraceError("the trace file " + path + " has an event that is no array of 10 fields");
      }
      TraceEvent event;
      event.kind = e[0].get<std::string>();
      event.start_ns = e[1].get<std::int64_t>() + file.clock_offset_ns;
      event.duration_ns = e[2].get<std::int64_t>();
      event.thread = e[3].get<std::size_t>();
      if (event.thread >= file.threads.size()) {
        throw TraceError("the trace file " + path + " has an event of thread " +
                         std::to_string(event.thread) + ", which it does not list");
      }
      event.tag = Tag(e[4].get<std::int64_t>(), e[5].get<std::uint32_t>());
      event.name = e[6].get<std::string>();
      event.peer = e[7].get<std::string>();
      event.port = e[8].get<std::uint32_t>();
      event.bytes = e[9].get<std::uint64_t>();
      file.events.push_back(std::move(event));
    }
  } catch (const nlohmann::json::exception& e) {
    throw TraceError("the trace file " + path +
                     " does not have the fields of tagflow-trace-1: " + e.what());
  }
  std::sort(file.events.begin(), file.events.end(),
            [](const TraceEvent& a, const TraceEvent& b) { return a.start_ns < b.start_ns; });
  return file;
}

std::vector<ProcessTraceFile> read_trace_dir(const std::string& log_dir) {
  const fs::path dir = fs::path(log_dir) / "trace";
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = ".trace.json";
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      paths.push_back(entry.path().string());
    }
  }
  if (paths.empty()) {
    throw TraceError("no trace in " + log_dir + " (no " + dir.string() +
                     "/*.trace.json): run it with `trace: true` in the cluster file or "
                     "`tagflow up FILE --trace`");
  }
  std::sort(paths.begin(), paths.end());
  std::vector<ProcessTraceFile> files;
  files.reserve(paths.size());
  for (const std::string& path : paths) files.push_back(read_trace_file(path));
  return files;
}

}  // namespace tagflow::tracing
