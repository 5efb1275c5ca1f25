// One cell of a suite's matrix: a graph compiled for a target cold (an empty kernel cache) and
// warm (that cache filled), its outputs checked against the reference once (poisoned first),
// then timed by the suite's protocol.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include "bench/suite/results.h"
#include "bench/suite/suite.h"
#include "bench/workloads.h"
#include "core/config/options.h"
#include "core/interp/oracle.h"
#include "core/support/logging.h"

namespace kiln {
class OpRegistry;
}

namespace kiln::bench {

struct CellTarget {
  const SuiteTarget* target = nullptr;
  Options options;  // the target's config, read once
};

// A graph's cell inputs (random values from each input's range) and the reference
// interpreter's outputs for them, computed on first use and shared by the graph's cells: the
// interpreter is slow on big graphs.
class GraphReference {
 public:
  explicit GraphReference(const Workload& w);
  // Drawn on first use: a shard may hold no cell of the graph.
  const std::vector<HostTensor>& inputs();
  // Outputs of a run against the reference: "ok", or the first output that differs; the
  // largest error into `max_abs`.
  std::string check(const std::vector<HostTensor>& outputs, double& max_abs);

 private:
  const Workload& w_;
  std::vector<HostTensor> inputs_;
  std::optional<Result<OracleResults>> oracle_;
};

// Never fails: a cell that cannot compile or run has `error` set and nothing measured.
// `scratch` is a directory the cell may fill and empty (its kernel cache).
ResultRow run_cell(int64_t cell, const Workload& w, GraphReference& reference, const CellTarget& t,
                   const Suite& suite, const std::shared_ptr<const OpRegistry>& registry,
                   const Logging& logging, const std::filesystem::path& scratch);

// Median, extremes and a 95% interval of the median of `samples` (ms) into `row`.
void summarize_samples(std::vector<double> samples, ResultRow& row);

}  // namespace kiln::bench
