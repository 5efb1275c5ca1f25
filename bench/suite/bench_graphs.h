// The graphs a suite names, loaded: its files (with weights) and the built-in anchor
// workloads, each with the ranges its inputs are drawn from and its minimal bytes.
#pragma once

#include <filesystem>
#include <memory>

#include "bench/suite/suite.h"
#include "bench/workloads.h"

namespace kiln {
class OpRegistry;
}

namespace kiln::bench {

// In suite order; a `builtin` entry expands to its workloads in their own order. A `model`
// entry is exported (python3 -m kiln.export_model) into `exports`, a directory it may fill.
Result<std::vector<Workload>> load_suite_graphs(const Suite& suite,
                                                const std::shared_ptr<const OpRegistry>& registry,
                                                const std::filesystem::path& exports);

}  // namespace kiln::bench
