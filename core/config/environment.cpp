#include "core/config/environment.h"

#include <cstdlib>

namespace kiln {
namespace {

std::optional<std::string> read(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read once at startup
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

}  // namespace

Environment Environment::from_process() {
  Environment env;
  env.config = read("KILN_CONFIG");
  env.cache_dir = read("KILN_CACHE_DIR");
  env.log = read("KILN_LOG");
  env.debug_dir = read("KILN_DEBUG_DIR");
  env.plugin_path = read("KILN_PLUGIN_PATH");
  env.home = read("HOME");
  env.xdg_cache_home = read("XDG_CACHE_HOME");
  return env;
}

}  // namespace kiln
