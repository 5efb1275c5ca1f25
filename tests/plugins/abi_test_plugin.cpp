// One small plugin, built once per KILN_TEST_* define, each build misbehaving in one way
// the host must handle: an older or newer minor, another major, a failing init, a
// missing required function, a declined host, a wrong name, no entry point at all.
#include <cstddef>
#include <kiln/plugin.hpp>
#include <string>

struct kiln_plugin {
  std::string vendor;  // records the negotiated minor, so tests can see it
};

namespace {

using kiln::sdk::guard;

#if defined(KILN_TEST_NEWER_MINOR)
constexpr uint32_t kMinor = KILN_ABI_MINOR + 7;
#else
constexpr uint32_t kMinor = 0;
#endif

#if defined(KILN_TEST_OTHER_MAJOR)
constexpr uint32_t kMajor = KILN_ABI_MAJOR + 1;
#else
constexpr uint32_t kMajor = KILN_ABI_MAJOR;
#endif

// A table from a future minor: ours plus a function the host has never heard of.
struct FutureApi {
  kiln_plugin_api v1;
  kiln_error* (*future_function)(kiln_plugin*);
};

kiln_error* plugin_create(const kiln_plugin_create_args* args, kiln_plugin** out) {
#if defined(KILN_TEST_INIT_FAILS)
  (void)args;
  (void)out;
  return kiln::sdk::make_error(KILN_STATUS_DEVICE_ERROR, "simulated init failure: no device");
#else
  return guard([&] {
    const auto create = kiln::sdk::read_struct(args);
    *out = new kiln_plugin{"negotiated " + std::to_string(create.abi_major) + "." +
                           std::to_string(create.abi_minor)};
  });
#endif
}

kiln_error* get_attributes(kiln_plugin* plugin, kiln_plugin_attributes* out) {
  return guard([&] {
    kiln_plugin_attributes a{};
    a.struct_size = sizeof(a);
#if defined(KILN_TEST_WRONG_NAME)
    a.name = "somebody_else";
#else
    a.name = KILN_TEST_PLUGIN_NAME;
#endif
    a.vendor = plugin->vendor.c_str();
    a.version = "0.0.1";
    a.kir_versions = "kir/1";
    a.artifact_format = "none";
    a.compiler_fingerprint = "test";
    kiln::sdk::write_struct(out, a);
  });
}

[[maybe_unused]] FutureApi make_api() {
  FutureApi table{};
  kiln_plugin_api& api = table.v1;
  api.struct_size = sizeof(api);
  api.abi_major = kMajor;
  api.abi_minor = kMinor;
  kiln::sdk::fill_error_and_blob_functions(api);
  api.plugin_create = plugin_create;
  api.plugin_destroy = [](kiln_plugin* p) { delete p; };
  api.get_attributes = get_attributes;
#if !defined(KILN_TEST_MISSING_REQUIRED)
  api.device_count = [](kiln_plugin*, uint32_t* out) -> kiln_error* {
    *out = 0;
    return nullptr;
  };
#endif
  api.device_info = [](kiln_plugin*, uint32_t, kiln_device_info*) {
    return kiln::sdk::make_error(KILN_STATUS_NOT_FOUND, "no devices");
  };
  api.extern_names = [](kiln_plugin*, kiln_blob** names) {
    return guard([&] { *names = kiln::sdk::make_blob("mm"); });
  };
#if defined(KILN_TEST_OLDER_MINOR)
  // An older plugin's table ends before the externs, which it never knew.
  api.struct_size = offsetof(kiln_plugin_api, extern_names);
#endif
#if defined(KILN_TEST_NEWER_MINOR)
  api.struct_size = sizeof(FutureApi);
  table.future_function = [](kiln_plugin*) -> kiln_error* { return nullptr; };
#endif
  return table;
}

}  // namespace

#if defined(KILN_TEST_NO_ENTRY)
extern "C" KILN_PLUGIN_EXPORT int kiln_not_the_entry_point() {
  return make_api().v1.abi_major;
}
#else
extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_get_api(uint32_t, uint32_t) {
#if defined(KILN_TEST_DECLINES)
  return nullptr;
#else
  static const FutureApi table = make_api();
  return &table.v1;
#endif
}
#endif
