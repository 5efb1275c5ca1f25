#include "core/runtime/compile_units.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

#include "core/kir/kir_hash.h"
#include "core/support/logging.h"

namespace kiln {
namespace {

Status compile_unit(const Plugin& plugin, uint32_t device, CompileUnit& unit) {
  if (auto s = plugin.require(plugin.api().compile, "compile"); !s) return s;
  kiln_compile_args args{sizeof(args), device, unit.text.c_str(), unit.text.size(),
                         unit.config.c_str()};
  kiln_blob* artifact = nullptr;
  kiln_blob* metadata = nullptr;
  const auto start = std::chrono::steady_clock::now();
  if (auto s = plugin.check(plugin.api().compile(plugin.instance(), &args, &artifact, &metadata),
                            "compile");
      !s)
    return s;
  unit.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  unit.artifact = plugin.take_blob(artifact);
  unit.metadata = plugin.take_blob(metadata);
  return Ok{};
}

// One unit's artifact from the cache, or compiled and cached.
void compile_one(const Plugin& plugin, uint32_t device, const std::string& label, CompileUnit& unit,
                 const DiskCache& cache, Status& result) {
  const CacheKey key =
      kernel_key(kir_hash(unit.text), unit.config, label, plugin.attributes().compiler_fingerprint);
  if (auto hit = cache.get(key)) {
    unit.artifact = std::move(*hit);
    unit.cache_hit = true;
    return;
  }
  result = compile_unit(plugin, device, unit);
  if (result) cache.put(key, unit.artifact);
}

}  // namespace

std::vector<size_t> first_alike(const std::vector<kir::Kernel>& kernels,
                                const std::vector<std::string>& configs) {
  std::map<std::pair<std::string, std::string>, size_t> seen;
  std::vector<size_t> first;
  for (size_t i = 0; i < kernels.size(); ++i) {
    kir::Kernel unnamed = kernels[i];
    unnamed.name.clear();
    first.push_back(seen.try_emplace({kir::print({unnamed}), configs.at(i)}, i).first->second);
  }
  return first;
}

std::vector<CompileUnit> make_compile_units(const std::vector<kir::Kernel>& kernels,
                                            const std::vector<std::string>& configs,
                                            bool one_per_kernel, size_t threads) {
  // Kernels by config in first-seen order, each kernel its own group with one_per_kernel.
  std::vector<std::pair<std::string, std::vector<size_t>>> groups;
  std::map<std::string, size_t> group_of;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const std::string& config = configs.at(i);
    const auto [it, fresh] = group_of.try_emplace(config, groups.size());
    if (fresh || one_per_kernel)
      groups.push_back({config, {i}});
    else
      groups[it->second].second.push_back(i);
  }
  // A group is cut into up to `threads` units of kMinKernelsPerUnit or more: each costs the
  // plugin's start-up (a C++ compiler's), and they compile side by side.
  constexpr size_t kMinKernelsPerUnit = 4;
  std::vector<CompileUnit> units;
  for (const auto& [config, all] : groups) {
    const size_t parts =
        std::clamp<size_t>(all.size() / kMinKernelsPerUnit, 1, std::max<size_t>(threads, 1));
    for (size_t part = 0; part < parts; ++part) {
      CompileUnit unit;
      unit.config = config;
      unit.kernels.assign(
          all.begin() + static_cast<std::ptrdiff_t>(part * all.size() / parts),
          all.begin() + static_cast<std::ptrdiff_t>((part + 1) * all.size() / parts));
      units.push_back(std::move(unit));
    }
  }
  for (CompileUnit& unit : units) {
    std::vector<kir::Kernel> own;
    for (size_t i : unit.kernels) {
      own.push_back(kernels[i]);
      unit.names.push_back(kernels[i].name);
    }
    unit.text = kir::print(own);
  }
  return units;
}

bool compiles_concurrently(const Plugin& plugin) {
  return (plugin.attributes().thread_safety & KILN_THREAD_SAFE_COMPILE) != 0;
}

bool compiles_per_kernel(const Plugin& plugin) {
  return (plugin.attributes().thread_safety & KILN_COMPILE_PER_KERNEL) != 0;
}

std::string device_label(const Plugin& plugin, uint32_t device) {
  std::string name;
  for (const DeviceInfo& d : plugin.devices())
    if (d.index == device) name = d.name;
  return plugin.name() + ":" + std::to_string(device) + ":" + name;
}

Status compile_units(const Plugin& plugin, uint32_t device, std::vector<CompileUnit>& units,
                     const DiskCache& cache, const Logging* progress) {
  const std::string label = device_label(plugin, device);
  std::vector<Status> results(units.size(), Ok{});
  // Counted and reported under one lock, so the counts a user sees only go up (units that
  // finish together on two threads would otherwise report out of order).
  std::mutex done_mutex;
  size_t done = 0;
  auto one = [&](size_t i) {
    compile_one(plugin, device, label, units[i], cache, results[i]);
    if (!progress) return;
    std::lock_guard lock(done_mutex);
    progress->progress("compiling", ++done, units.size());
  };
  if (compiles_concurrently(plugin) && units.size() > 1) {
    tbb::parallel_for(size_t{0}, units.size(), one);
  } else {
    for (size_t i = 0; i < units.size(); ++i) one(i);
  }
  for (size_t i = 0; i < units.size(); ++i) {
    if (results[i]) continue;
    std::string names;
    for (const std::string& n : units[i].names) names += (names.empty() ? "" : ", ") + n;
    return std::move(results[i]).error().with_context("compiling " + names);
  }
  return Ok{};
}

}  // namespace kiln
