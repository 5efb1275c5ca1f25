// A benchmark suite (`kiln bench SUITE.yaml`): the graphs to time, the targets to time them on
// (each a kiln config: plugins, devices, options), the timing protocol, and whether each
// output is checked against the reference. docs/bench.md describes the file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/support/result.h"

namespace kiln::bench {

struct SuiteGraph {
  // Exactly one of: a kiln.graph/1 file (with optional weights), the built-in anchor
  // workloads at a size class (optionally only some of them), or a model file (Python
  // defining `model(size)`, exported through PyTorch when the suite loads).
  std::string file;
  std::string model;
  std::string weights;
  std::string name;  // the row's label; default: the graph's own name
  std::string builtin;
  std::string size = "cpu";
  std::vector<std::string> only;
};

struct SuiteTarget {
  std::string name;         // the row's label
  std::string config_file;  // a kiln config file, or
  std::string config_text;  // an inline one ("" and no file: the built-in default)
  // Or a reference row: PyTorch runs the graph, "eager", "compile" (torch.compile's default,
  // Inductor) or "max-autotune", on `device` ("cpu", "cuda", "cuda:N") with `threads` CPU
  // threads (0: PyTorch's default).
  std::string torch;
  std::string device = "cpu";
  int threads = 0;
};

struct Protocol {
  int runs = 20;            // timed samples per cell, after one warm-up run
  int runs_per_sample = 1;  // runs back to back per sample (device time divided by it)
};

struct Suite {
  std::string name;
  std::string path;  // the file it came from
  std::vector<SuiteGraph> graphs;
  std::vector<SuiteTarget> targets;
  Protocol protocol;
  bool check = true;  // each cell's outputs against the reference, once
};

// Reads a suite file; relative paths in it resolve against its directory. Errors name
// file:line:column and the key.
Result<Suite> load_suite(const std::string& path);

}  // namespace kiln::bench
