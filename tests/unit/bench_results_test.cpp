// Benchmark suite results (bench/suite): the median's interval from order statistics, CSV
// quoting, JSON written and read back unchanged, merging shards (each cell once, missing and
// doubled cells named), and --shard's parsing.
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "bench/suite/results.h"
#include "bench/suite/run_cell.h"
#include "bench/suite/shard.h"

namespace kiln::bench {
namespace {

ResultRow row(int64_t cell, const std::string& graph) {
  ResultRow r;
  r.cell = cell;
  r.graph = graph;
  r.target = "cpu";
  r.device = "cpp_openmp:0";
  r.check = "ok";
  r.median_ms = 1.5 + static_cast<double>(cell);
  return r;
}

Results results(int64_t cells, std::vector<ResultRow> rows, const std::string& shard = "") {
  Results r;
  r.suite = "s";
  r.cells = cells;
  r.shard = shard;
  r.machine = "m";
  r.date = "2026-11-26T00:00:00Z";
  r.rows = std::move(rows);
  return r;
}

TEST(BenchResults, MedianAndItsIntervalFromOrderStatistics) {
  std::vector<double> samples;
  for (int i = 20; i >= 1; --i) samples.push_back(i);  // 1..20, unsorted
  ResultRow r;
  summarize_samples(samples, r);
  EXPECT_EQ(r.runs, 20);
  EXPECT_EQ(r.median_ms, 11);
  EXPECT_EQ(r.min_ms, 1);
  EXPECT_EQ(r.max_ms, 20);
  // n = 20: ranks floor(10 - 4.38) = 5 and ceil(10 + 4.38) = 15, from 0.
  EXPECT_EQ(r.ci_low_ms, 6);
  EXPECT_EQ(r.ci_high_ms, 16);
  ResultRow one;
  summarize_samples({2.5}, one);
  EXPECT_EQ(one.ci_low_ms, 2.5);
  EXPECT_EQ(one.ci_high_ms, 2.5);
}

TEST(BenchResults, CsvQuotesFieldsWithCommasAndQuotes) {
  ResultRow r = row(0, "a,b");
  r.error = "said \"no\"";
  const std::string csv = to_csv(results(1, {r}));
  EXPECT_NE(csv.find("0,\"a,b\",,cpu,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",\"said \"\"no\"\"\",,\n"), std::string::npos) << csv;
}

TEST(BenchResults, JsonRoundTrips) {
  ResultRow r = row(3, "softmax");
  r.shape = "f32[8, 9]";
  r.bytes = 12345;
  r.ci_low_ms = 0.25;
  r.bandwidth_fraction = 0.5;
  const Results in = results(4, {r}, "2/3");
  auto out = from_json(to_json(in), "test");
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(to_json(*out), to_json(in));
  // An output never written compares with an infinite error: kept through JSON.
  r.max_abs_error = std::numeric_limits<double>::infinity();
  auto infinite = from_json(to_json(results(4, {r})), "test");
  ASSERT_TRUE(infinite) << infinite.error().to_string();
  EXPECT_EQ(infinite->rows.at(0).max_abs_error, std::numeric_limits<double>::infinity());
  auto bad = from_json("{\"format\": \"other\"}", "x.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("x.json: not a kiln bench result"), std::string::npos);
  auto broken = from_json("{", "y.json");
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message().find("y.json: "), std::string::npos);
}

TEST(BenchResults, ReferenceRowsKeepTheirKindAndWhySkipped) {
  ResultRow eager = row(1, "softmax");
  eager.reference = "eager";
  ResultRow cuda = row(2, "softmax");
  cuda.reference = "compile";
  cuda.skipped = "PyTorch sees no CUDA device";
  auto out = from_json(to_json(results(3, {eager, cuda})), "test");
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(out->rows.at(0).reference, "eager");
  EXPECT_EQ(out->rows.at(1).skipped, "PyTorch sees no CUDA device");
  EXPECT_NE(to_csv(*out).find(",compile,PyTorch sees no CUDA device\n"), std::string::npos);
  // Results written before reference rows existed read as kiln rows.
  nlohmann::json old = nlohmann::json::parse(to_json(results(1, {row(0, "rowsum")})));
  old["rows"][0].erase("reference");
  old["rows"][0].erase("skipped");
  auto earlier = from_json(old.dump(), "old.json");
  ASSERT_TRUE(earlier) << earlier.error().to_string();
  EXPECT_EQ(earlier->rows.at(0).reference, "");
  EXPECT_EQ(earlier->rows.at(0).skipped, "");
}

TEST(BenchResults, MergeTakesEachCellOnceAndNamesWhatIsMissing) {
  auto merged = merge_results(
      {results(3, {row(2, "c"), row(0, "a")}, "1/2"), results(3, {row(1, "b")}, "2/2")}, false);
  ASSERT_TRUE(merged) << merged.error().to_string();
  ASSERT_EQ(merged->rows.size(), 3u);
  EXPECT_EQ(merged->rows[0].graph, "a");
  EXPECT_EQ(merged->rows[2].graph, "c");
  EXPECT_EQ(merged->shard, "");
  auto missing = merge_results({results(3, {row(0, "a")})}, false);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("no result for cells 1, 2"), std::string::npos);
  EXPECT_TRUE(merge_results({results(3, {row(0, "a")})}, true));
  auto twice = merge_results({results(3, {row(0, "a")}), results(3, {row(0, "a")})}, true);
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message().find("cell 0 (a on cpu) is in two result files"),
            std::string::npos);
  auto other = merge_results({results(3, {}), results(4, {})}, true);
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message().find("cannot join"), std::string::npos);
}

TEST(BenchResults, ShardsCoverEveryCellOnce) {
  auto s = parse_shard("2/3");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text(), "2/3");
  for (int64_t cell = 0; cell < 10; ++cell) {
    int owners = 0;
    for (int64_t k = 1; k <= 3; ++k) owners += Shard{k, 3}.contains(cell);
    EXPECT_EQ(owners, 1) << "cell " << cell;
  }
  for (const char* bad : {"0/3", "4/3", "3", "a/b", "1/0", "1/3x", "-1/3"})
    EXPECT_FALSE(parse_shard(bad)) << bad;
}

}  // namespace
}  // namespace kiln::bench
