// With a debug directory (`debug_dir` in the config, or KILN_DEBUG_DIR), each stage of a
// compile leaves its text there, one file per stage, named `<graph>.<stage>.<ext>`:
//   graph.txt, decomposed.txt     the graph as given and after decomposition
//   unfused.loopir, loopir        LoopIR with one kernel per node, and as scheduled
//   kir                           the kernels handed to the plugin
//   code.txt, compile.json        the plugin's generated code (when it reports it) and metadata,
//                                 written when the plugin compiles (not on a kernel cache hit)
//   memory_plan.txt               each temporary's bytes, lifetime and arena offset
//   fusion_failures.csv           every producer kept and every pair left apart, and why
//   kernels.csv                   per kernel: loads, stores, bytes, flops, roofline estimate
//                                 (and, after `kiln run --profile`, measured time and GB/s)
#pragma once

#include <string>

namespace kiln {

class DebugDump {
 public:
  DebugDump(std::string dir, const std::string& graph_name)
      : dir_(std::move(dir)), graph_(file_stem(graph_name)) {}
  bool enabled() const { return !dir_.empty(); }
  // Writes `<dir>/<graph>.<stage>`; a failure to write is logged by the caller's return value,
  // never fatal: a debug dump must not break a compile.
  bool write(const std::string& stage, const std::string& text) const;
  // Where write(stage) puts its file: always inside the dump directory.
  std::string path(const std::string& stage) const;

  // A graph name made safe as a file name: anything but letters, digits, '-' and '_' (path
  // separators, dots, control characters) becomes '_', so "../../x" stays in the directory.
  static std::string file_stem(const std::string& graph_name);

 private:
  std::string dir_;
  std::string graph_;
};

// The "source" text a plugin's compile metadata (JSON) carries, or "" when it has none.
std::string generated_code(const std::string& compile_metadata);

}  // namespace kiln
