#include "conformance/raw_plugin.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace kiln::conformance {

RawPlugin::RawPlugin(const std::string& path, uint32_t major, uint32_t minor) {
  library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  auto entry = reinterpret_cast<kiln_plugin_get_api_fn>(dlsym(library_, KILN_PLUGIN_ENTRY_POINT));
  if (!entry) throw std::runtime_error("no symbol " KILN_PLUGIN_ENTRY_POINT);
  const kiln_plugin_api* api = entry(major, minor);
  if (!api) {
    declined_ = true;
    return;
  }
  table_size_ = api->struct_size;
  std::memcpy(&api_, api, std::min(sizeof api_, table_size_));
  api_.struct_size = sizeof api_;
}

RawPlugin::~RawPlugin() {
  if (instance_ && api_.plugin_destroy) api_.plugin_destroy(instance_);
  // The library stays mapped: plugins may keep process-wide state (LLVM, OpenMP) alive.
}

std::string RawPlugin::create(const OptionList& options, uint32_t minor, kiln_status* code) {
  if (declined_ || !api_.plugin_create) return "no plugin_create";
  std::vector<const char*> values;
  values.reserve(options.size());
  for (const auto& o : options) values.push_back(o.second.c_str());
  std::vector<kiln_option> list;
  for (size_t i = 0; i < options.size(); ++i)
    list.push_back({sizeof(kiln_option), options[i].first.c_str(), &values[i], 1, 0});
  kiln_plugin_create_args args{};
  args.struct_size = sizeof args;
  args.abi_major = KILN_ABI_MAJOR;
  args.abi_minor = std::min(minor, api_.abi_minor);
  args.options = list.empty() ? nullptr : list.data();
  args.num_options = list.size();
  return take(api_.plugin_create(&args, &instance_), code);
}

uint32_t RawPlugin::device_count() const {
  uint32_t n = 0;
  if (!instance_ || !api_.device_count) return 0;
  if (kiln_error* e = api_.device_count(instance_, &n)) {
    take(e);
    return 0;
  }
  return n;
}

std::string RawPlugin::take(kiln_error* e, kiln_status* code) const {
  if (code) *code = KILN_OK;
  if (!e) return "";
  const kiln_status status = api_.error_code ? api_.error_code(e) : KILN_STATUS_INTERNAL;
  const char* message = api_.error_message ? api_.error_message(e) : nullptr;
  std::string text = "status " + std::to_string(static_cast<int>(status)) + ": " +
                     (message ? message : "(no message)");
  if (code) *code = status;
  if (api_.error_destroy) api_.error_destroy(e);
  return text;
}

std::string RawPlugin::take(kiln_blob* b) const {
  if (!b) return "";
  const auto* data = static_cast<const char*>(api_.blob_data(b));
  std::string text(data ? data : "", data ? api_.blob_size(b) : 0);
  api_.blob_destroy(b);
  return text;
}

}  // namespace kiln::conformance
