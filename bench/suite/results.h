// The results of a suite run: one row per matrix cell (graph x target), written as CSV and
// JSON (format kiln.bench/1); `kiln bench merge` joins the JSON of shards into one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/support/result.h"

namespace kiln::bench {

struct ResultRow {
  int64_t cell = 0;  // index in the suite's matrix: graph-major, targets in suite order
  std::string graph, shape, target, device;  // device: "plugin:index" that served the graph
  int64_t kernels = 0;                       // kernels launched plus library calls
  int64_t runs = 0;                          // timed samples
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double ci_low_ms = 0, ci_high_ms = 0;  // a 95% interval of the median (order statistics)
  int64_t bytes = 0;                     // minimal bytes: inputs read and outputs written once
  double gbps = 0;                       // bytes / median
  double device_gbps = 0;                // the device's bandwidth (its plugin's roofline)
  double bandwidth_fraction = 0;         // gbps / device_gbps (0 when unknown)
  double compile_cold_ms = 0, compile_warm_ms = 0;
  std::string check;  // "ok", "mismatch: ...", "skipped" (the suite turned checks off)
  double max_abs_error = 0;
  std::string error;      // a cell that could not run: why (and nothing measured)
  std::string reference;  // a PyTorch reference row: "eager", "compile", "max-autotune"
  std::string skipped;    // a reference cell not run (no PyTorch, no such device): why
};

struct Results {
  std::string suite;
  int64_t cells = 0;            // cells in the whole matrix
  std::string shard;            // "K/N", or "" for the whole matrix
  std::string machine;          // host name, CPU model
  std::string date;             // UTC, ISO 8601
  std::vector<ResultRow> rows;  // by cell
};

std::string to_csv(const Results& r);
std::string to_json(const Results& r);
// `source` names the text in errors.
Result<Results> from_json(const std::string& text, const std::string& source);

// The rows of every part in one Results: parts of one suite and matrix, each cell once; a cell
// no part has is an error naming it (unless `partial`).
Result<Results> merge_results(const std::vector<Results>& parts, bool partial);

}  // namespace kiln::bench
