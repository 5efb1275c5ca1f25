#include "core/config/config_loader.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/config/builtin_default_config.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// Thrown inside this file only; load_options/parse_options turn it into an Error.
struct ConfigError {
  std::string message;
};

// Reads typed values out of YAML nodes, naming `source:line:col` and the key on failure.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& what) const {
    std::string where = source_;
    if (mark.line >= 0) {
      where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
    }
    throw ConfigError{where + ": " + what};
  }

  // Checks that `node` is a map whose keys are all in `known` and appear once.
  void expect_map(const YAML::Node& node, const std::string& key,
                  const std::set<std::string>& known) const {
    if (!node.IsMap()) fail(node.Mark(), "'" + key + "' must be a map");
    std::set<std::string> seen;
    for (const auto& entry : node) {
      const YAML::Node& k = entry.first;
      if (!k.IsScalar()) fail(k.Mark(), "a key of '" + key + "' must be a plain name");
      const std::string name = k.Scalar();
      if (known.count(name) == 0) {
        std::string list;
        for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
        fail(k.Mark(), "unknown key '" + path(key, name) + "' (expected one of: " + list + ")");
      }
      if (!seen.insert(name).second) fail(k.Mark(), "duplicate key '" + path(key, name) + "'");
    }
  }

  std::string string(const YAML::Node& node, const std::string& key) const {
    if (node.IsNull()) {
      fail(node.Mark(), "'" + key +
                            "' is empty (YAML reads a bare null or ~ as nothing; "
                            "quote it, \"null\", to mean the text)");
    }
    if (!node.IsScalar()) fail(node.Mark(), "'" + key + "' must be a string");
    return node.Scalar();
  }

  int64_t integer(const YAML::Node& node, const std::string& key, int64_t min) const {
    int64_t value = 0;
    if (!node.IsScalar() || !YAML::convert<int64_t>::decode(node, value)) {
      fail(node.Mark(), "'" + key + "' must be an integer");
    }
    if (value < min) {
      fail(node.Mark(), "'" + key + "' must be at least " + std::to_string(min));
    }
    return value;
  }

  bool boolean(const YAML::Node& node, const std::string& key) const {
    bool value = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
      fail(node.Mark(), "'" + key + "' must be true or false");
    }
    return value;
  }

  std::vector<std::string> string_list(const YAML::Node& node, const std::string& key) const {
    if (!node.IsSequence()) fail(node.Mark(), "'" + key + "' must be a list");
    std::vector<std::string> items;
    for (size_t i = 0; i < node.size(); ++i) {
      items.push_back(string(node[i], key + "[" + std::to_string(i) + "]"));
    }
    return items;
  }

  static std::string path(const std::string& parent, const std::string& key) {
    return parent.empty() ? key : parent + "." + key;
  }

 private:
  std::string source_;
};

std::string expand_home(const std::string& path, const Environment& env) {
  if (path == "~" || path.rfind("~/", 0) == 0) {
    return env.home.value_or("") + path.substr(1);
  }
  return path;
}

// Relative paths in a config file are relative to the file, not to the working directory.
std::string resolve_path(const std::string& path, const std::string& base_dir,
                         const Environment& env) {
  const fs::path expanded = expand_home(path, env);
  if (expanded.is_absolute() || base_dir.empty()) return expanded.lexically_normal().string();
  return (fs::path(base_dir) / expanded).lexically_normal().string();
}

std::string default_cache_dir(const Environment& env) {
  if (env.xdg_cache_home) return (fs::path(*env.xdg_cache_home) / "kiln").string();
  if (env.home) return (fs::path(*env.home) / ".cache" / "kiln").string();
  return (fs::temp_directory_path() / "kiln-cache").string();
}

PluginOption read_plugin_option(const Reader& r, const std::string& key, const YAML::Node& node,
                                const std::string& where) {
  PluginOption option;
  option.key = key;
  if (node.IsSequence()) {
    option.is_list = true;
    option.values = r.string_list(node, where);
  } else if (node.IsScalar()) {
    option.values = {node.Scalar()};
  } else {
    r.fail(node.Mark(), "'" + where + "' must be a value or a list of values");
  }
  return option;
}

PluginConfig read_plugin(const Reader& r, const YAML::Node& node, const std::string& where,
                         const std::string& base_dir, const Environment& env) {
  r.expect_map(node, where, {"name", "path", "options"});
  if (!node["name"]) r.fail(node.Mark(), "'" + where + "' needs a 'name'");
  PluginConfig plugin;
  plugin.name = r.string(node["name"], where + ".name");
  if (plugin.name.empty() ||
      plugin.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos) {
    r.fail(node["name"].Mark(), "'" + where + ".name' must be lowercase letters, digits and '_'");
  }
  if (node["path"])
    plugin.path = resolve_path(r.string(node["path"], where + ".path"), base_dir, env);
  if (const YAML::Node options = node["options"]) {
    if (!options.IsMap()) r.fail(options.Mark(), "'" + where + ".options' must be a map");
    for (const auto& entry : options) {
      const std::string key = r.string(entry.first, where + ".options");
      plugin.options.push_back(read_plugin_option(r, key, entry.second, where + ".options." + key));
    }
  }
  return plugin;
}

DeviceRef read_device(const Reader& r, const YAML::Node& node, const std::string& where) {
  const std::string text = r.string(node, where);
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string index = colon == std::string::npos ? "" : text.substr(colon + 1);
  const bool kind_ok =
      !kind.empty() &&
      kind.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
  const bool index_ok = !index.empty() && index.size() <= 9 &&
                        index.find_first_not_of("0123456789") == std::string::npos;
  if (!kind_ok || !index_ok) {
    r.fail(node.Mark(),
           "'" + where + "' must look like kind:index, e.g. cpu:0 or cuda:1; got '" + text + "'");
  }
  return DeviceRef{kind, static_cast<uint32_t>(std::stoul(index))};
}

Selection read_selection(const Reader& r, const YAML::Node& node) {
  const std::string text = r.string(node, "selection");
  if (text == "autotune") return {SelectionMode::Autotune, ""};
  if (text == "first-available") return {SelectionMode::FirstAvailable, ""};
  if (text.empty())
    r.fail(node.Mark(), "'selection' must be autotune, first-available or a plugin name");
  return {SelectionMode::Plugin, text};
}

PlacementPolicy read_placement(const Reader& r, const YAML::Node& node) {
  const std::string text = r.string(node, "placement");
  if (text == "cost") return PlacementPolicy::Cost;
  if (text == "order") return PlacementPolicy::Order;
  r.fail(node.Mark(), "'placement' must be cost or order; got '" + text + "'");
}

AutotuneOptions read_autotune(const Reader& r, const YAML::Node& node) {
  r.expect_map(node, "autotune",
               {"kernels", "warmup", "reps", "deterministic", "libraries", "budget_ms"});
  AutotuneOptions autotune;
  if (const YAML::Node kernels = node["kernels"]) {
    const std::string text = r.string(kernels, "autotune.kernels");
    if (text == "off")
      autotune.kernels = KernelTuning::Off;
    else if (text == "heuristic")
      autotune.kernels = KernelTuning::Heuristic;
    else if (text == "exhaustive")
      autotune.kernels = KernelTuning::Exhaustive;
    else
      r.fail(kernels.Mark(),
             "'autotune.kernels' must be off, heuristic or exhaustive; got '" + text + "'");
  }
  if (node["warmup"]) autotune.warmup = r.integer(node["warmup"], "autotune.warmup", 0);
  if (node["reps"]) autotune.reps = r.integer(node["reps"], "autotune.reps", 1);
  if (node["budget_ms"]) autotune.budget_ms = r.integer(node["budget_ms"], "autotune.budget_ms", 1);
  if (node["deterministic"])
    autotune.deterministic = r.boolean(node["deterministic"], "autotune.deterministic");
  if (node["libraries"]) autotune.libraries = r.boolean(node["libraries"], "autotune.libraries");
  return autotune;
}

CacheOptions read_cache(const Reader& r, const YAML::Node& node, const std::string& base_dir,
                        const Environment& env) {
  r.expect_map(node, "cache", {"enabled", "dir", "max_size_mb"});
  CacheOptions cache;
  if (node["enabled"]) cache.enabled = r.boolean(node["enabled"], "cache.enabled");
  if (node["dir"]) cache.dir = resolve_path(r.string(node["dir"], "cache.dir"), base_dir, env);
  if (node["max_size_mb"])
    cache.max_size_mb = r.integer(node["max_size_mb"], "cache.max_size_mb", 1);
  return cache;
}

RunConfig read_run(const Reader& r, const YAML::Node& node) {
  r.expect_map(node, "run", {"asynchronous", "staging", "cuda_graphs", "huge_pages"});
  RunConfig run;
  if (node["asynchronous"]) run.asynchronous = r.boolean(node["asynchronous"], "run.asynchronous");
  if (node["staging"]) run.staging = r.boolean(node["staging"], "run.staging");
  if (node["cuda_graphs"]) run.cuda_graphs = r.boolean(node["cuda_graphs"], "run.cuda_graphs");
  if (node["huge_pages"]) run.huge_pages = r.boolean(node["huge_pages"], "run.huge_pages");
  return run;
}

ScheduleOptions read_schedule(const Reader& r, const YAML::Node& node) {
  r.expect_map(node, "schedule",
               {"fusion", "max_readers", "max_inline_ops", "max_kernel_ops", "min_fused_rows",
                "split_rows_below", "max_peak_growth_bytes", "library_matmul", "library_conv",
                "deterministic", "conv_tf32", "matmul_tf32"});
  ScheduleOptions schedule;
  if (node["fusion"]) schedule.fusion = r.boolean(node["fusion"], "schedule.fusion");
  if (node["max_readers"])
    schedule.max_readers = r.integer(node["max_readers"], "schedule.max_readers", 1);
  if (node["max_inline_ops"])
    schedule.max_inline_ops = r.integer(node["max_inline_ops"], "schedule.max_inline_ops", 1);
  if (node["max_kernel_ops"])
    schedule.max_kernel_ops = r.integer(node["max_kernel_ops"], "schedule.max_kernel_ops", 1);
  if (node["min_fused_rows"])
    schedule.min_fused_rows = r.integer(node["min_fused_rows"], "schedule.min_fused_rows", 1);
  if (const YAML::Node split = node["split_rows_below"]; split) {
    int64_t rows = 0;
    if (split.IsScalar() && split.Scalar() == "auto")
      rows = -1;
    else if (!split.IsScalar() || !YAML::convert<int64_t>::decode(split, rows) || rows < 0)
      r.fail(split.Mark(), "'schedule.split_rows_below' must be auto or an integer >= 0");
    schedule.split_rows_below = rows;
  }
  if (node["library_matmul"])
    schedule.library_matmul = r.boolean(node["library_matmul"], "schedule.library_matmul");
  if (node["library_conv"])
    schedule.library_conv = r.boolean(node["library_conv"], "schedule.library_conv");
  if (node["deterministic"])
    schedule.deterministic = r.boolean(node["deterministic"], "schedule.deterministic");
  if (node["conv_tf32"]) schedule.conv_tf32 = r.boolean(node["conv_tf32"], "schedule.conv_tf32");
  if (node["matmul_tf32"])
    schedule.matmul_tf32 = r.boolean(node["matmul_tf32"], "schedule.matmul_tf32");
  if (node["max_peak_growth_bytes"]) {
    schedule.max_peak_growth_bytes =
        r.integer(node["max_peak_growth_bytes"], "schedule.max_peak_growth_bytes", 0);
  }
  return schedule;
}

LogLevels read_log(const Reader& r, const YAML::Node& node) {
  r.expect_map(node, "log", {"level", "components"});
  LogLevels levels;
  auto level_of = [&](const YAML::Node& n, const std::string& key) {
    auto level = parse_log_level(r.string(n, key));
    if (!level) r.fail(n.Mark(), "'" + key + "': " + level.error().message());
    return *level;
  };
  if (node["level"]) levels.default_level = level_of(node["level"], "log.level");
  if (const YAML::Node components = node["components"]) {
    if (!components.IsMap()) r.fail(components.Mark(), "'log.components' must be a map");
    for (const auto& entry : components) {
      const std::string name = r.string(entry.first, "log.components");
      levels.components[name] = level_of(entry.second, "log.components." + name);
    }
  }
  return levels;
}

Options read_options(const Reader& r, const YAML::Node& root, const std::string& source,
                     const std::string& base_dir, const Environment& env) {
  Options options;
  options.source = source;
  options.cache.dir = default_cache_dir(env);
  if (!root || root.IsNull()) return options;  // an empty file: all defaults
  r.expect_map(root, "",
               {"plugins", "devices", "selection", "placement", "autotune", "cache", "schedule",
                "run", "log", "debug_dir", "plugin_path"});
  if (const YAML::Node plugins = root["plugins"]) {
    if (!plugins.IsSequence()) r.fail(plugins.Mark(), "'plugins' must be a list");
    std::set<std::string> names;
    for (size_t i = 0; i < plugins.size(); ++i) {
      const std::string where = "plugins[" + std::to_string(i) + "]";
      PluginConfig plugin = read_plugin(r, plugins[i], where, base_dir, env);
      if (!names.insert(plugin.name).second) {
        r.fail(plugins[i].Mark(), "plugin '" + plugin.name + "' is listed twice");
      }
      options.plugins.push_back(std::move(plugin));
    }
  }
  if (const YAML::Node devices = root["devices"]) {
    if (!devices.IsSequence()) r.fail(devices.Mark(), "'devices' must be a list");
    for (size_t i = 0; i < devices.size(); ++i) {
      options.devices.push_back(read_device(r, devices[i], "devices[" + std::to_string(i) + "]"));
    }
  }
  if (root["selection"]) options.selection = read_selection(r, root["selection"]);
  if (options.selection.mode == SelectionMode::Plugin) {
    bool listed = false;
    for (const auto& p : options.plugins) listed = listed || p.name == options.selection.plugin;
    if (!listed) {
      r.fail(root["selection"].Mark(),
             "'selection' names plugin '" + options.selection.plugin +
                 "', which is not in 'plugins' (or use autotune / first-available)");
    }
  }
  if (root["placement"]) options.placement = read_placement(r, root["placement"]);
  if (root["autotune"]) options.autotune = read_autotune(r, root["autotune"]);
  if (root["cache"]) options.cache = read_cache(r, root["cache"], base_dir, env);
  if (options.cache.dir.empty()) options.cache.dir = default_cache_dir(env);
  if (root["schedule"]) options.schedule = read_schedule(r, root["schedule"]);
  if (root["run"]) options.run = read_run(r, root["run"]);
  if (root["log"]) options.log = read_log(r, root["log"]);
  if (root["debug_dir"])
    options.debug_dir = resolve_path(r.string(root["debug_dir"], "debug_dir"), base_dir, env);
  if (root["plugin_path"]) {
    for (const auto& dir : r.string_list(root["plugin_path"], "plugin_path")) {
      options.plugin_path.push_back(resolve_path(dir, base_dir, env));
    }
  }
  return options;
}

// The environment wins over the file: KILN_CACHE_DIR, KILN_LOG, KILN_DEBUG_DIR replace,
// KILN_PLUGIN_PATH is searched before the file's plugin_path.
Result<Options> apply_environment(Options options, const Environment& env) {
  if (env.cache_dir) options.cache.dir = resolve_path(*env.cache_dir, "", env);
  if (env.debug_dir) options.debug_dir = resolve_path(*env.debug_dir, "", env);
  if (env.log) {
    auto levels = parse_log_spec(*env.log);
    if (!levels) return std::move(levels).error().with_context("in KILN_LOG");
    options.log = *levels;
  }
  if (env.plugin_path) {
    std::vector<std::string> dirs;
    std::stringstream stream(*env.plugin_path);
    for (std::string dir; std::getline(stream, dir, ':');) {
      if (!dir.empty()) dirs.push_back(resolve_path(dir, "", env));
    }
    dirs.insert(dirs.end(), options.plugin_path.begin(), options.plugin_path.end());
    options.plugin_path = std::move(dirs);
  }
  return options;
}

}  // namespace

std::string_view builtin_default_config() {
  return kBuiltinDefaultConfig;
}

Result<Options> parse_options(std::string_view yaml, const std::string& source,
                              const std::string& base_dir, const Environment& env) {
  const Reader reader(source);
  try {
    const YAML::Node root = YAML::Load(std::string(yaml));
    return apply_environment(read_options(reader, root, source, base_dir, env), env);
  } catch (const ConfigError& e) {
    return Error::user(e.message);
  } catch (const YAML::Exception& e) {
    std::string where = source;
    if (e.mark.line >= 0) {
      where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    }
    return Error::user(where + ": malformed YAML: " + e.msg);
  }
}

Result<Options> load_options(const std::optional<std::string>& config_file,
                             const Environment& env) {
  const std::optional<std::string> file = config_file ? config_file : env.config;
  if (!file) return parse_options(builtin_default_config(), "<built-in default>", "", env);
  std::error_code ec;
  if (std::filesystem::is_directory(*file, ec))
    return Error::user("cannot read config file '" + *file + "': is a directory");
  std::ifstream in(*file, std::ios::binary);
  if (!in) return Error::user("cannot read config file '" + *file + "'");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error::user("error while reading config file '" + *file + "'");
  const std::string base_dir = fs::absolute(fs::path(*file)).parent_path().string();
  return parse_options(text.str(), *file, base_dir, env);
}

}  // namespace kiln
