// ProcessCollector: the process_* families (CPU time, memory, open files, start time) of this
// process, read from /proc at every collection, as the official Prometheus clients export them.
//
// Collect() reads /proc/self/stat, /proc/stat (boot time) and /proc/self/fd; when a file cannot
// be read (not Linux, /proc not mounted) it returns no families rather than throwing, so a scrape
// never fails because of it. parse_proc_self_stat() is the pure part, for tests.
// Thread-safety: Collect() may run concurrently from several scrapes (it shares no state).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "monitoring/metric_catalogue.hpp"

namespace tagflow::monitoring {

struct ProcessStats {
  double cpu_seconds = 0.0;          // user + system
  double resident_memory_bytes = 0;  // RSS
  double virtual_memory_bytes = 0;
  double start_time_seconds = 0.0;  // since the Unix epoch
  double open_fds = 0;
  bool kernel_thread = false;  // PF_KTHREAD in the flags (field 9)
};

/// Fields of a /proc/PID/stat line (the process name may hold spaces and parentheses). Returns
/// nullopt on a malformed line. boot_time_seconds: `btime` of /proc/stat. Leaves open_fds at 0.
std::optional<ProcessStats> parse_proc_self_stat(const std::string& line, double ticks_per_second,
                                                 double page_size_bytes, double boot_time_seconds);

/// The figures of the calling process now; nullopt when /proc cannot be read.
std::optional<ProcessStats> read_process_stats();

/// The family of `metric` (its catalogue name, help and type: counter or gauge) with one series,
/// `value` under `labels`.
prometheus::MetricFamily one_series_family(Metric metric, double value,
                                           const std::map<std::string, std::string>& labels);

class ProcessCollector : public prometheus::Collectable {
 public:
  /// `constant_labels` (node, kind, mode) are attached to every series.
  explicit ProcessCollector(std::map<std::string, std::string> constant_labels);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::map<std::string, std::string> constant_labels_;
};

}  // namespace tagflow::monitoring
