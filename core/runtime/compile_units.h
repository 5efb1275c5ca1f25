// Compiling a graph's kernels through the plugin: one unit per kernel when the plugin asks
// for it (KILN_COMPILE_PER_KERNEL), else one unit per tuning config, cut into as many as
// there are threads to compile them when it has enough kernels; units compile in
// parallel on oneTBB's threads when the plugin's compile is thread-safe. Each unit is cached
// on its own (kernel_key over the unit's KIR text), so with units per kernel a graph whose
// kernels changed in part recompiles only those.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cache/disk_cache.h"
#include "core/runtime/plugin.h"
#include "kiln/kir.hpp"

namespace kiln {

class Logging;

struct CompileUnit {
  std::vector<size_t> kernels;     // indices into the graph's kernel batch
  std::vector<std::string> names;  // their names
  std::string config;              // tuning config line ("" for the plugin's default)
  std::string text;                // KIR text of those kernels
  std::string artifact;            // filled by compile_units
  std::string metadata;            // the plugin's compile metadata (empty on a cache hit)
  bool cache_hit = false;
  double compile_ms = 0;
};

// Kernels that differ only in their names (a transformer's layers) with the same config need
// their code once: for each of `kernels`, the index of the first one like it.
std::vector<size_t> first_alike(const std::vector<kir::Kernel>& kernels,
                                const std::vector<std::string>& configs);

// `configs[i]` is kernel i's tuning config; `threads`: how many units may compile at once.
std::vector<CompileUnit> make_compile_units(const std::vector<kir::Kernel>& kernels,
                                            const std::vector<std::string>& configs,
                                            bool one_per_kernel, size_t threads);

// Whether `plugin` lets the core call compile() from several threads at once.
bool compiles_concurrently(const Plugin& plugin);
// Whether `plugin` wants one compile() per kernel.
bool compiles_per_kernel(const Plugin& plugin);

// The device as cache keys name it: plugin, index and device name.
std::string device_label(const Plugin& plugin, uint32_t device);

// Fills every unit's artifact from the cache or the plugin (in parallel when the plugin
// allows), telling `progress` (when given) each unit done. The first failure is returned,
// naming its unit's kernels.
Status compile_units(const Plugin& plugin, uint32_t device, std::vector<CompileUnit>& units,
                     const DiskCache& cache, const Logging* progress = nullptr);

}  // namespace kiln
