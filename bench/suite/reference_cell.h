// A reference cell of a suite's matrix: the graph run by PyTorch (eager or torch.compile) on
// the inputs kiln's cells use, through the Python package's kiln.bench_reference, timed by
// the suite's protocol and its outputs checked against kiln's reference. Where PyTorch (or
// the kiln package, or the device) is not there, the cell is skipped and says why.
#pragma once

#include <filesystem>

#include "bench/suite/results.h"
#include "bench/suite/run_cell.h"
#include "bench/suite/suite.h"
#include "bench/workloads.h"

namespace kiln::bench {

// Never fails: a graph PyTorch cannot run has `error` set, a cell that cannot run here
// `skipped`. `scratch` is a directory the cell may fill and empty.
ResultRow run_reference_cell(int64_t cell, const Workload& w, GraphReference& reference,
                             const SuiteTarget& target, const Suite& suite,
                             const std::filesystem::path& scratch);

}  // namespace kiln::bench
