#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>

#include "cli/cli_session.h"
#include "cli/commands.h"
#include "core/graph/graph_dump.h"
#include "core/graph/graph_json.h"
#include "core/graph/safetensors.h"
#include "core/interp/interpreter.h"
#include "core/interp/random_tensor.h"
#include "core/ops/op_registry.h"
#include "core/passes/decompose.h"

namespace kiln::cli {
namespace {

struct GraphFlags {
  std::string graph;
  std::string weights;
  std::string inputs;
  std::string save_outputs;
  std::string backend = "reference";
  uint64_t seed = 0;
  bool decomposed = false;
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
  return graph;
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
    inputs.push_back(random_tensor(v.type, flags.seed + i, v.random_range));
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

int run(const GraphFlags& flags) {
  if (flags.backend != "reference") {
    return report(Error::user("backend '" + flags.backend +
                              "' is not available yet: only 'reference' runs graphs today"));
  }
  auto registry = OpRegistry::create();
  if (!registry) return report(registry.error());
  auto graph = open_graph(flags, *registry, true);
  if (!graph) return report(graph.error());
  auto inputs = gather_inputs(*graph, flags);
  if (!inputs) return report(inputs.error());
  auto outputs = interpret(*graph, *inputs);
  if (!outputs) return report(outputs.error());
  std::vector<std::pair<std::string, HostTensor>> named;
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string& name = graph->value(graph->outputs[i]).name;
    print_output(name, (*outputs)[i]);
    named.emplace_back(name, (*outputs)[i]);
  }
  if (!flags.save_outputs.empty()) {
    if (auto s = write_safetensors(flags.save_outputs, named); !s) return report(s.error());
    fmt::print("saved {} outputs to {}\n", named.size(), flags.save_outputs);
  }
  return kExitOk;
}

}  // namespace

void add_graph_commands(CLI::App& app, int& exit_code) {
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
  run_cmd->add_option("--backend", flags->backend, "where to run: reference (the interpreter)");
  run_cmd->add_option("--seed", flags->seed, "seed of the random inputs");
  run_cmd->callback([flags, &exit_code] { exit_code = run(*flags); });
}

}  // namespace kiln::cli
