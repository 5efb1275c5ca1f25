#include "bench/suite/bench_graphs.h"

#include <algorithm>

#include "bench/suite/python_module.h"
#include "core/graph/graph_json.h"
#include "core/graph/safetensors.h"
#include "core/passes/complex_lowering.h"

namespace kiln::bench {
namespace {

Result<Workload> load_file(const SuiteGraph& entry,
                           const std::shared_ptr<const OpRegistry>& registry) {
  auto graph = load_graph(entry.file, registry);
  if (!graph) return std::move(graph).error();
  if (!entry.weights.empty()) {
    auto weights = read_safetensors(entry.weights);
    if (!weights) return std::move(weights).error();
    if (auto s = attach_weights(*graph, *weights, entry.weights); !s) return std::move(s).error();
  } else if (!graph->params.empty()) {
    return Error::user(entry.file + ": the graph has " + std::to_string(graph->params.size()) +
                       " parameters; give the suite entry 'weights'");
  }
  auto lowered = lower_complex(*graph);
  if (!lowered) return std::move(lowered).error();
  Workload w;
  w.graph = std::move(*lowered);
  w.name = entry.name.empty() ? w.graph.name : entry.name;
  for (ValueRef r : w.graph.inputs) w.ranges.push_back(w.graph.value(r).random_range);
  describe_workload(w);
  return w;
}

// A model file exported through PyTorch, then loaded as a graph file with its weights.
Result<Workload> export_model(const SuiteGraph& entry,
                              const std::shared_ptr<const OpRegistry>& registry,
                              const std::filesystem::path& exports) {
  std::error_code ec;
  std::filesystem::create_directories(exports, ec);
  if (ec) return Error::user("cannot make " + exports.string() + ": " + ec.message());
  const std::string stem = std::filesystem::path(entry.model).stem().string() + "-" + entry.size;
  const std::filesystem::path out = exports / stem;
  const std::filesystem::path log = exports / (stem + ".log");
  auto status = run_python_module("kiln.export_model",
                                  {entry.model, "--size", entry.size, "--out", out.string()}, log);
  if (!status) return std::move(status).error().with_context("model " + entry.model);
  if (*status != 0)
    return Error::user("model " + entry.model + ": python3 -m kiln.export_model failed" +
                       (*status == 3 ? " (model entries need PyTorch: "
                                       "scripts/install-python-deps.sh)"
                                     : "") +
                       ": " + log_tail(log, 3));
  SuiteGraph file = entry;
  file.file = out.string() + ".json";
  file.weights = out.string() + ".safetensors";
  return load_file(file, registry);
}

}  // namespace

Result<std::vector<Workload>> load_suite_graphs(const Suite& suite,
                                                const std::shared_ptr<const OpRegistry>& registry,
                                                const std::filesystem::path& exports) {
  std::vector<Workload> all;
  for (const SuiteGraph& entry : suite.graphs) {
    if (!entry.file.empty() || !entry.model.empty()) {
      auto w =
          entry.file.empty() ? export_model(entry, registry, exports) : load_file(entry, registry);
      if (!w) return std::move(w).error().with_context("suite " + suite.path);
      all.push_back(std::move(*w));
      continue;
    }
    const SizeClass size = entry.size == "gpu"     ? SizeClass::Gpu
                           : entry.size == "small" ? SizeClass::Small
                                                   : SizeClass::Cpu;
    auto anchors = anchor_workloads(size, registry);
    if (!anchors) return std::move(anchors).error();
    for (const std::string& name : entry.only) {
      if (std::none_of(anchors->begin(), anchors->end(),
                       [&](const Workload& w) { return w.name == name; }))
        return Error::user(suite.path + ": 'only' names '" + name +
                           "', which is not an anchor workload");
    }
    for (Workload& w : *anchors) {
      if (!entry.only.empty() &&
          std::find(entry.only.begin(), entry.only.end(), w.name) == entry.only.end())
        continue;
      all.push_back(std::move(w));
    }
  }
  return all;
}

}  // namespace kiln::bench
