// kiln-bench: the anchor workloads compiled with the configured plugin, each timed beside a
// plain copy of its minimal bytes in the same run. Prints median ms, achieved GB/s and the
// ratio to the copy's GB/s (1.0 = at the bandwidth floor).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <optional>

#include "bench/copy_floor.h"
#include "bench/workloads.h"
#include "core/config/config_loader.h"
#include "core/config/environment.h"
#include "core/interp/random_tensor.h"
#include "core/ops/op_registry.h"
#include "core/runtime/compile.h"
#include "core/support/median.h"

namespace {

struct Timing {
  size_t kernels = 0;  // launches plus library calls
  double ms = 0;       // median
};

int fail(const kiln::Error& e) {
  std::cerr << "kiln-bench: " << e.to_string() << "\n";
  return e.is_user() ? 1 : 2;
}

kiln::Result<Timing> time_workload(const kiln::bench::Workload& w,
                                   const std::vector<kiln::HostTensor>& inputs,
                                   const std::shared_ptr<const kiln::OpRegistry>& registry,
                                   const kiln::Options& options, const kiln::Logging& logging,
                                   int runs, int runs_per_sample) {
  auto compiled = kiln::compile(w.graph, registry, options, logging);
  if (!compiled) return std::move(compiled).error().with_context("workload " + w.name);
  auto times = compiled->time_runs(inputs, runs, runs_per_sample);
  if (!times) return std::move(times).error().with_context("workload " + w.name);
  return Timing{compiled->stats().kernels + compiled->stats().externs, kiln::median(*times)};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("kiln-bench: the anchor workloads against a plain copy, measured in one run");
  std::string size = "cpu";
  std::string config;
  std::vector<std::string> only;
  int runs = 20;
  int runs_per_sample = 1;
  bool unfused = false;
  app.add_option("--size", size, "size class: cpu (the default), gpu, or small (a smoke run)")
      ->check(CLI::IsMember({"cpu", "gpu", "small"}));
  app.add_option("--config", config, "kiln config file (default: the built-in default)");
  app.add_option("--only", only, "run only these workloads");
  app.add_option("--runs", runs, "timed runs per workload (after one warm-up)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--runs-per-sample", runs_per_sample,
                 "runs back to back per timed sample (device time divided by the count)")
      ->check(CLI::Range(1, 1000));
  app.add_flag("--unfused", unfused,
               "also time each workload with fusion off (one kernel per node), in the same run");
  CLI11_PARSE(app, argc, argv);

  auto options = kiln::load_options(config.empty() ? std::nullopt : std::optional(config),
                                    kiln::Environment::from_process());
  if (!options) return fail(options.error());
  const kiln::Logging logging(options->log);
  auto registry = kiln::OpRegistry::create();
  if (!registry) return fail(registry.error());
  const auto cls = size == "cpu"   ? kiln::bench::SizeClass::Cpu
                   : size == "gpu" ? kiln::bench::SizeClass::Gpu
                                   : kiln::bench::SizeClass::Small;
  auto workloads = kiln::bench::anchor_workloads(cls, *registry);
  if (!workloads) return fail(workloads.error());

  fmt::print("{:<20} {:<18} {:>7} {:>10} {:>9} {:>9} {:>8}{}\n", "workload", "input", "kernels",
             "median ms", "GB/s", "copy GB/s", "vs copy",
             unfused ? "   | unfused: kernels  median ms  vs copy" : "");
  for (const auto& w : *workloads) {
    if (!only.empty() && std::find(only.begin(), only.end(), w.name) == only.end()) continue;
    std::vector<kiln::HostTensor> inputs;
    for (size_t i = 0; i < w.graph.inputs.size(); ++i)
      inputs.push_back(kiln::random_tensor(w.graph.type(w.graph.inputs[i]), 1000 + i, w.ranges[i]));
    auto fused = time_workload(w, inputs, *registry, *options, logging, runs, runs_per_sample);
    if (!fused) return fail(fused.error());
    std::optional<Timing> plain;
    if (unfused) {
      kiln::Options off = *options;
      off.schedule.fusion = false;
      auto t = time_workload(w, inputs, *registry, off, logging, runs, runs_per_sample);
      if (!t) return fail(t.error());
      plain = *t;
    }
    const double copy_ms = kiln::median(kiln::bench::time_copy(w.minimal_bytes, runs));
    const auto gbs = [&](double ms) { return static_cast<double>(w.minimal_bytes) / (ms * 1e6); };
    fmt::print("{:<20} {:<18} {:>7} {:>10.3f} {:>9.1f} {:>9.1f} {:>8.2f}", w.name, w.shape,
               fused->kernels, fused->ms, gbs(fused->ms), gbs(copy_ms), copy_ms / fused->ms);
    if (plain) {
      fmt::print("   | {:>16} {:>10.3f} {:>8.2f}", plain->kernels, plain->ms, copy_ms / plain->ms);
    }
    fmt::print("\n");
  }
  return 0;
}
