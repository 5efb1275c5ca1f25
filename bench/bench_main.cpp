// kiln-bench: the anchor workloads compiled with the configured plugin, each timed beside a
// plain copy of its minimal bytes in the same run. Prints median ms, achieved GB/s and the
// ratio to the copy's GB/s (1.0 = at the bandwidth floor).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "bench/copy_floor.h"
#include "bench/workloads.h"
#include "core/config/config_loader.h"
#include "core/config/environment.h"
#include "core/interp/random_tensor.h"
#include "core/ops/op_registry.h"
#include "core/runtime/compile.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

int fail(const kiln::Error& e) {
  std::cerr << "kiln-bench: " << e.to_string() << "\n";
  return e.is_user() ? 1 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("kiln-bench: the anchor workloads against a plain copy, measured in one run");
  std::string size = "cpu";
  std::string config;
  std::vector<std::string> only;
  int runs = 20;
  app.add_option("--size", size, "size class: cpu (the default), gpu, or small (a smoke run)")
      ->check(CLI::IsMember({"cpu", "gpu", "small"}));
  app.add_option("--config", config, "kiln config file (default: the built-in default)");
  app.add_option("--only", only, "run only these workloads");
  app.add_option("--runs", runs, "timed runs per workload (after one warm-up)")
      ->check(CLI::Range(1, 100000));
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

  fmt::print("{:<20} {:<18} {:>7} {:>10} {:>9} {:>9} {:>8}\n", "workload", "input", "kernels",
             "median ms", "GB/s", "copy GB/s", "vs copy");
  for (const auto& w : *workloads) {
    if (!only.empty() && std::find(only.begin(), only.end(), w.name) == only.end()) continue;
    auto compiled = kiln::compile(w.graph, *registry, *options, logging);
    if (!compiled) return fail(std::move(compiled).error().with_context("workload " + w.name));
    std::vector<kiln::HostTensor> inputs;
    for (size_t i = 0; i < w.graph.inputs.size(); ++i)
      inputs.push_back(kiln::random_tensor(w.graph.type(w.graph.inputs[i]), 1000 + i, w.ranges[i]));
    auto times = compiled->time_runs(inputs, runs);
    if (!times) return fail(std::move(times).error().with_context("workload " + w.name));
    const double ms = median(*times);
    const double copy_ms = median(kiln::bench::time_copy(w.minimal_bytes, runs));
    const double gbs = static_cast<double>(w.minimal_bytes) / (ms * 1e6);
    const double copy_gbs = static_cast<double>(w.minimal_bytes) / (copy_ms * 1e6);
    fmt::print("{:<20} {:<18} {:>7} {:>10.3f} {:>9.1f} {:>9.1f} {:>8.2f}\n", w.name, w.shape,
               compiled->stats().kernels + compiled->stats().externs, ms, gbs, copy_gbs,
               gbs / copy_gbs);
  }
  return 0;
}
