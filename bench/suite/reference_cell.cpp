#include "bench/suite/reference_cell.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/suite/python_module.h"
#include "core/graph/graph_json_writer.h"
#include "core/graph/safetensors.h"
#include "core/ops/op_def.h"

namespace kiln::bench {
namespace {

namespace fs = std::filesystem;

constexpr int kSkipped = 3;  // kiln.bench_reference: PyTorch or the device is not here

// The graph, its weights and the cell's inputs as files the Python side reads.
Status write_cell_files(const Workload& w, const std::vector<HostTensor>& inputs,
                        const fs::path& dir) {
  std::ofstream graph(dir / "graph.json", std::ios::binary);
  graph << write_graph_json(w.graph);
  graph.close();
  if (!graph) return Error::user("cannot write " + (dir / "graph.json").string());
  std::vector<std::pair<std::string, HostTensor>> named;
  for (size_t i = 0; i < inputs.size(); ++i)
    named.emplace_back(w.graph.value(w.graph.inputs[i]).name, inputs[i]);
  if (auto s = write_safetensors((dir / "inputs.safetensors").string(), named); !s) return s;
  if (w.graph.params.empty()) return Ok{};
  std::vector<std::pair<std::string, HostTensor>> weights;
  for (ValueRef p : w.graph.params) {
    const std::string& name = w.graph.value(p).name;
    auto found = w.graph.param_data.find(name);
    if (found == w.graph.param_data.end())
      return Error::user("parameter '" + name + "' has no weights");
    weights.emplace_back(name, found->second);
  }
  return write_safetensors((dir / "weights.safetensors").string(), weights);
}

// PyTorch draws other random numbers than kiln's generator: such outputs cannot agree.
// (aten.dropout in a graph is inference's, which draws none.)
bool draws_random_numbers(const Graph& g) {
  return std::any_of(g.nodes.begin(), g.nodes.end(),
                     [](const Node& n) { return n.op->category == "random"; });
}

std::vector<std::string> module_args(const Workload& w, const SuiteTarget& t, const Suite& suite,
                                     const fs::path& dir) {
  std::vector<std::string> args = {"--graph",
                                   (dir / "graph.json").string(),
                                   "--inputs",
                                   (dir / "inputs.safetensors").string(),
                                   "--mode",
                                   t.torch,
                                   "--device",
                                   t.device,
                                   "--runs",
                                   std::to_string(suite.protocol.runs),
                                   "--runs-per-sample",
                                   std::to_string(suite.protocol.runs_per_sample),
                                   "--compile-cache",
                                   (dir / "compile-cache").string(),
                                   "--result",
                                   (dir / "result.json").string()};
  if (!w.graph.params.empty())
    args.insert(args.end(), {"--weights", (dir / "weights.safetensors").string()});
  if (suite.check && !draws_random_numbers(w.graph))
    args.insert(args.end(), {"--outputs", (dir / "outputs.safetensors").string()});
  if (t.threads > 0) args.insert(args.end(), {"--threads", std::to_string(t.threads)});
  return args;
}

// The measured cell's result file into `row`.
void read_measurement(const nlohmann::json& result, ResultRow& row) {
  std::vector<double> samples;
  for (const auto& s : result.at("samples_ms")) samples.push_back(s.get<double>());
  summarize_samples(std::move(samples), row);
  row.compile_cold_ms = result.value("compile_cold_ms", 0.0);
  row.compile_warm_ms = result.value("compile_warm_ms", 0.0);
  row.device = result.value("device", "torch");
  if (row.median_ms > 0) row.gbps = static_cast<double>(row.bytes) / (row.median_ms * 1e6);
}

void run_in(const Workload& w, GraphReference& reference, const SuiteTarget& t, const Suite& suite,
            const fs::path& dir, ResultRow& row) {
  if (auto s = write_cell_files(w, reference.inputs(), dir); !s) {
    row.error = s.error().message();
    return;
  }
  auto status =
      run_python_module("kiln.bench_reference", module_args(w, t, suite, dir), dir / "log");
  if (!status) {
    row.skipped = status.error().message();
    return;
  }
  if (!fs::exists(dir / "result.json")) {
    if (log_tail(dir / "log", 5).find("No module named kiln") != std::string::npos)
      row.skipped = "the kiln Python package is not installed (scripts/install-python-deps.sh)";
    else
      row.error = fmt::format("python3 -m kiln.bench_reference exited with {}: {}", *status,
                              log_tail(dir / "log", 3));
    return;
  }
  nlohmann::json result;
  try {
    result = nlohmann::json::parse(read_file_text(dir / "result.json"));
    if (*status == kSkipped) {
      row.skipped = result.value("skipped", "PyTorch is not here");
      return;
    }
    if (*status != 0) {
      row.error = result.value("error", fmt::format("exited with {}", *status));
      return;
    }
    read_measurement(result, row);
  } catch (const nlohmann::json::exception& e) {
    row.error = std::string("kiln.bench_reference wrote a bad result: ") + e.what();
    return;
  }
  if (!suite.check) return;
  if (draws_random_numbers(w.graph)) {
    row.check = "skipped: the graph draws random numbers, and PyTorch draws other ones";
    return;
  }
  auto written = read_safetensors((dir / "outputs.safetensors").string());
  if (!written) {
    row.check = "outputs unreadable: " + written.error().message();
    return;
  }
  std::vector<HostTensor> outputs;
  for (size_t o = 0; o < written->size(); ++o) {
    auto found = written->find(fmt::format("out{}", o));
    if (found == written->end()) break;
    outputs.push_back(found->second);
  }
  row.check = reference.check(outputs, row.max_abs_error);
}

}  // namespace

ResultRow run_reference_cell(int64_t cell, const Workload& w, GraphReference& reference,
                             const SuiteTarget& target, const Suite& suite,
                             const fs::path& scratch) {
  ResultRow row;
  row.cell = cell;
  row.graph = w.name;
  row.shape = w.shape;
  row.target = target.name;
  row.reference = target.torch;
  row.bytes = w.minimal_bytes;
  row.check = suite.check ? "" : "skipped";
  const fs::path dir = scratch / fmt::format("cell-{}", cell);
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) {
    row.error = "cannot make " + dir.string() + ": " + ec.message();
    return row;
  }
  run_in(w, reference, target, suite, dir, row);
  if (!row.skipped.empty()) row.check = "skipped";
  fs::remove_all(dir, ec);
  return row;
}

}  // namespace kiln::bench
