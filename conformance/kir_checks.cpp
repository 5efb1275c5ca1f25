// KIR through the plugin under test, by way of kiln's own compiler: each graph of the kit
// (one per KIR construct: pointwise ops and casts, integers, masks, indirect loads, every kind
// of reduction, multi-level rows, scans, scatters, random draws, matmul externs) compiled for the
// plugin, fused and one kernel per node, run on random inputs with every output poisoned first,
// and compared with the reference interpreter. Then the error paths and, where the plugin
// claims them, concurrent compiles and launches. These run in the kit's own process, last.
#include <algorithm>
#include <filesystem>
#include <thread>

#include "conformance/context.h"
#include "conformance/isolated.h"
#include "conformance/raw_kir_checks.h"
#include "core/cache/disk_cache.h"
#include "core/graph/graph_json.h"
#include "core/interp/oracle.h"
#include "core/interp/random_tensor.h"
#include "core/ops/op_registry.h"
#include "core/runtime/compile.h"
#include "core/runtime/plugin_loader.h"
#include "core/support/logging.h"

namespace kiln::conformance {
namespace {

std::string plugin_name(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  return stem.rfind("kiln_", 0) == 0 ? stem.substr(5) : stem;
}

// One graph compiled with `fusion` and run on `inputs`; "" when every output matches.
std::string compare_run(const Graph& graph, const std::shared_ptr<const OpRegistry>& registry,
                        const std::shared_ptr<const Plugin>& plugin, uint32_t device,
                        const Logging& logging, const std::vector<HostTensor>& inputs,
                        const OracleResults& oracle, const RandomState& random, bool fusion) {
  const DiskCache no_cache("", 0, logging.get("cache"));
  ScheduleOptions schedule;
  schedule.fusion = fusion;
  auto compiled =
      compile_for_device(graph, registry, plugin, device, no_cache, logging, "", schedule);
  if (!compiled) return "compile: " + compiled.error().to_string();
  RunOptions options;
  options.poison = true;
  options.random = random;
  auto got = compiled->run(inputs, options);
  if (!got) return "run: " + got.error().to_string();
  if (got->size() != oracle.expected.size())
    return std::to_string(got->size()) + " outputs, the graph has " +
           std::to_string(oracle.expected.size());
  for (size_t i = 0; i < got->size(); ++i) {
    const Comparison c = oracle.compare(i, (*got)[i]);
    if (!c.ok())
      return graph.value(graph.outputs[i]).name + ": " + std::to_string(c.mismatches) +
             " mismatches, first at element " + std::to_string(c.first_mismatch) + ": got " +
             std::to_string((*got)[i].get(c.first_mismatch)) + ", expected " +
             std::to_string(oracle.expected[i].get(c.first_mismatch));
  }
  return "";
}

Finding graph_check(const std::string& file, const std::shared_ptr<const OpRegistry>& registry,
                    const std::shared_ptr<const Plugin>& plugin, uint32_t device,
                    const Logging& logging) {
  auto graph = load_graph(file, registry);
  if (!graph) return fail("the kit's graph does not load: " + graph.error().to_string());
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < graph->inputs.size(); ++i) {
    const Value& v = graph->value(graph->inputs[i]);
    inputs.push_back(random_tensor(v.type, 1234 + i, v.random_range));
  }
  const RandomState random{20261126, 77};
  auto oracle = run_oracle(*graph, inputs, random);
  if (!oracle) return fail("reference: " + oracle.error().to_string());
  for (const bool fusion : {true, false})
    if (std::string e =
            compare_run(*graph, registry, plugin, device, logging, inputs, *oracle, random, fusion);
        !e.empty())
      return fail(std::string(fusion ? "fused: " : "one kernel per node: ") + e);
  return pass(std::to_string(graph->outputs.size()) + " outputs match, fused and unfused");
}

// An index outside its tensor: the kernel's error word must fail the run, naming it.
Finding error_word(const std::shared_ptr<const OpRegistry>& registry,
                   const std::shared_ptr<const Plugin>& plugin, uint32_t device,
                   const Logging& logging) {
  auto graph = parse_graph(
      R"({ "format": "kiln.graph/1", "name": "bad_index",
           "inputs": [ {"name": "x", "dtype": "f32", "shape": [5, 3]},
                       {"name": "i", "dtype": "i64", "shape": [4], "range": [100, 200]} ],
           "nodes": [ {"name": "y", "op": "aten.index_select.default", "args": ["%x", 0, "%i"]} ],
           "outputs": ["%y"] })",
      "bad_index", registry);
  if (!graph) return fail(graph.error().to_string());
  const DiskCache no_cache("", 0, logging.get("cache"));
  auto compiled = compile_for_device(*graph, registry, plugin, device, no_cache, logging);
  if (!compiled) return fail("compile: " + compiled.error().to_string());
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < graph->inputs.size(); ++i) {
    const Value& v = graph->value(graph->inputs[i]);
    inputs.push_back(random_tensor(v.type, 5 + i, v.random_range));
  }
  auto got = compiled->run(inputs);
  if (got) return fail("indices 100..199 into 5 rows ran without an error");
  const std::string text = got.error().to_string();
  if (text.find("out of range") == std::string::npos)
    return fail("the run failed without saying an index was out of range: " + text);
  return pass(text);
}

}  // namespace

void check_kir(const Context& c, Report& report) {
  // Bad KIR and concurrency go through the raw ABI, each in its own process.
  report.add("errors", "bad KIR is refused, not crashed on",
             run_isolated([&] { return bad_kir(c); }, c.timeout_seconds));
  report.add("threads", "concurrent compiles (KILN_THREAD_SAFE_COMPILE)",
             run_isolated([&] { return concurrent_compiles(c); }, c.timeout_seconds));
  report.add("threads", "concurrent launches (KILN_THREAD_SAFE_LAUNCH)",
             run_isolated([&] { return concurrent_launches(c); }, c.timeout_seconds));

  const std::vector<std::string> graphs = kit_graphs(c.graphs_dir);
  const Logging logging(LogLevels{LogLevel::Warn, {}});
  auto registry = OpRegistry::create();
  std::vector<PluginOption> options;
  for (const auto& [key, value] : c.options) options.push_back({key, {value}, false});
  auto plugin =
      registry ? load_plugin(PluginConfig{plugin_name(c.path), c.path, options}, c.path, logging)
               : Result<std::shared_ptr<const Plugin>>(registry.error());
  const auto unusable = [&]() -> std::optional<Finding> {
    if (!registry) return fail(registry.error().to_string());
    if (!plugin) return fail("kiln cannot load the plugin: " + plugin.error().to_string());
    if (c.device >= (*plugin)->devices().size())
      return skip((*plugin)->devices().empty() ? "the plugin reports no devices"
                                               : "no device " + std::to_string(c.device));
    return std::nullopt;
  }();
  for (const std::string& file : graphs) {
    const std::string name = std::filesystem::path(file).stem().string();
    report.add("kir", name,
               unusable ? *unusable : graph_check(file, *registry, *plugin, c.device, logging));
  }
  if (graphs.empty()) report.add("kir", "graphs", fail("no graphs in " + c.graphs_dir));
  report.add("errors", "a kernel's error word fails the run, naming it",
             unusable ? *unusable : error_word(*registry, *plugin, c.device, logging));
}

}  // namespace kiln::conformance
