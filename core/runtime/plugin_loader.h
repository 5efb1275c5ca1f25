// Finding, opening and checking plugins. A plugin that fails to load (missing file,
// missing entry point, ABI mismatch, failing init) is reported with its name and path,
// and loading goes on with the others.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config/options.h"
#include "core/runtime/plugin.h"
#include "core/support/result.h"

namespace kiln {

class Logging;

struct PluginLoadFailure {
  std::string name;
  std::string path;  // empty when no file was found
  Error error;
};

struct LoadedPlugins {
  std::vector<std::shared_ptr<const Plugin>> plugins;
  std::vector<PluginLoadFailure> failures;
};

// The directory kiln looks in after the configured ones: ../lib/kiln next to the binary the
// core is linked into (bin/kiln, lib/libkiln.so; the same in the build tree and an install).
std::string default_plugin_dir();

// Where plugin `config` lives: its explicit path, else the first kiln_<name>.so found in
// `search_dirs`. The error lists every place looked at.
Result<std::string> find_plugin_file(const PluginConfig& config,
                                     const std::vector<std::string>& search_dirs);

// Opens the file (RTLD_LOCAL | RTLD_NOW), negotiates the ABI against `host`, checks the
// required functions, creates the instance with the config's options and reads its
// attributes and devices.
Result<std::shared_ptr<const Plugin>> load_plugin(const PluginConfig& config,
                                                  const std::string& path, const Logging& logging,
                                                  AbiVersion host = kHostAbi);

// Every plugin of `options`, searched in options.plugin_path then default_plugin_dir().
LoadedPlugins load_plugins(const Options& options, const Logging& logging);

}  // namespace kiln
