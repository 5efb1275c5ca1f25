// The process environment variables kiln reads, captured in one value so that loading
// options is a pure function of (file, environment) and tests can pass their own.
#pragma once

#include <optional>
#include <string>

namespace kiln {

struct Environment {
  std::optional<std::string> config;       // KILN_CONFIG: config file when none is given
  std::optional<std::string> cache_dir;    // KILN_CACHE_DIR: overrides cache.dir
  std::optional<std::string> log;          // KILN_LOG: "info,sched=debug"; overrides log
  std::optional<std::string> debug_dir;    // KILN_DEBUG_DIR: overrides debug_dir
  std::optional<std::string> plugin_path;  // KILN_PLUGIN_PATH: dirs searched first, ':'-separated
  std::optional<std::string> home;         // HOME: for "~" and the default cache dir
  std::optional<std::string> xdg_cache_home;  // XDG_CACHE_HOME: default cache dir

  // Reads the variables above from this process. The only getenv() in kiln.
  static Environment from_process();
};

}  // namespace kiln
