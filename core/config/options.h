// Options: everything a config file says, read once (config_loader.h) into one immutable
// value that is passed explicitly to whatever needs it. No other code reads YAML or the
// environment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/support/log_levels.h"

namespace kiln {

// One entry of a plugin's `options:` map, passed through to the plugin untouched.
struct PluginOption {
  std::string key;
  std::vector<std::string> values;  // one value for a scalar
  bool is_list = false;
  bool operator==(const PluginOption&) const = default;
};

struct PluginConfig {
  std::string name;  // also the file name: kiln_<name>.so
  std::string path;  // explicit file; empty means search the plugin path
  std::vector<PluginOption> options;
  bool operator==(const PluginConfig&) const = default;
};

// "cpu:0", "cuda:1": a device kind as plugins report it, and an index among those.
struct DeviceRef {
  std::string kind;
  uint32_t index = 0;
  std::string to_string() const { return kind + ":" + std::to_string(index); }
  bool operator==(const DeviceRef&) const = default;
};

enum class SelectionMode { Autotune, FirstAvailable, Plugin };

struct Selection {
  SelectionMode mode = SelectionMode::Autotune;
  std::string plugin;  // for SelectionMode::Plugin
  bool operator==(const Selection&) const = default;
};

// How kernels are spread over the configured devices (core/runtime/placement.h).
enum class PlacementPolicy {
  // Each kernel to the device where it and the copies it needs are estimated cheapest
  // (roofline per device, a copy's bytes over the slower side's bandwidth).
  Cost,
  // Each kernel to the serving device when its plugin takes it, else to the first other
  // configured device that does.
  Order,
};

enum class KernelTuning { Off, Heuristic, Exhaustive };

struct AutotuneOptions {
  // off and heuristic: the plugin's default config; exhaustive: every config of its tuning
  // space is timed per kernel (core/tune).
  KernelTuning kernels = KernelTuning::Heuristic;
  int64_t warmup = 3;
  int64_t reps = 20;
  // With exhaustive: the time one kernel's candidates may take to time (after the default);
  // candidates past it are not timed.
  int64_t budget_ms = 3000;
  bool deterministic = false;  // only configs that keep the default's numerics
  // With exhaustive: each library call (conv2d) is timed against the kernels generated
  // instead, per shape, and the faster kept (core/tune/library_choice.h).
  bool libraries = true;
  bool operator==(const AutotuneOptions&) const = default;
};

struct CacheOptions {
  bool enabled = true;
  std::string dir;  // absolute after loading
  int64_t max_size_mb = 2048;
  bool operator==(const CacheOptions&) const = default;
};

// How graphs are scheduled into kernels (core/sched).
struct ScheduleOptions {
  bool fusion = true;       // false: one kernel per realized node, for comparisons
  int64_t max_readers = 4;  // a pointwise producer read by more kernels stays a buffer
  int64_t max_inline_ops = 64;
  // No merge makes a kernel longer than this: compile time then grows with the graph's
  // size, not with the longest chain of fusible nodes.
  int64_t max_kernel_ops = 256;
  int64_t min_fused_rows = 32;  // an epilogue merges into a reduction with this many rows
  // Reductions with fewer rows are split into partial and final kernels
  // (core/sched/split_long_rows.h); -1: the device's rule (GPUs: fewer than four thread
  // blocks per compute unit; CPUs: never), 0: never.
  int64_t split_rows_below = -1;
  int64_t max_peak_growth_bytes = 0;  // how far a merge may raise the peak of live buffers
  bool library_matmul = true;  // false: mm/bmm as generated kernels even with a plugin library
  bool library_conv = true;    // false: conv2d the same
  // Float sums through scatter (scatter_add, index_put, embedding gradients, ...) give the
  // same bits every run: fixed-point integer sums instead of float atomics
  // (core/lower/deterministic_scatter_sum.h); float scatter products are refused.
  bool deterministic = false;
  // f32 convolutions (and matmuls) may multiply on TF32 tensor cores (10-bit mantissas) in the
  // plugins' libraries that list `tf32`: what PyTorch's torch.backends.cudnn.allow_tf32 (on
  // by default) and torch.backends.cuda.matmul.allow_tf32 (off) permit; the bridge follows
  // them. Generated kernels keep f32 either way.
  bool conv_tf32 = false;
  bool matmul_tf32 = false;
  // Not a config key: library calls (library_call_signature) the autotuner found slower than
  // the kernels generated instead (core/tune/library_choice.h).
  std::vector<std::string> declined_library_calls = {};
  bool operator==(const ScheduleOptions&) const = default;
};

// How compiled graphs run on the caller's memory (run_into, the PyTorch bridge).
struct RunConfig {
  // A run returns once its kernels are launched, without waiting for the device, when every
  // tensor is read and written in place; a kernel's error (an index out of range) then fails
  // a later call: the next launch of that plugin or the next wait. False: every run waits.
  bool asynchronous = false;
  // Inputs and outputs go through the device plugin's page-locked host memory on a stream,
  // copies queued back to back, where the device claims asynchronous copies and page-locked
  // memory (ABI 1.2). Off by default: on an H100 it gained 6% on 4 MiB tensors and lost 12%
  // on 64 MiB ones, where packing into page-locked memory costs more than the faster copy
  // saves (bench/results/2026-11-26-h100-abi-1.2/copies.log).
  bool staging = false;
  // run_into's plan recorded once per set of caller addresses and replayed as one launch
  // (ABI 1.4 capture: CUDA graphs on ptx), where the device records and every step is a
  // kernel or library call on the graph's own device; other runs are plain. Off by default.
  bool cuda_graphs = false;
  // Host outputs kernels write in place ask the OS for transparent huge pages where it gives
  // them only on request (THP `madvise` mode, core/runtime/huge_pages.h): a fresh 64 MiB
  // output then faults 32 times instead of 16384.
  bool huge_pages = true;
  bool operator==(const RunConfig&) const = default;
};

struct Options {
  std::string source;  // the config file, or "<built-in default>"
  std::vector<PluginConfig> plugins;
  std::vector<DeviceRef> devices;  // candidates, in preference order
  Selection selection;
  // How kernels are spread over the configured devices when more than one is configured.
  PlacementPolicy placement = PlacementPolicy::Cost;
  AutotuneOptions autotune;
  CacheOptions cache;
  ScheduleOptions schedule;
  RunConfig run;
  LogLevels log;
  std::string debug_dir;                 // empty: no debug dumps
  std::vector<std::string> plugin_path;  // directories searched for kiln_<name>.so
  bool operator==(const Options&) const = default;
};

}  // namespace kiln
