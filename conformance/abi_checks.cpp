// The ABI rules a plugin follows (sdk/include/kiln/plugin.h), each checked in its own process.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "conformance/context.h"
#include "conformance/isolated.h"
#include "conformance/on_device.h"

namespace kiln::conformance {
namespace {

Finding entry_point(const Context& c) {
  RawPlugin p(c.path);
  if (!p.table()) return fail("kiln_plugin_get_api returned NULL to a host of this ABI");
  if (p.table()->abi_major != KILN_ABI_MAJOR)
    return fail("the table says ABI major " + std::to_string(p.table()->abi_major));
  if (p.table_size() < offsetof(kiln_plugin_api, mem_register))
    return fail("the table's struct_size (" + std::to_string(p.table_size()) +
                ") is smaller than ABI 1.0's");
  return pass("ABI " + std::to_string(p.table()->abi_major) + "." +
              std::to_string(p.table()->abi_minor) + ", a table of " +
              std::to_string(p.table_size()) + " bytes");
}

Finding required_functions(const Context& c) {
  RawPlugin p(c.path);
  if (!p.table()) return fail("no table");
  const kiln_plugin_api& a = *p.table();
  const std::vector<std::pair<const char*, bool>> required = {
      {"error_code", a.error_code != nullptr},
      {"error_message", a.error_message != nullptr},
      {"error_destroy", a.error_destroy != nullptr},
      {"blob_data", a.blob_data != nullptr},
      {"blob_size", a.blob_size != nullptr},
      {"blob_destroy", a.blob_destroy != nullptr},
      {"plugin_create", a.plugin_create != nullptr},
      {"plugin_destroy", a.plugin_destroy != nullptr},
      {"get_attributes", a.get_attributes != nullptr},
      {"device_count", a.device_count != nullptr},
      {"device_info", a.device_info != nullptr}};
  std::string missing;
  for (const auto& [name, present] : required)
    if (!present) missing += (missing.empty() ? "" : ", ") + std::string(name);
  return missing.empty() ? pass("all 11 present") : fail("missing: " + missing);
}

Finding other_major(const Context& c) {
  RawPlugin p(c.path, KILN_ABI_MAJOR + 1, 0);
  if (!p.table()) return pass("declined a host of ABI " + std::to_string(KILN_ABI_MAJOR + 1));
  return pass("answered a host of ABI " + std::to_string(KILN_ABI_MAJOR + 1) + " with its ABI " +
              std::to_string(p.table()->abi_major) +
              " table, which that host rejects by its major");
}

Finding minor_negotiation(const Context& c) {
  for (const uint32_t host_minor : {0u, uint32_t{KILN_ABI_MINOR}, uint32_t{KILN_ABI_MINOR + 5}}) {
    Created made = created(c, host_minor);
    if (!made.error.empty())
      return fail("as seen by a host of ABI 1." + std::to_string(host_minor) + ": " + made.error);
  }
  return pass("created by hosts of ABI 1.0, 1." + std::to_string(KILN_ABI_MINOR) + " and 1." +
              std::to_string(KILN_ABI_MINOR + 5));
}

Finding unknown_option(const Context& c) {
  RawPlugin p(c.path);
  OptionList options = c.options;
  options.emplace_back("kiln_conformance_no_such_option", "1");
  kiln_status code = KILN_OK;
  const std::string error = p.create(options, KILN_ABI_MINOR, &code);
  if (error.empty())
    return fail("an unknown option was accepted silently (a typo in a config would be lost)");
  if (code != KILN_STATUS_INVALID_ARGUMENT)
    return fail("refused with status " + std::to_string(code) + ", not INVALID_ARGUMENT: " + error);
  if (error.find("kiln_conformance_no_such_option") == std::string::npos)
    return fail("refused without naming the option: " + error);
  return pass(error);
}

Finding error_objects(const Context& c) {
  Created made = created(c);
  if (!made.error.empty()) return fail(made.error);
  RawPlugin& p = *made.plugin;
  const uint32_t n = p.device_count();
  kiln_device_info info{};
  info.struct_size = sizeof info;
  kiln_error* e = p.table()->device_info(p.instance(), n + 3, &info);
  if (!e)
    return fail("device_info of device " + std::to_string(n + 3) + " (of " + std::to_string(n) +
                ") succeeded");
  const kiln_status code = p.table()->error_code(e);
  const char* message = p.table()->error_message(e);
  const std::string text = message ? message : "";
  p.table()->error_destroy(e);
  if (code <= KILN_OK || code > KILN_STATUS_INTERNAL)
    return fail("error_code gave " + std::to_string(code) + ", not a kiln_status");
  if (text.empty()) return fail("an error without a message");
  return pass("device " + std::to_string(n + 3) + ": status " + std::to_string(code) + ", \"" +
              text + "\"");
}

// Fills a struct the plugin writes, given a smaller struct_size than its own, and checks that
// nothing past that size changed.
template <class T, class Call>
std::string writes_within(size_t size, Call call) {
  std::vector<unsigned char> buffer(sizeof(T) + 64, 0xAB);
  auto* s = reinterpret_cast<T*>(buffer.data());
  s->struct_size = size;
  call(s);
  for (size_t i = size; i < buffer.size(); ++i)
    if (buffer[i] != 0xAB)
      return "wrote byte " + std::to_string(i) + " past the struct_size " + std::to_string(size);
  return "";
}

Finding attributes(const Context& c) {
  Created made = created(c);
  if (!made.error.empty()) return fail(made.error);
  RawPlugin& p = *made.plugin;
  kiln_plugin_attributes a{};
  a.struct_size = sizeof a;
  if (std::string e = p.take(p.table()->get_attributes(p.instance(), &a)); !e.empty())
    return fail("get_attributes: " + e);
  const std::map<std::string, const char*> fields = {
      {"name", a.name},
      {"vendor", a.vendor},
      {"version", a.version},
      {"kir_versions", a.kir_versions},
      {"artifact_format", a.artifact_format},
      {"compiler_fingerprint", a.compiler_fingerprint}};
  for (const auto& [field, value] : fields)
    if (!value || !*value) return fail(field + " is empty");
  if (std::string(a.kir_versions).find("kir/1") == std::string::npos)
    return fail("kir_versions '" + std::string(a.kir_versions) + "' lacks kir/1");
  const std::string within = writes_within<kiln_plugin_attributes>(
      offsetof(kiln_plugin_attributes, vendor),
      [&](kiln_plugin_attributes* s) { p.take(p.table()->get_attributes(p.instance(), s)); });
  if (!within.empty()) return fail("get_attributes for an older host " + within);
  return pass(std::string(a.name) + " " + a.version + " (" + a.vendor + "), " + a.kir_versions +
              ", artifacts " + a.artifact_format);
}

Finding device_properties(const Context& c) {
  Created made = created(c);
  if (!made.error.empty()) return fail(made.error);
  RawPlugin& p = *made.plugin;
  const uint32_t n = p.device_count();
  if (n == 0) return skip("the plugin reports no devices");
  const std::map<std::string, kiln_property_type> known = {
      {"kind", KILN_PROPERTY_STRING},
      {"name", KILN_PROPERTY_STRING},
      {"arch", KILN_PROPERTY_STRING},
      {"memory_bytes", KILN_PROPERTY_INT},
      {"compute_units", KILN_PROPERTY_INT},
      {"warp_width", KILN_PROPERTY_INT},
      {"shared_memory_bytes", KILN_PROPERTY_INT},
      {"bandwidth_gbps", KILN_PROPERTY_FLOAT},
      {"peak_gflops_f32", KILN_PROPERTY_FLOAT}};
  std::string seen;
  for (uint32_t d = 0; d < n; ++d) {
    kiln_device_info info{};
    info.struct_size = sizeof info;
    if (std::string e = p.take(p.table()->device_info(p.instance(), d, &info)); !e.empty())
      return fail("device_info(" + std::to_string(d) + "): " + e);
    if (!info.kind || !*info.kind || !info.name || !*info.name)
      return fail("device " + std::to_string(d) + " has no kind or name");
    if (info.num_properties > 0 && (!info.properties || info.properties->struct_size == 0))
      return fail("device " + std::to_string(d) + ": properties without a struct_size");
    const auto* bytes = reinterpret_cast<const unsigned char*>(info.properties);
    const size_t stride = info.num_properties > 0 ? info.properties->struct_size : 0;
    int found = 0;
    for (size_t i = 0; i < info.num_properties; ++i) {
      // A property of an older plugin may be smaller than this kit's: read what it has.
      kiln_property read{};
      std::memcpy(&read, bytes + i * stride, std::min(stride, sizeof read));
      const kiln_property* prop = &read;
      if (!prop->key) return fail("a property without a key");
      auto it = known.find(prop->key);
      if (it == known.end()) continue;
      ++found;
      if (prop->type != it->second)
        return fail(std::string("property ") + prop->key + " has type " +
                    std::to_string(prop->type) + ", the ABI says " + std::to_string(it->second));
      if (prop->type == KILN_PROPERTY_STRING && !prop->string_value)
        return fail(std::string("property ") + prop->key + " is a NULL string");
    }
    const std::string within = writes_within<kiln_device_info>(
        offsetof(kiln_device_info, name),
        [&](kiln_device_info* s) { p.take(p.table()->device_info(p.instance(), d, s)); });
    if (!within.empty()) return fail("device_info for an older host " + within);
    seen += (seen.empty() ? "" : "; ") + std::string(info.kind) + ":" + std::to_string(d) + " " +
            info.name + " (" + std::to_string(found) + " well-known properties)";
  }
  return pass(seen);
}

Finding null_tolerance(const Context& c) {
  RawPlugin p(c.path);
  if (!p.table()) return fail("no table");
  const kiln_plugin_api& a = *p.table();
  a.error_destroy(nullptr);
  a.blob_destroy(nullptr);
  a.plugin_destroy(nullptr);
  if (a.executable_destroy) a.executable_destroy(nullptr);
  if (a.stream_destroy) a.stream_destroy(nullptr);
  if (a.event_destroy) a.event_destroy(nullptr);
  return pass("every destroy function took NULL");
}

Finding blob_ownership(const Context& c) {
  Created made = created(c);
  if (!made.error.empty()) return fail(made.error);
  RawPlugin& p = *made.plugin;
  if (!p.table()->extern_names) return skip("no extern_names: no blob to check");
  kiln_blob* blob = nullptr;
  if (std::string e = p.take(p.table()->extern_names(p.instance(), &blob)); !e.empty())
    return skip("extern_names: " + e);
  if (!blob) return fail("extern_names succeeded without a blob");
  const size_t size = p.table()->blob_size(blob);
  if (size > 0 && !p.table()->blob_data(blob))
    return fail("a blob of " + std::to_string(size) + " bytes with no data");
  const std::string text = p.take(blob);
  return pass("extern_names: " + std::to_string(size) + " bytes, freed by blob_destroy");
}

}  // namespace

void check_abi(const Context& c, Report& report) {
  const std::vector<std::pair<const char*, Finding (*)(const Context&)>> checks = {
      {"entry point and table", entry_point},
      {"required functions", required_functions},
      {"a host of another major is answered without a crash", other_major},
      {"minor versions negotiated down", minor_negotiation},
      {"an unknown option is refused by name", unknown_option},
      {"error objects", error_objects},
      {"attributes", attributes},
      {"device properties", device_properties},
      {"destroy functions take NULL", null_tolerance},
      {"blobs", blob_ownership}};
  for (const auto& [name, check] : checks)
    report.add("abi", name, run_isolated([&] { return check(c); }, c.timeout_seconds));
}

}  // namespace kiln::conformance
