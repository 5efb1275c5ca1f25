// The null plugin: a skeleton to copy. It loads, names itself, reports no devices, and
// answers KILN_STATUS_UNIMPLEMENTED to everything else. Replace one function at a time;
// set a pointer to NULL instead if your backend will never support that function.
#include <kiln/plugin.hpp>

struct kiln_plugin {
  kiln::sdk::HostLog log;
};

namespace {

using kiln::sdk::guard;
using kiln::sdk::unimplemented;

kiln_error* plugin_create(const kiln_plugin_create_args* args, kiln_plugin** out) {
  return guard([&] {
    const auto create = kiln::sdk::read_struct(args);
    kiln::sdk::Options(create.options, create.num_options).reject_unknown({});
    *out = new kiln_plugin{kiln::sdk::HostLog(create.log, create.log_user_data)};
  });
}

void plugin_destroy(kiln_plugin* plugin) {
  delete plugin;
}

kiln_error* get_attributes(kiln_plugin*, kiln_plugin_attributes* out) {
  return guard([&] {
    kiln_plugin_attributes attributes{};
    attributes.struct_size = sizeof(attributes);
    attributes.name = "null";
    attributes.vendor = "kiln SDK template";
    attributes.version = "0.1.0";
    attributes.kir_versions = "kir/1";
    attributes.artifact_format = "none";
    attributes.compiler_fingerprint = "null-0.1.0";
    attributes.thread_safety = KILN_THREAD_SAFE_COMPILE | KILN_THREAD_SAFE_LAUNCH;
    kiln::sdk::write_struct(out, attributes);
  });
}

kiln_error* device_count(kiln_plugin*, uint32_t* out) {
  *out = 0;
  return nullptr;
}

kiln_error* device_info(kiln_plugin*, uint32_t, kiln_device_info*) {
  return kiln::sdk::make_error(KILN_STATUS_NOT_FOUND, "the null plugin has no devices");
}

kiln_plugin_api make_api() {
  kiln_plugin_api api = kiln::sdk::api_table();
  api.plugin_create = plugin_create;
  api.plugin_destroy = plugin_destroy;
  api.get_attributes = get_attributes;
  api.device_count = device_count;
  api.device_info = device_info;
  api.supports = [](kiln_plugin*, uint32_t, const char*, size_t, int*, kiln_blob**) {
    return unimplemented("supports");
  };
  api.tuning_space = [](kiln_plugin*, uint32_t, const char*, size_t, kiln_blob**) {
    return unimplemented("tuning_space");
  };
  api.compile = [](kiln_plugin*, const kiln_compile_args*, kiln_blob**, kiln_blob**) {
    return unimplemented("compile");
  };
  api.load = [](kiln_plugin*, uint32_t, const void*, size_t, kiln_executable**) {
    return unimplemented("load");
  };
  api.executable_destroy = [](kiln_executable*) {};
  api.launch = [](kiln_executable*, const kiln_launch_args*) { return unimplemented("launch"); };
  api.mem_alloc = [](kiln_plugin*, uint32_t, uint64_t, uint64_t, uint64_t*) {
    return unimplemented("mem_alloc");
  };
  api.mem_free = [](kiln_plugin*, uint32_t, uint64_t) { return unimplemented("mem_free"); };
  api.copy_host_to_device = [](kiln_plugin*, uint32_t, kiln_stream*, uint64_t, const void*,
                               uint64_t) { return unimplemented("copy_host_to_device"); };
  api.copy_device_to_host = [](kiln_plugin*, uint32_t, kiln_stream*, void*, uint64_t, uint64_t) {
    return unimplemented("copy_device_to_host");
  };
  api.copy_device_to_device = [](kiln_plugin*, uint32_t, kiln_stream*, uint64_t, uint64_t,
                                 uint64_t) { return unimplemented("copy_device_to_device"); };
  api.memory_stats = [](kiln_plugin*, uint32_t, kiln_memory_stats*) {
    return unimplemented("memory_stats");
  };
  api.stream_create = [](kiln_plugin*, uint32_t, kiln_stream**) {
    return unimplemented("stream_create");
  };
  api.stream_destroy = [](kiln_stream*) {};
  api.stream_synchronize = [](kiln_stream*) { return unimplemented("stream_synchronize"); };
  api.event_create = [](kiln_plugin*, uint32_t, kiln_event**) {
    return unimplemented("event_create");
  };
  api.event_destroy = [](kiln_event*) {};
  api.event_record = [](kiln_event*, kiln_stream*) { return unimplemented("event_record"); };
  api.event_synchronize = [](kiln_event*) { return unimplemented("event_synchronize"); };
  api.event_elapsed_ms = [](const kiln_event*, const kiln_event*, double*) {
    return unimplemented("event_elapsed_ms");
  };
  api.extern_names = [](kiln_plugin*, kiln_blob**) { return unimplemented("extern_names"); };
  api.extern_call = [](kiln_plugin*, uint32_t, const kiln_launch_args*) {
    return unimplemented("extern_call");
  };
  return api;
}

}  // namespace

extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_get_api(uint32_t host_major,
                                                                         uint32_t) {
  static const kiln_plugin_api api = make_api();
  return host_major == KILN_ABI_MAJOR ? &api : nullptr;
}
