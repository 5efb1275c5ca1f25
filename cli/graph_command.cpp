#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>

#include "cli/cli_session.h"
#include "cli/commands.h"
#include "cli/explain.h"
#include "core/graph/graph_dump.h"
#include "core/graph/graph_json.h"
#include "core/graph/safetensors.h"
#include "core/interp/compare.h"
#include "core/interp/interpreter.h"
#include "core/interp/oracle.h"
#include "core/interp/random_tensor.h"
#include "core/kir/kir_emit.h"
#include "core/lower/loop_ir_print.h"
#include "core/ops/op_registry.h"
#include "core/passes/complex_lowering.h"
#include "core/passes/decompose.h"
#include "core/runtime/compile.h"
#include "core/runtime/debug_dump.h"
#include "core/runtime/session.h"
#include "core/sched/schedule_graph.h"

namespace kiln::cli {
namespace {

struct GraphFlags {
  std::string graph;
  std::string weights;
  std::string inputs;
  std::string save_outputs;
  std::string backend = "config";
  bool check = false;
  bool explain = false;
  int bench = 0;
  int bench_calls = 0;
  int profile = 0;
  uint64_t seed = 0;
  bool decomposed = false;
  std::string emit = "kir";
};

// Loads the graph and, when given, its weights; `need_weights` makes missing weights an error.
Result<Graph> open_graph(const GraphFlags& flags, const std::shared_ptr<const OpRegistry>& registry,
                         bool need_weights) {
  auto graph = load_graph(flags.graph, registry);
  if (!graph) return graph;
  if (!flags.weights.empty()) {
    auto weights = read_safetensors(flags.weights);
    if (!weights) return std::move(weights).error();
    if (auto s = attach_weights(*graph, *weights, flags.weights); !s) return std::move(s).error();
  } else if (need_weights && !graph->params.empty()) {
    return Error::user(flags.graph + ": the graph has " + std::to_string(graph->params.size()) +
                       " parameters; give their values with --weights FILE.safetensors");
  }
  return lower_complex(*graph);
}

int check(const GraphFlags& flags) {
  auto registry = OpRegistry::create();
  if (!registry) return report(registry.error());
  auto graph = open_graph(flags, *registry, false);
  if (!graph) return report(graph.error());
  if (flags.decomposed) {
    auto primitive = decompose(*graph, *registry);
    if (!primitive) return report(primitive.error());
    *graph = std::move(*primitive);
  }
  fmt::print("{}", dump_graph(*graph));
  return kExitOk;
}

Result<std::vector<HostTensor>> gather_inputs(const Graph& graph, const GraphFlags& flags) {
  std::vector<HostTensor> inputs;
  if (!flags.inputs.empty()) {
    auto file = read_safetensors(flags.inputs);
    if (!file) return std::move(file).error();
    for (ValueRef r : graph.inputs) {
      const Value& v = graph.value(r);
      auto it = file->find(v.name);
      if (it == file->end())
        return Error::user(flags.inputs + ": no tensor named '" + v.name + "' for input '" +
                           v.name + "'");
      inputs.push_back(it->second);
    }
    return inputs;
  }
  fmt::print("inputs: random, seed {}\n", flags.seed);
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const Value& v = graph.value(graph.inputs[i]);
    try {
      inputs.push_back(random_tensor(v.type, flags.seed + i, v.random_range));
    } catch (const std::bad_alloc&) {
      return Error::user("input '" + v.name + "' (" + v.type.to_string() +
                         "): out of memory making random values for its " +
                         std::to_string(storage_extent(v.type) * dtype_size(v.type.dtype)) +
                         " bytes");
    }
  }
  return inputs;
}

void print_output(const std::string& name, const HostTensor& t) {
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.get(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  std::string head;
  for (int64_t i = 0; i < std::min<int64_t>(t.numel(), 6); ++i)
    head += fmt::format("{}{:.6g}", i ? ", " : "", t.get(i));
  if (t.numel() > 6) head += ", ...";
  fmt::print("output %{} : {}  min {:.6g}  max {:.6g}  mean {:.6g}  [{}]\n", name,
             t.type().to_string(), lo, hi,
             t.numel() > 0 ? sum / static_cast<double>(t.numel()) : 0.0, head);
}

Status save_outputs(const Graph& graph, const std::vector<HostTensor>& outputs,
                    const std::string& path) {
  std::vector<std::pair<std::string, HostTensor>> named;
  for (size_t i = 0; i < outputs.size(); ++i)
    named.emplace_back(graph.value(graph.outputs[i]).name, outputs[i]);
  if (auto s = write_safetensors(path, named); !s) return s;
  fmt::print("saved {} outputs to {}\n", named.size(), path);
  return Ok{};
}

// --check: every output against the oracle; false when any is outside its tolerance.
bool check_outputs(const Graph& graph, const std::vector<HostTensor>& got,
                   const OracleResults& oracle) {
  const std::vector<HostTensor>& want = oracle.expected;
  bool all_ok = true;
  for (size_t i = 0; i < got.size(); ++i) {
    const Tolerance tol = tolerance_for(want[i].dtype());
    const Comparison c = oracle.compare(i, got[i]);
    fmt::print(
        "check %{} : max abs error {:.3g}  max rel error {:.3g}  (atol {:g}, rtol {:g})  {}\n",
        graph.value(graph.outputs[i]).name, c.max_abs, c.max_rel, tol.atol, tol.rtol,
        c.ok() ? "ok"
               : fmt::format("MISMATCH at {} of {} elements (first at {})", c.mismatches,
                             want[i].numel(), c.first_mismatch));
    all_ok = all_ok && c.ok();
  }
  return all_ok;
}

int run_reference(const Graph& graph, const std::vector<HostTensor>& inputs,
                  const GraphFlags& flags) {
  auto outputs = interpret(graph, inputs);
  if (!outputs) return report(outputs.error());
  for (size_t i = 0; i < outputs->size(); ++i)
    print_output(graph.value(graph.outputs[i]).name, (*outputs)[i]);
  if (!flags.save_outputs.empty()) {
    if (auto s = save_outputs(graph, *outputs, flags.save_outputs); !s) return report(s.error());
  }
  return kExitOk;
}

int run(const GraphFlags& flags, const CommonFlags& common) {
  auto registry = OpRegistry::create();
  if (!registry) return report(registry.error());
  auto graph = open_graph(flags, *registry, true);
  if (!graph) return report(graph.error());
  auto inputs = gather_inputs(*graph, flags);
  if (!inputs) return report(inputs.error());
  if (flags.backend == "reference") {
    if (flags.check || flags.bench > 0 || flags.bench_calls > 0 || flags.explain ||
        flags.profile > 0)
      return report(
          Error::user("--check, --bench, --profile and --explain are about a compiled run; drop "
                      "--backend reference"));
    return run_reference(*graph, *inputs, flags);
  }
  auto session = open_session(common.config);
  if (!session) return report(session.error());
  Options options = session->options;
  if (flags.backend != "config") options.selection = {SelectionMode::Plugin, flags.backend};
  const auto compile_start = std::chrono::steady_clock::now();
  // The runtime API's path: a Session loads the plugins, then compiles.
  auto runtime = kiln::Session::open(options);
  if (!runtime) return report(runtime.error());
  auto compiled = (*runtime)->compile(*graph);
  if (!compiled) return report(compiled.error());
  const double compile_wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - compile_start)
          .count();
  const CompileStats& st = compiled->stats();
  fmt::print("compiled: {} kernels, {} library calls, {} host steps, {} producers inlined{}\n",
             st.kernels, st.externs, st.host_steps, st.inlined,
             st.graph_cache_hit && st.units_cached == st.units ? " (compiled graph cache hit)"
             : st.cache_hit                                    ? " (kernel cache hit)"
                            : fmt::format(" (compiled in {:.0f} ms)", st.compile_ms));
  fmt::print(
      "compile: {:.1f} ms in all on {}: plugins loaded in {:.1f} ms, then {:.1f} ms "
      "({}, {} of {} units from the cache{})\n",
      compile_wall_ms, st.target, st.plugin_load_ms, compile_wall_ms - st.plugin_load_ms,
      st.graph_cache_hit ? "graph from the cache" : "scheduled", st.units_cached, st.units,
      st.tune_ms > 0 ? fmt::format(", tuning {:.0f} ms", st.tune_ms) : "");
  if (flags.explain) print_explain(*graph, *compiled);
  // With --check, poisoned outputs expose any element a kernel forgets to write.
  RunOptions run_options;
  run_options.poison = flags.check;
  auto outputs = compiled->run(*inputs, run_options);
  if (!outputs) return report(outputs.error());
  for (size_t i = 0; i < outputs->size(); ++i)
    print_output(graph->value(graph->outputs[i]).name, (*outputs)[i]);
  if (!flags.save_outputs.empty()) {
    if (auto s = save_outputs(*graph, *outputs, flags.save_outputs); !s) return report(s.error());
  }
  int code = kExitOk;
  if (flags.check) {
    auto expected = run_oracle(*graph, *inputs);
    if (!expected) return report(expected.error());
    if (!check_outputs(*graph, *outputs, *expected)) {
      fmt::print(stderr,
                 "kiln: error: the compiled graph does not match the reference interpreter\n");
      code = kExitUserError;
    }
  }
  if (flags.bench > 0) {
    auto times = compiled->time_runs(*inputs, flags.bench);
    if (!times) return report(times.error());
    std::sort(times->begin(), times->end());
    fmt::print("bench: median {:.4f} ms over {} runs (min {:.4f}, max {:.4f})\n",
               (*times)[times->size() / 2], times->size(), times->front(), times->back());
  }
  if (flags.bench_calls > 0) {
    // Whole calls as a caller makes them: inputs copied in, the plan run, outputs copied out.
    std::vector<double> ms;
    for (int call = 0; call <= flags.bench_calls; ++call) {  // call 0 warms up
      const auto start = std::chrono::steady_clock::now();
      auto outs = compiled->run(*inputs);
      if (!outs) return report(outs.error());
      const double t =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (call > 0) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    fmt::print(
        "bench-calls: median {:.4f} ms per call with its copies over {} calls (min {:.4f}, "
        "max {:.4f})\n",
        ms[ms.size() / 2], ms.size(), ms.front(), ms.back());
  }
  if (flags.profile > 0) {
    auto kernel_us = compiled->time_kernels(*inputs, flags.profile);
    if (!kernel_us) return report(kernel_us.error());
    const std::string csv = compiled->kernel_metadata(*kernel_us);
    fmt::print("profile: median of {} runs per kernel\n{}", flags.profile, csv);
    if (!options.debug_dir.empty()) {
      const DebugDump dump(options.debug_dir, graph->name);
      dump.write("kernels.csv", csv);
      fmt::print("profile: written to {}\n", dump.path("kernels.csv"));
    }
  }
  return code;
}

// `kiln compile --emit`: the graph through decomposition and lowering, printed at one stage.
int emit(const GraphFlags& flags, const CommonFlags& common) {
  auto session = open_session(common.config);
  if (!session) return report(session.error());
  auto registry = OpRegistry::create();
  if (!registry) return report(registry.error());
  auto graph = open_graph(flags, *registry, false);
  if (!graph) return report(graph.error());
  auto scheduled = schedule_graph(*graph, *registry, session->options.schedule);
  if (!scheduled) return report(scheduled.error());
  if (flags.emit == "graph") {
    fmt::print("{}", dump_graph(scheduled->graph));
  } else if (flags.emit == "loopir-unfused") {
    fmt::print("{}", print_loop_program(scheduled->unfused));
  } else if (flags.emit == "loopir") {
    fmt::print("{}", print_loop_program(scheduled->program));
  } else {
    fmt::print("{}", kir::print(emit_kir_kernels(scheduled->program)));
  }
  return kExitOk;
}

}  // namespace

void add_graph_commands(CLI::App& app, const CommonFlags& common, int& exit_code) {
  auto flags = std::make_shared<GraphFlags>();
  CLI::App* check_cmd =
      app.add_subcommand("check", "Validate a kiln.graph/1 file and print the graph");
  check_cmd->add_option("graph", flags->graph, "graph JSON file")->required();
  check_cmd->add_option("--weights", flags->weights, "safetensors file with the parameters");
  check_cmd->add_flag("--decomposed", flags->decomposed,
                      "print the graph after decomposition into primitive ops");
  check_cmd->callback([flags, &exit_code] { exit_code = check(*flags); });

  CLI::App* run_cmd = app.add_subcommand("run", "Run a graph");
  run_cmd->add_option("graph", flags->graph, "graph JSON file")->required();
  run_cmd->add_option("--weights", flags->weights, "safetensors file with the parameters");
  run_cmd->add_option("--inputs", flags->inputs,
                      "safetensors file with the inputs, by name (default: random)");
  run_cmd->add_option("--save-outputs", flags->save_outputs,
                      "write the outputs to this safetensors file");
  run_cmd->add_option("--backend", flags->backend,
                      "where to run: config (the configured plugins and devices, the default), "
                      "a plugin name, or reference (the interpreter)");
  run_cmd->add_flag("--check", flags->check,
                    "compare every output with the reference interpreter; exit 1 on mismatch");
  run_cmd->add_flag("--explain", flags->explain,
                    "print what the scheduler did: kernels, inlining, bytes moved vs unfused");
  run_cmd
      ->add_option("--profile", flags->profile,
                   "time each kernel over N runs; print loads, stores, bytes, the roofline "
                   "estimate and the measured time and GB/s per kernel (CSV)")
      ->check(CLI::Range(1, 100000));
  run_cmd->add_option("--bench", flags->bench, "time N runs and print the median")
      ->check(CLI::Range(1, 1000000));
  run_cmd
      ->add_option("--bench-calls", flags->bench_calls,
                   "time N whole calls (inputs copied to the device, outputs back) and print the "
                   "median")
      ->check(CLI::Range(1, 1000000));
  run_cmd->add_option("--seed", flags->seed, "seed of the random inputs");
  run_cmd->callback([flags, &common, &exit_code] { exit_code = run(*flags, common); });

  CLI::App* compile_cmd =
      app.add_subcommand("compile", "Print a graph after decomposition, lowering or KIR emission");
  compile_cmd->add_option("graph", flags->graph, "graph JSON file")->required();
  compile_cmd
      ->add_option("--emit", flags->emit,
                   "the stage to print: graph (decomposed), loopir-unfused (one kernel per node), "
                   "loopir (after fusion), or kir (the default)")
      ->check(CLI::IsMember({"graph", "loopir-unfused", "loopir", "kir"}));
  compile_cmd->callback([flags, &common, &exit_code] { exit_code = emit(*flags, common); });
}

}  // namespace kiln::cli
