#include "core/runtime/plugin.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <sstream>

namespace kiln {
namespace {

std::string text_or_empty(const char* s) {
  return s == nullptr ? std::string() : std::string(s);
}

DeviceProperty to_property(const kiln_property& p) {
  DeviceProperty property{text_or_empty(p.key), int64_t{0}};
  switch (p.type) {
    case KILN_PROPERTY_INT:
      property.value = p.int_value;
      break;
    case KILN_PROPERTY_FLOAT:
      property.value = p.float_value;
      break;
    case KILN_PROPERTY_STRING:
      property.value = text_or_empty(p.string_value);
      break;
    case KILN_PROPERTY_BOOL:
      property.value = p.int_value != 0;
      break;
    default:
      property.value = std::string("<unknown property type>");
      break;
  }
  return property;
}

}  // namespace

std::string DeviceProperty::value_text() const {
  struct Visitor {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return fmt::format("{:g}", v); }
    std::string operator()(const std::string& v) const { return v; }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
  };
  return std::visit(Visitor{}, value);
}

const DeviceProperty* DeviceInfo::find(std::string_view key) const {
  for (const auto& p : properties) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

std::string_view status_name(kiln_status status) {
  switch (status) {
    case KILN_OK:
      return "OK";
    case KILN_STATUS_UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case KILN_STATUS_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case KILN_STATUS_UNSUPPORTED:
      return "UNSUPPORTED";
    case KILN_STATUS_OUT_OF_MEMORY:
      return "OUT_OF_MEMORY";
    case KILN_STATUS_DEVICE_ERROR:
      return "DEVICE_ERROR";
    case KILN_STATUS_COMPILE_ERROR:
      return "COMPILE_ERROR";
    case KILN_STATUS_NOT_FOUND:
      return "NOT_FOUND";
    case KILN_STATUS_INTERNAL:
      return "INTERNAL";
  }
  return "UNKNOWN_STATUS";
}

Plugin::Plugin(std::shared_ptr<void> library, const kiln_plugin_api& api, kiln_plugin* instance,
               std::string path, AbiVersion plugin_abi, AbiVersion negotiated_abi,
               std::shared_ptr<spdlog::logger> logger)
    : library_(std::move(library)),
      api_(api),
      instance_(instance),
      path_(std::move(path)),
      plugin_abi_(plugin_abi),
      negotiated_abi_(negotiated_abi),
      logger_(std::move(logger)) {}

Plugin::~Plugin() {
  if (instance_ != nullptr && api_.plugin_destroy != nullptr) api_.plugin_destroy(instance_);
}

std::string Plugin::take_blob(kiln_blob* blob) const {
  if (!blob) return {};
  std::string bytes(static_cast<const char*>(api_.blob_data(blob)), api_.blob_size(blob));
  api_.blob_destroy(blob);
  return bytes;
}

std::vector<std::string> Plugin::take_lines(kiln_blob* blob) const {
  std::vector<std::string> lines;
  std::istringstream in(take_blob(blob));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

uint64_t capabilities_of(const Plugin& plugin, uint32_t device) {
  for (const DeviceInfo& d : plugin.devices())
    if (d.index == device) return d.capabilities;
  return 0;
}

Status Plugin::check(kiln_error* error, std::string_view what) const {
  if (error == nullptr) return Ok{};
  const kiln_status code = api_.error_code(error);
  const char* message = api_.error_message(error);
  std::string text = fmt::format("plugin '{}': {} failed: {} ({})",
                                 attributes_.name.empty() ? path_ : attributes_.name, what,
                                 message == nullptr ? "" : message, status_name(code));
  api_.error_destroy(error);
  // Only a plugin's own bug is internal; everything else is something the user can act on
  // (a bad option, an unsupported device, a full device memory).
  return code == KILN_STATUS_INTERNAL ? Error::internal(std::move(text))
                                      : Error::user(std::move(text));
}

std::vector<std::unique_lock<std::recursive_mutex>> exclusive_calls(
    std::vector<const Plugin*> plugins) {
  std::sort(plugins.begin(), plugins.end(), std::less<const Plugin*>());
  plugins.erase(std::unique(plugins.begin(), plugins.end()), plugins.end());
  std::vector<std::unique_lock<std::recursive_mutex>> locks;
  for (const Plugin* p : plugins) locks.push_back(p->exclusive());
  return locks;
}

Status Plugin::query() {
  kiln_plugin_attributes raw{};
  raw.struct_size = sizeof(raw);
  if (auto s = check(api_.get_attributes(instance_, &raw), "get_attributes"); !s) return s;
  attributes_ = PluginAttributes{text_or_empty(raw.name),
                                 text_or_empty(raw.vendor),
                                 text_or_empty(raw.version),
                                 text_or_empty(raw.kir_versions),
                                 text_or_empty(raw.artifact_format),
                                 text_or_empty(raw.compiler_fingerprint),
                                 raw.thread_safety};
  uint32_t count = 0;
  if (auto s = check(api_.device_count(instance_, &count), "device_count"); !s) return s;
  for (uint32_t i = 0; i < count; ++i) {
    kiln_device_info info{};
    info.struct_size = sizeof(info);
    if (auto s = check(api_.device_info(instance_, i, &info), "device_info"); !s) return s;
    DeviceInfo device{i, text_or_empty(info.kind), text_or_empty(info.name), {}, 0};
    if (api_.device_capabilities) {
      if (auto s = check(api_.device_capabilities(instance_, i, &device.capabilities),
                         "device_capabilities");
          !s)
        return s;
    }
    // An array of structs is strided by its first element's struct_size, which may be
    // larger (newer plugin) or smaller (older plugin) than ours.
    const auto* base = reinterpret_cast<const unsigned char*>(info.properties);
    const size_t stride = info.num_properties > 0 ? info.properties[0].struct_size : 0;
    for (size_t p = 0; p < info.num_properties; ++p) {
      kiln_property property{};
      std::memcpy(&property, base + p * stride, std::min(stride, sizeof(property)));
      device.properties.push_back(to_property(property));
    }
    devices_.push_back(std::move(device));
  }
  return Ok{};
}

}  // namespace kiln
