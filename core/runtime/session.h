// A Session: the options, the loaded plugins, the op registry, the disk cache and the logging,
// made once and kept for the session's life, so compiling a graph does not load plugins again
// (a cpp_openmp load probes the compiler and the memory bandwidth; a ptx load starts CUDA).
// The C runtime API (sdk/include/kiln/runtime.h) and the CLI both compile through it.
//
// Threads: compile() may be called from several threads (compiles take turns); a compiled
// graph may be run from several threads (its runs take turns on its arena), and calls into a
// plugin that does not declare KILN_THREAD_SAFE_LAUNCH take turns across all its graphs.
#pragma once

#include <memory>
#include <mutex>

#include "core/cache/disk_cache.h"
#include "core/config/options.h"
#include "core/runtime/compiled_graph.h"
#include "core/runtime/plugin_loader.h"
#include "core/support/logging.h"

namespace kiln {

class OpRegistry;

class Session {
 public:
  // Loads the plugins `options` names; a plugin that fails to load is logged and left out
  // (compile() names it when nothing else serves).
  static Result<std::unique_ptr<Session>> open(Options options);

  Result<CompiledGraph> compile(const Graph& graph) const;

  const Options& options() const { return options_; }
  const Logging& logging() const { return *logging_; }
  std::shared_ptr<const OpRegistry> registry() const { return registry_; }
  const LoadedPlugins& plugins() const { return plugins_; }
  double plugin_load_ms() const { return plugin_load_ms_; }

 private:
  Session() = default;

  Options options_;
  std::unique_ptr<Logging> logging_;
  std::shared_ptr<const OpRegistry> registry_;
  LoadedPlugins plugins_;
  std::unique_ptr<DiskCache> cache_;
  double plugin_load_ms_ = 0;
  mutable std::mutex compile_mutex_;
};

}  // namespace kiln
