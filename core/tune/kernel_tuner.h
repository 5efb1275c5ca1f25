// Autotuning per kernel: every config of the plugin's tuning space (in deterministic mode,
// only those that keep the default's numerics: the plugin marks the others `exact=0`) is
// compiled (in parallel when the plugin allows) and timed on the device under one protocol
// owned here: `warmup` launches, then `reps` launches each timed by the plugin's events, over
// three rotating sets of buffers filled with fresh random values (floats in [-1, 1),
// integers 0, so gathers stay in range); the median decides. Winners are cached ("tune"
// entries, keyed by the kernel's KIR, the device, the plugin's compiler and the protocol).
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
