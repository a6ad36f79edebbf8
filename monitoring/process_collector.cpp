#include "monitoring/process_collector.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "monitoring/metric_catalogue.hpp"

namespace tagflow::monitoring {
namespace {

std::optional<double> read_boot_time() {
  std::ifstream in("/proc/stat");
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime" && in >> value) return value;
    in.ignore(1 << 20, '\n');
  }
  return std::nullopt;
}

std::optional<double> count_open_fds() {
  std::error_code error;
  std::filesystem::directory_iterator it("/proc/self/fd", error);
  if (error) return std::nullopt;
  double count = 0;
  for (const auto& entry : it) {
    (void)entry;
    ++count;
  }
  return count - 1;  // minus the descriptor of the directory being listed
}

}  // namespace

prometheus::MetricFamily one_series_family(Metric metric, double value,
                                           const std::map<std::string, std::string>& labels) {
  const MetricSpec& s = spec(metric);
  prometheus::MetricFamily f;
  f.name = s.name;
  f.help = s.help;
  prometheus::ClientMetric m;
  for (const auto& [name, label_value] : labels) m.label.push_back({name, label_value});
  if (s.type == MetricType::counter) {
    f.type = prometheus::MetricType::Counter;
    m.counter.value = value;
  } else {
    f.type = prometheus::MetricType::Gauge;
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
  return f;
}

std::optional<ProcessStats> parse_proc_self_stat(const std::string& line, double ticks_per_second,
                                                 double page_size_bytes, double boot_time_seconds) {
  // "pid (comm) state ppid ..." — comm may contain ") ", so split after the last ')'.
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos || ticks_per_second <= 0) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  // Fields after comm are numbered from 3 (state) in proc(5).
  std::vector<std::string> f;
  std::string field;
  while (fields >> field) f.push_back(field);
  if (f.size() < 22) return std::nullopt;
  auto at = [&](int number) { return std::stod(f[static_cast<std::size_t>(number - 3)]); };
  try {
    ProcessStats stats;
    stats.cpu_seconds = (at(14) + at(15)) / ticks_per_second;  // utime + stime
    stats.start_time_seconds = boot_time_seconds + at(22) / ticks_per_second;
    stats.virtual_memory_bytes = at(23);
    stats.resident_memory_bytes = at(24) * page_size_bytes;
    constexpr unsigned long kKernelThread = 0x00200000;  // PF_KTHREAD
    stats.kernel_thread = (std::stoul(f[9 - 3]) & kKernelThread) != 0;
    return stats;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<ProcessStats> read_process_stats() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const std::optional<double> boot_time = read_boot_time();
  if (!boot_time) return std::nullopt;
  std::optional<ProcessStats> stats =
      parse_proc_self_stat(line, static_cast<double>(::sysconf(_SC_CLK_TCK)),
                           static_cast<double>(::sysconf(_SC_PAGESIZE)), *boot_time);
  if (!stats) return std::nullopt;
  const std::optional<double> fds = count_open_fds();
  if (!fds) return std::nullopt;
  stats->open_fds = *fds;
  return stats;
}

ProcessCollector::ProcessCollector(std::map<std::string, std::string> constant_labels)
    : constant_labels_(std::move(constant_labels)) {}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  const std::optional<ProcessStats> stats = read_process_stats();
  if (!stats) return {};
  return {
      one_series_family(Metric::process_cpu_seconds, stats->cpu_seconds, constant_labels_),
      one_series_family(Metric::process_resident_memory, stats->resident_memory_bytes,
                        constant_labels_),
      one_series_family(Metric::process_virtual_memory, stats->virtual_memory_bytes,
                        constant_labels_),
      one_series_family(Metric::process_open_fds, stats->open_fds, constant_labels_),
      one_series_family(Metric::process_start_time, stats->start_time_seconds, constant_labels_)};
}

}  // namespace tagflow::monitoring
