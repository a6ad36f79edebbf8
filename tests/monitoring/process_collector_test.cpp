// Tests of monitoring/process_collector.hpp: parsing /proc/self/stat, and the live figures of
// this test process.
#include "monitoring/process_collector.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include <gtest/gtest.h>

namespace tagflow::monitoring {
namespace {

// proc(5) fields: utime 14 = 250, stime 15 = 50, starttime 22 = 1000, vsize 23, rss 24 = 300.
const std::string kStatLine =
    "4242 (odd) name (x)) S 1 4242 4242 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 3 0 1000 "
    "123456789 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";

TEST(ProcessCollector, ParsesStatFieldsAfterAProcessNameWithSpacesAndParentheses) {
  const std::optional<ProcessStats> stats = parse_proc_self_stat(kStatLine, 100.0, 4096.0, 1e9);
  ASSERT_TRUE(stats.has_value());
  EXPECT_DOUBLE_EQ(stats->cpu_seconds, 3.0);
  EXPECT_DOUBLE_EQ(stats->start_time_seconds, 1e9 + 10.0);
  EXPECT_DOUBLE_EQ(stats->virtual_memory_bytes, 123456789.0);
  EXPECT_DOUBLE_EQ(stats->resident_memory_bytes, 300.0 * 4096.0);
  EXPECT_FALSE(stats->kernel_thread);  // flags 4194560 = 0x400100
  std::string kernel = kStatLine;
  kernel.replace(kernel.find("4194560"), 7, "2129984");  // 0x208040: PF_KTHREAD among them
  EXPECT_TRUE(parse_proc_self_stat(kernel, 100.0, 4096.0, 1e9)->kernel_thread);
}

TEST(ProcessCollector, RejectsTruncatedOrMalformedStatLines) {
  EXPECT_FALSE(parse_proc_self_stat("4242 (x) S 1 2 3", 100.0, 4096.0, 0).has_value());
  EXPECT_FALSE(parse_proc_self_stat("no parenthesis here", 100.0, 4096.0, 0).has_value());
  std::string bad = kStatLine;
  bad.replace(bad.find(" 250 "), 5, " abc ");
  EXPECT_FALSE(parse_proc_self_stat(bad, 100.0, 4096.0, 0).has_value());
}

TEST(ProcessCollector, ReadsPlausibleFiguresForThisProcess) {
  // Burn CPU until the kernel has charged at least one tick to this process.
  volatile double sink = 0;
  std::optional<ProcessStats> stats = read_process_stats();
  ASSERT_TRUE(stats.has_value());
  for (int round = 0; round < 1000 && stats->cpu_seconds <= 0.0; ++round) {
    for (int i = 0; i < 1000000; ++i) sink = sink + i * 0.5;
    stats = read_process_stats();
    ASSERT_TRUE(stats.has_value());
  }
  EXPECT_GT(stats->cpu_seconds, 0.0);
  EXPECT_GT(stats->resident_memory_bytes, 1 << 20);
  EXPECT_GE(stats->virtual_memory_bytes, stats->resident_memory_bytes);
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_LE(stats->start_time_seconds, now + 1.0);
  EXPECT_GT(stats->start_time_seconds, now - 3600.0);
}

TEST(ProcessCollector, CountsOpenFileDescriptors) {
  const double before = read_process_stats()->open_fds;
  std::vector<int> fds;
  for (int i = 0; i < 5; ++i) fds.push_back(::open("/dev/null", O_RDONLY));
  const double during = read_process_stats()->open_fds;
  for (int fd : fds) ::close(fd);
  EXPECT_GE(before, 3.0);  // stdin, stdout, stderr
  EXPECT_EQ(during, before + 5.0);
}

TEST(ProcessCollector, CollectsTheFiveProcessFamiliesWithTheConstantLabels) {
  const ProcessCollector collector({{"node", "replay"}, {"kind", "replay"}, {"mode", "reactor"}});
  const std::vector<prometheus::MetricFamily> families = collector.Collect();
  std::vector<std::string> names;
  for (const prometheus::MetricFamily& f : families) {
    names.push_back(f.name);
    ASSERT_EQ(f.metric.size(), 1U);
    ASSERT_EQ(f.metric[0].label.size(), 3U);
    EXPECT_EQ(f.metric[0].label[1].name, "mode");
    EXPECT_EQ(f.metric[0].label[2].value, "replay");
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"process_cpu_seconds_total", "process_resident_memory_bytes",
                                      "process_virtual_memory_bytes", "process_open_fds",
                                      "process_start_time_seconds"}));
  EXPECT_EQ(families[0].type, prometheus::MetricType::Counter);
  EXPECT_EQ(families[1].type, prometheus::MetricType::Gauge);
}

}  // namespace
}  // namespace tagflow::monitoring
