// Tests of bench/report.hpp: the result format every benchmark shares.
#include "bench/report.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

namespace tagflow::bench {
namespace {

TEST(BenchReport, RatiosAreComputedFromFiguresOfTheSameReport) {
  BenchReport report("demo");
  report.add("reactor", 300.0, "ops/s");
  report.add("caf", 100.0, "ops/s");
  EXPECT_DOUBLE_EQ(report.add_ratio("pingpong: reactor/caf", "reactor", "caf"), 3.0);
  EXPECT_DOUBLE_EQ(report.ratios().at("pingpong: reactor/caf"), 3.0);
}

TEST(BenchReport, ARatioOfAnUnknownFigureThrows) {
  BenchReport report("demo");
  report.add("reactor", 300.0, "ops/s");
  EXPECT_THROW(report.add_ratio("x", "reactor", "caf"), std::out_of_range);
  EXPECT_TRUE(report.ratios().empty());
}

TEST(BenchReport, AFigureCannotBeAddedTwice) {
  BenchReport report("demo");
  report.add("a", 1.0, "s");
  EXPECT_THROW(report.add("a", 2.0, "s"), std::invalid_argument);
  EXPECT_DOUBLE_EQ(report.value("a"), 1.0);
}

TEST(BenchReport, JsonHasTheDocumentedShape) {
  BenchReport report("demo");
  report.add("a", 2.0, "ns");
  report.add("b", 8.0, "ns");
  report.add_ratio("b/a", "b", "a");
  const nlohmann::json doc = report.to_json();
  EXPECT_EQ(doc["benchmark"], "demo");
  ASSERT_EQ(doc["results"].size(), 2U);
  EXPECT_EQ(doc["results"][1]["name"], "b");
  EXPECT_DOUBLE_EQ(doc["results"][1]["value"].get<double>(), 8.0);
  EXPECT_EQ(doc["results"][1]["unit"], "ns");
  EXPECT_DOUBLE_EQ(doc["ratios"]["b/a"].get<double>(), 4.0);
}

TEST(BenchReport, WriteJsonLeavesOnlyTheFinishedFile) {
  BenchReport report("demo");
  report.add("a", 1.5, "s");
  const std::string path = ::testing::TempDir() + "report_test.json";
  report.write_json(path);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc, report.to_json());
}

TEST(BenchReport, TableListsEveryFigureAndRatio) {
  BenchReport report("demo");
  report.add("sample_1e6_kary", 40.0, "ns");
  report.add("sample_1e6_binary", 400.0, "ns");
  report.add_ratio("sample_1e6: binary/kary", "sample_1e6_binary", "sample_1e6_kary");
  const std::string table = report.table();
  EXPECT_NE(table.find("sample_1e6_kary"), std::string::npos);
  EXPECT_NE(table.find("sample_1e6: binary/kary"), std::string::npos);
  EXPECT_NE(table.find("10.00"), std::string::npos);
}

TEST(BenchReport, ASmallRatioKeepsThreeSignificantDigits) {
  BenchReport report("demo");
  report.add("a", 1.0, "s");
  report.add("b", 812.0, "s");
  report.add_ratio("a/b", "a", "b");
  report.add_ratio("b/b", "b", "b");
  const std::string table = report.table();
  EXPECT_NE(table.find("a/b            0.00123\n"), std::string::npos) << table;
  EXPECT_NE(table.find("b/b               1.00\n"), std::string::npos) << table;
}

}  // namespace
}  // namespace tagflow::bench
