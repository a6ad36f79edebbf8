#include "cli/launch/trace_collector.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "nodes/cluster/process_plan.hpp"

namespace tagflow::cli {

std::vector<std::string> trace_files_of(const cluster::ClusterConfig& config,
                                        const std::string& process,
                                        const std::vector<std::string>& replicas) {
  std::vector<std::string> files{process + ".trace.json"};
  if (config.trace.digests) {
    for (const std::string& replica : replicas) {
      files.push_back(replica + ".values.tsv");
      files.push_back(replica + ".values.bin");
    }
  }
  return files;
}

TraceCollector::TraceCollector(const cluster::ClusterConfig& config, const std::string& dir)
    : dir_((std::filesystem::absolute(dir) / "trace").lexically_normal().string()) {
  for (const cluster::ProcessPlan& process : cluster::plan_processes(config)) {
    if (cluster::runs_with_coordinator(config, process)) continue;
    for (const std::string& name : trace_files_of(config, process.name, process.replicas)) {
      files_[name].senders = process.replicas;
    }
  }
}

coordinator::TraceReceipt TraceCollector::receive(const std::string& federate,
                                                  const coordinator::ControlMessage& part) {
  const auto found = files_.find(part.process);
  if (found == files_.end()) {
    return {false, "no traced process that runs away from the coordinator writes that file", 0};
  }
  File& file = found->second;
  if (std::find(file.senders.begin(), file.senders.end(), federate) == file.senders.end()) {
    return {false, "sent with the key of '" + federate + "', which is not a replica of its process",
            0};
  }
  if (part.total > kMaxTraceFileBytes) {
    return {false,
            "a file of " + std::to_string(part.total) + " bytes is over the limit of " +
                std::to_string(kMaxTraceFileBytes),
            0};
  }
  if (file.stored > 0 && part.total != file.total) {
    return {false,
            "the file's size changed from " + std::to_string(file.total) + " to " +
                std::to_string(part.total) + " bytes",
            0};
  }
  const std::uint64_t end = part.offset + part.text.size();
  if (end > part.total) return {false, "the piece ends past the file's size", 0};
  if (end <= file.stored && (file.stored > 0 || file.whole)) {
    return {true, "", file.stored};  // sent again after a lost answer: stored already
  }
  if (part.offset != file.stored) {
    return {false,
            "expected the piece at offset " + std::to_string(file.stored) + ", got " +
                std::to_string(part.offset),
            0};
  }
  const std::filesystem::path target = std::filesystem::path(dir_) / part.process;
  const std::filesystem::path partial = target.string() + ".part";
  try {
    std::filesystem::create_directories(dir_);
    std::ofstream out(partial,
                      std::ios::binary | (part.offset == 0 ? std::ios::trunc : std::ios::app));
    out.write(part.text.data(), static_cast<std::streamsize>(part.text.size()));
    out.close();
    if (!out) return {false, "cannot write " + partial.string(), file.stored};
    file.total = part.total;
    file.stored = end;
    if (file.stored == file.total) {
      std::filesystem::rename(partial, target);
      file.whole = true;
    }
  } catch (const std::exception& e) {
    return {false, e.what(), file.stored};
  }
  return {true, "", file.stored};
}

std::vector<std::string> TraceCollector::missing() const {
  std::vector<std::string> names;
  for (const auto& [name, file] : files_) {
    if (!file.whole) names.push_back(name);
  }
  return names;
}

}  // namespace tagflow::cli
