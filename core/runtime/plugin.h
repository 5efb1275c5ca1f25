// A loaded and created plugin instance: the host's copy of its function table, its
// attributes and devices. Everything made from a plugin (buffers, executables, streams)
// holds a shared_ptr<const Plugin>, so the shared object stays loaded while any lives.
#pragma once

#include <kiln/plugin.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/support/result.h"

namespace spdlog {
class logger;
}

namespace kiln {

struct AbiVersion {
  uint32_t major = 0;
  uint32_t minor = 0;
  std::string to_string() const { return std::to_string(major) + "." + std::to_string(minor); }
};

inline constexpr AbiVersion kHostAbi{KILN_ABI_MAJOR, KILN_ABI_MINOR};

struct PluginAttributes {
  std::string name;
  std::string vendor;
  std::string version;
  std::string kir_versions;
  std::string artifact_format;
  std::string compiler_fingerprint;
  uint32_t thread_safety = 0;
};

struct DeviceProperty {
  std::string key;
  std::variant<int64_t, double, std::string, bool> value;
  std::string value_text() const;
};

struct DeviceInfo {
  uint32_t index = 0;
  std::string kind;
  std::string name;
  std::vector<DeviceProperty> properties;
  uint64_t capabilities = 0;  // kiln_capability_flags (ABI 1.2; 0 before)
  const DeviceProperty* find(std::string_view key) const;
};

class Plugin;
// The calls of every plugin in `plugins` (Plugin::exclusive), taken in one order, by address,
// whoever asks: a graph placed across two plugins and another placed the other way round, or a
// compile, never wait on each other in a cycle.
std::vector<std::unique_lock<std::recursive_mutex>> exclusive_calls(
    std::vector<const Plugin*> plugins);

// The kiln_capability_flags of `plugin`'s device `device` (0 for a device it does not have).
uint64_t capabilities_of(const Plugin& plugin, uint32_t device);

// Human-readable name of a kiln_status ("UNIMPLEMENTED", ...).
std::string_view status_name(kiln_status status);

class Plugin {
 public:
  // Takes ownership of `instance`; `library` keeps the shared object loaded and is
  // released only after plugin_destroy.
  Plugin(std::shared_ptr<void> library, const kiln_plugin_api& api, kiln_plugin* instance,
         std::string path, AbiVersion plugin_abi, AbiVersion negotiated_abi,
         std::shared_ptr<spdlog::logger> logger);
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::string& name() const { return attributes_.name; }
  const std::string& path() const { return path_; }
  AbiVersion plugin_abi() const { return plugin_abi_; }
  AbiVersion negotiated_abi() const { return negotiated_abi_; }
  const PluginAttributes& attributes() const { return attributes_; }
  const std::vector<DeviceInfo>& devices() const { return devices_; }

  // The host's copy of the table: functions the plugin lacks (NULL, or beyond its
  // struct_size) are NULL here. Check before calling, or use require().
  const kiln_plugin_api& api() const { return api_; }
  kiln_plugin* instance() const { return instance_; }

  // The bytes of a blob the plugin returned, which is then destroyed ("" for NULL).
  std::string take_blob(kiln_blob* blob) const;
  // The non-empty lines of such a blob's text (extern names, tuning configs).
  std::vector<std::string> take_lines(kiln_blob* blob) const;

  // Turns a plugin error into an Error (destroying the plugin's object); Ok for NULL.
  Status check(kiln_error* error, std::string_view what) const;

  // Ok when `fn` is present; else a user error naming the plugin and the function.
  template <class Fn>
  Status require(Fn fn, std::string_view function_name) const {
    if (fn != nullptr) return Ok{};
    return Error::user("plugin '" + name() + "' does not support " + std::string(function_name));
  }

  // Reads attributes and devices through the table. Called once by the loader.
  Status query();

  // Held around launches and memory calls from the host's threads: locked unless the plugin
  // says such calls may run concurrently (KILN_THREAD_SAFE_LAUNCH), so the ABI's one-thread
  // rule holds whoever calls. Recursive: compiling holds it and times candidate graphs,
  // whose runs take it again on the same thread.
  std::unique_lock<std::recursive_mutex> exclusive() const {
    if (attributes_.thread_safety & KILN_THREAD_SAFE_LAUNCH) return {};
    return std::unique_lock<std::recursive_mutex>(calls_);
  }

 private:
  std::shared_ptr<void> library_;  // declared first: destroyed last
  kiln_plugin_api api_;
  kiln_plugin* instance_;
  std::string path_;
  AbiVersion plugin_abi_;
  AbiVersion negotiated_abi_;
  std::shared_ptr<spdlog::logger> logger_;  // the plugin's log callback writes here
  PluginAttributes attributes_;
  std::vector<DeviceInfo> devices_;
  mutable std::recursive_mutex calls_;
};

}  // namespace kiln
