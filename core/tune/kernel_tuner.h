// Autotuning per kernel: every config of the plugin's tuning space (in deterministic mode,
// only those that keep the default's numerics: the plugin marks the others `exact=0`) is
// compiled (in parallel when the plugin allows), its output checked against the default's
// (candidate_check.h: same bits for exact configs, within tolerance for others; a config
// that differs is never timed), then timed on the device under one protocol owned here:
// `warmup` launches, then `reps` launches each timed by the plugin's events, over three
// rotating sets of buffers holding data as a model gives it (tuning_inputs.h: gather
// positions spread over their whole range); the median decides, and a config other than the
// default wins only when it is faster by more than noise (3%). Candidates are timed in the
// plugin's order until `budget_ms` is spent. Winners are cached ("tune" entries, keyed by the
// kernel's KIR, the device, the plugin's compiler and the protocol).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cache/disk_cache.h"
#include "core/config/options.h"
#include "core/runtime/plugin.h"
#include "core/support/logging.h"
#include "kiln/kir.hpp"

namespace kiln {

// One config line per kernel ("" where the plugin offers a single config).
Result<std::vector<std::string>> tune_kernels(std::shared_ptr<const Plugin> plugin, uint32_t device,
                                              const std::vector<kir::Kernel>& kernels,
                                              const AutotuneOptions& options,
                                              const DiskCache& cache, const Logging& logging);

// A tuning space line split into the config the plugin compiles and whether it keeps the
// default's numerics (no `exact=0` among its pairs).
struct TuningCandidate {
  std::string config;
  bool exact = true;
};
TuningCandidate read_candidate(const std::string& line);

}  // namespace kiln
