#include "core/runtime/plugin_loader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/logger.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cstddef>
#include <cstring>
#include <filesystem>

#include "core/support/logging.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
namespace dll = boost::dll;

// The functions without which the host cannot talk to a plugin at all.
Status check_required(const kiln_plugin_api& api) {
  std::vector<std::string> missing;
  auto need = [&](auto fn, const char* name) {
    if (fn == nullptr) missing.emplace_back(name);
  };
  need(api.error_code, "error_code");
  need(api.error_message, "error_message");
  need(api.error_destroy, "error_destroy");
  need(api.blob_data, "blob_data");
  need(api.blob_size, "blob_size");
  need(api.blob_destroy, "blob_destroy");
  need(api.plugin_create, "plugin_create");
  need(api.plugin_destroy, "plugin_destroy");
  need(api.get_attributes, "get_attributes");
  need(api.device_count, "device_count");
  need(api.device_info, "device_info");
  if (missing.empty()) return Ok{};
  return Error::user(fmt::format("required function(s) missing from the plugin table: {}",
                                 fmt::join(missing, ", ")));
}

void log_from_plugin(void* user_data, kiln_log_level level, const char* message) {
  auto* logger = static_cast<spdlog::logger*>(user_data);
  if (logger == nullptr || message == nullptr) return;
  switch (level) {
    case KILN_LOG_TRACE:
      logger->trace("{}", message);
      break;
    case KILN_LOG_DEBUG:
      logger->debug("{}", message);
      break;
    case KILN_LOG_INFO:
      logger->info("{}", message);
      break;
    case KILN_LOG_WARN:
      logger->warn("{}", message);
      break;
    default:
      logger->error("{}", message);
      break;
  }
}

// The config's options in ABI form; the vectors own what the pointers point to.
struct AbiOptions {
  std::vector<std::vector<const char*>> value_pointers;
  std::vector<kiln_option> options;

  explicit AbiOptions(const std::vector<PluginOption>& source) {
    value_pointers.reserve(source.size());
    for (const auto& option : source) {
      auto& pointers = value_pointers.emplace_back();
      for (const auto& v : option.values) pointers.push_back(v.c_str());
      options.push_back(kiln_option{sizeof(kiln_option), option.key.c_str(), pointers.data(),
                                    pointers.size(), option.is_list ? 1 : 0});
    }
  }
};

Result<std::shared_ptr<const Plugin>> open_and_create(const PluginConfig& config,
                                                      const std::string& path,
                                                      const Logging& logging, AbiVersion host) {
  std::error_code ec;
  auto library = std::make_shared<dll::shared_library>(
      path, ec, dll::load_mode::rtld_local | dll::load_mode::rtld_now);
  if (ec || !library->is_loaded()) {
    return Error::user(fmt::format("cannot open the shared object: {}", ec.message()));
  }
  if (!library->has(KILN_PLUGIN_ENTRY_POINT)) {
    return Error::user(
        fmt::format("not a kiln plugin: it does not export {}", KILN_PLUGIN_ENTRY_POINT));
  }
  auto get_api =
      library->get<std::remove_pointer_t<kiln_plugin_get_api_fn>>(KILN_PLUGIN_ENTRY_POINT);
  const kiln_plugin_api* table = get_api(host.major, host.minor);
  if (table == nullptr) {
    return Error::user(
        fmt::format("the plugin declined host ABI {} (it returned no table)", host.to_string()));
  }
  constexpr size_t kVersionEnd = offsetof(kiln_plugin_api, abi_minor) + sizeof(uint32_t);
  if (table->struct_size < kVersionEnd) {
    return Error::user(fmt::format("the plugin's table is {} bytes, too small to hold a version",
                                   table->struct_size));
  }
  const AbiVersion plugin_abi{table->abi_major, table->abi_minor};
  if (plugin_abi.major != host.major) {
    return Error::user(fmt::format("ABI major mismatch: the plugin speaks {}, this host {}",
                                   plugin_abi.to_string(), host.to_string()));
  }
  // Read min(sizes): what an older plugin lacks stays NULL, what a newer one adds is ignored.
  kiln_plugin_api api{};
  std::memcpy(&api, table, std::min(table->struct_size, sizeof(api)));
  api.struct_size = sizeof(api);
  if (auto s = check_required(api); !s) return std::move(s).error();
  const AbiVersion negotiated{host.major, std::min(host.minor, plugin_abi.minor)};
  // Functions of minors above the negotiated one are not called, whatever the table holds.
  if (negotiated.minor < 1) {
    api.mem_register = nullptr;
    api.mem_unregister = nullptr;
  }
  if (negotiated.minor < 2) {
    api.device_capabilities = nullptr;
    api.stream_wait_event = nullptr;
    api.event_query = nullptr;
    api.host_alloc = nullptr;
    api.host_free = nullptr;
  }
  if (negotiated.minor < 3) {
    api.mem_import = nullptr;
    api.mem_release_import = nullptr;
  }
  if (negotiated.minor < 4) {
    api.stream_begin_capture = nullptr;
    api.stream_end_capture = nullptr;
    api.graph_launch = nullptr;
    api.graph_destroy = nullptr;
  }

  auto logger = logging.get("plugin." + config.name);
  const AbiOptions options(config.options);
  kiln_plugin_create_args args{};
  args.struct_size = sizeof(args);
  args.abi_major = negotiated.major;
  args.abi_minor = negotiated.minor;
  args.options = options.options.data();
  args.num_options = options.options.size();
  args.log = log_from_plugin;
  args.log_user_data = logger.get();
  kiln_plugin* instance = nullptr;
  kiln_error* error = api.plugin_create(&args, &instance);
  if (error != nullptr || instance == nullptr) {
    // No instance yet, so no Plugin to own the error: read and free it here.
    std::string message = "plugin_create returned no instance";
    if (error != nullptr) {
      const char* text = api.error_message(error);
      message = fmt::format("initialization failed: {} ({})", text == nullptr ? "" : text,
                            status_name(api.error_code(error)));
      api.error_destroy(error);
    }
    return Error::user(message);
  }
  auto plugin = std::make_shared<Plugin>(std::move(library), api, instance, path, plugin_abi,
                                         negotiated, std::move(logger));
  if (auto s = plugin->query(); !s) return std::move(s).error();
  if (plugin->name() != config.name) {
    return Error::user(
        fmt::format("the file holds plugin '{}', not '{}'", plugin->name(), config.name));
  }
  return std::shared_ptr<const Plugin>(std::move(plugin));
}

}  // namespace

std::string default_plugin_dir() {
  std::error_code ec;
  // The binary this code is linked into: bin/kiln, or lib/libkiln.so inside a host process
  // (Python) whose executable is elsewhere. Both sit one level below the prefix.
  const fs::path self = dll::this_line_location(ec);
  if (ec) return {};
  return (self.parent_path().parent_path() / "lib" / "kiln").lexically_normal().string();
}

Result<std::string> find_plugin_file(const PluginConfig& config,
                                     const std::vector<std::string>& search_dirs) {
  std::error_code ec;
  if (!config.path.empty()) {
    if (fs::is_regular_file(config.path, ec)) return config.path;
    return Error::user(fmt::format("plugin file not found: {}", config.path));
  }
  const std::string file = "kiln_" + config.name + ".so";
  for (const auto& dir : search_dirs) {
    const fs::path candidate = fs::path(dir) / file;
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
  }
  return Error::user(
      fmt::format("{} not found in the plugin path [{}] (set plugin_path in the "
                  "config, KILN_PLUGIN_PATH, or the plugin's path)",
                  file, fmt::join(search_dirs, ", ")));
}

Result<std::shared_ptr<const Plugin>> load_plugin(const PluginConfig& config,
                                                  const std::string& path, const Logging& logging,
                                                  AbiVersion host) {
  auto plugin = open_and_create(config, path, logging, host);
  if (!plugin) {
    return std::move(plugin).error().with_context(
        fmt::format("loading plugin '{}' from {}", config.name, path));
  }
  return plugin;
}

LoadedPlugins load_plugins(const Options& options, const Logging& logging) {
  auto log = logging.get("loader");
  std::vector<std::string> search_dirs = options.plugin_path;
  if (std::string dir = default_plugin_dir(); !dir.empty()) search_dirs.push_back(dir);
  LoadedPlugins result;
  for (const auto& config : options.plugins) {
    auto path = find_plugin_file(config, search_dirs);
    if (!path) {
      auto error =
          std::move(path).error().with_context(fmt::format("loading plugin '{}'", config.name));
      log->warn("{}", error.to_string());
      result.failures.push_back({config.name, "", std::move(error)});
      continue;
    }
    auto plugin = load_plugin(config, *path, logging);
    if (!plugin) {
      log->warn("{}", plugin.error().to_string());
      result.failures.push_back({config.name, *path, std::move(plugin).error()});
      continue;
    }
    log->debug("loaded plugin '{}' {} from {} (ABI {}, negotiated {})", config.name,
               (*plugin)->attributes().version, *path, (*plugin)->plugin_abi().to_string(),
               (*plugin)->negotiated_abi().to_string());
    result.plugins.push_back(std::move(*plugin));
  }
  return result;
}

}  // namespace kiln
