// The cpp_openmp plugin: the host CPU as one device. This file serves the device, memory,
// copies, streams and events; code_functions.cpp generates, compiles and runs kernels.
// Execution on the CPU is synchronous, so a stream is an ordering token and an event is
// the time at which it was recorded.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <kiln/plugin.hpp>
#include <memory>
#include <string>
#include <vector>

#include "code_functions.h"
#include "compiler.h"
#include "plugin_state.h"
#include "precompiled_header.h"
#include "roofline.h"

struct kiln_stream {};

struct kiln_event {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};

namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

constexpr const char* kVersion = "0.1.0";

uint32_t parse_threads(const std::string& text, uint32_t cores) {
  if (text == "auto") return cores;
  const bool digits = !text.empty() && text.size() <= 4 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  const uint32_t n = digits ? static_cast<uint32_t>(std::stoul(text)) : 0;
  if (n == 0) {
    throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                  "option 'threads' must be 'auto' or a positive integer, got '" + text + "'");
  }
  return n;
}

// `auto` is the CPU's f32 lanes: 16 with AVX-512 (F, BW and VL: 16-bit lanes and the
// conversions need the last two), 8 with 256-bit vectors, 4 elsewhere. On an AVX-512 EPYC,
// 16 lanes took the wide CPU set from 1.00x to 1.12x Inductor's speed in geomean, as
// Inductor itself runs 512-bit vectors there (docs/cpp-openmp.md). Any width runs on any
// CPU: GCC splits vectors wider than the hardware's, so the suite can test every width on
// every machine.
int parse_vector_width(const std::string& text, const kiln::cpu::CpuInfo& cpu) {
  if (text == "auto") {
    const auto has = [&](const char* f) {
      return std::find(cpu.isa_features.begin(), cpu.isa_features.end(), f) !=
             cpu.isa_features.end();
    };
    if (cpu.simd_width_f32 >= 16 && has("avx512bw") && has("avx512vl")) return 16;
    return cpu.simd_width_f32 >= 8 ? 8 : 4;
  }
  if (text == "1" || text == "4" || text == "8" || text == "16") return std::stoi(text);
  throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                "option 'vector_width' must be auto, 1, 4, 8 or 16, got '" + text + "'");
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

void describe_device(kiln_plugin& plugin) {
  const auto& cpu = plugin.cpu;
  auto& p = plugin.properties;
  p.add_string("kind", "cpu");
  p.add_string("name", cpu.model);
  p.add_string("arch", cpu.arch);
  p.add_int("compute_units", cpu.logical_cores);
  p.add_int("threads", plugin.threads);
  p.add_string("isa", join(cpu.isa_features, ","));
  p.add_int("simd_width_f32", cpu.simd_width_f32);
  p.add_int("vector_width", plugin.vector_width);
  p.add_int("warp_width", 1);
  p.add_int("memory_bytes", static_cast<int64_t>(cpu.memory_bytes));
  p.add_int("l1d_bytes", static_cast<int64_t>(cpu.l1d_bytes));
  p.add_int("l2_bytes", static_cast<int64_t>(cpu.l2_bytes));
  p.add_int("l3_bytes", static_cast<int64_t>(cpu.l3_bytes));
  p.add_int("cache_line_bytes", static_cast<int64_t>(cpu.cache_line_bytes));
  p.add_float("bandwidth_gbps", kiln::cpu::measure_copy_bandwidth_gbps(plugin.threads));
  p.add_float("peak_gflops_f32", kiln::cpu::estimate_peak_gflops_f32(cpu, plugin.threads));
}

void check_device(uint32_t device) {
  if (device != 0) {
    throw Failure(KILN_STATUS_NOT_FOUND,
                  "device " + std::to_string(device) + " does not exist (the CPU is device 0)");
  }
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

void check_range(const kiln_plugin* plugin, uint64_t address, uint64_t bytes, const char* what) {
  if (!plugin->memory.contains(address, bytes)) {
    throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                  std::string(what) + ": " + std::to_string(bytes) + " bytes at " + hex(address) +
                      " are not inside one allocation of this plugin");
  }
}

// OpenBLAS's OpenMP build (linked for mm/bmm) allocates thread state with libgomp when it is
// loaded and frees it only at exit: unmapping it with the plugin would lose that state (a
// leak LeakSanitizer reports) while libgomp's threads, pinned too, still know of it.
void pin_openblas() {
  if (void* h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) dlclose(h);
}

kiln_error* plugin_create(const kiln_plugin_create_args* args, kiln_plugin** out) {
  pin_openblas();
  return guard([&] {
    const auto create = kiln::sdk::read_struct(args);
    const kiln::sdk::Options options(create.options, create.num_options);
    options.reject_unknown(
        {"compiler", "flags", "threads", "vector_width", "onednn", "header_cache"});
    auto plugin = std::make_unique<kiln_plugin>();
    plugin->log = kiln::sdk::HostLog(create.log, create.log_user_data);
    plugin->compiler = options.get("compiler", "g++");
    plugin->flags = options.get_list("flags", {"-O3", "-march=native", "-fopenmp"});
    plugin->shipped = kiln::cpu::shipped_library_flags(kiln::sdk::plugin_binary_path());
    plugin->cpu = kiln::cpu::read_cpu_info();
    plugin->threads = parse_threads(options.get("threads", "auto"), plugin->cpu.logical_cores);
    plugin->vector_width = parse_vector_width(options.get("vector_width", "auto"), plugin->cpu);
    plugin->onednn_option = options.get("onednn", "");
    const std::string header_cache = options.get("header_cache", "auto");
    if (header_cache == "auto")
      plugin->header_cache = kiln::cpu::default_header_cache();
    else if (header_cache != "off")
      plugin->header_cache = header_cache;
    try {
      plugin->compiler_version = kiln::cpu::compiler_version(plugin->compiler);
      plugin->fingerprint = kiln::cpu::compiler_fingerprint(*plugin);
    } catch (const std::exception& e) {
      throw Failure(KILN_STATUS_NOT_FOUND, e.what());
    }
    describe_device(*plugin);
    plugin->log(KILN_LOG_DEBUG,
                "cpu: " + plugin->cpu.model + ", " + std::to_string(plugin->threads) + " threads");
    *out = plugin.release();
  });
}

kiln_error* get_attributes(kiln_plugin* plugin, kiln_plugin_attributes* out) {
  return guard([&] {
    kiln_plugin_attributes a{};
    a.struct_size = sizeof(a);
    a.name = "cpp_openmp";
    a.vendor = "kiln";
    a.version = kVersion;
    a.kir_versions = "kir/1";
    a.artifact_format = "elf-shared-object";
    a.compiler_fingerprint = plugin->fingerprint.c_str();
    a.thread_safety = KILN_THREAD_SAFE_COMPILE | KILN_THREAD_SAFE_LAUNCH;
    kiln::sdk::write_struct(out, a);
  });
}

kiln_error* device_info(kiln_plugin* plugin, uint32_t device, kiln_device_info* out) {
  return guard([&] {
    check_device(device);
    kiln_device_info info{};
    info.struct_size = sizeof(info);
    info.kind = "cpu";
    info.name = plugin->cpu.model.c_str();
    info.properties = plugin->properties.data();
    info.num_properties = plugin->properties.size();
    kiln::sdk::write_struct(out, info);
  });
}

kiln_error* mem_alloc(kiln_plugin* plugin, uint32_t device, uint64_t bytes, uint64_t alignment,
                      uint64_t* address) {
  return guard([&] {
    check_device(device);
    *address = plugin->memory.allocate(bytes, alignment);
    if (*address == 0) {
      throw Failure(KILN_STATUS_OUT_OF_MEMORY, "cannot allocate " + std::to_string(bytes) +
                                                   " bytes aligned to " +
                                                   std::to_string(alignment));
    }
  });
}

kiln_error* mem_free(kiln_plugin* plugin, uint32_t device, uint64_t address) {
  return guard([&] {
    check_device(device);
    if (!plugin->memory.free(address)) {
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "mem_free of an address this plugin did not allocate");
    }
  });
}

kiln_error* mem_register(kiln_plugin* plugin, uint32_t device, uint64_t address, uint64_t bytes) {
  return guard([&] {
    check_device(device);
    if (address == 0 || address + bytes < address)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "mem_register of an empty or wrapping range");
    plugin->memory.register_external(address, bytes);
  });
}

kiln_error* mem_unregister(kiln_plugin* plugin, uint32_t device, uint64_t address, uint64_t bytes) {
  return guard([&] {
    check_device(device);
    if (!plugin->memory.unregister_external(address, bytes))
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "mem_unregister of a range that is not registered");
  });
}

kiln_error* copy_h2d(kiln_plugin* plugin, uint32_t device, kiln_stream*, uint64_t dst,
                     const void* src, uint64_t bytes) {
  return guard([&] {
    check_device(device);
    check_range(plugin, dst, bytes, "copy_host_to_device destination");
    if (bytes > 0) std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  });
}

kiln_error* copy_d2h(kiln_plugin* plugin, uint32_t device, kiln_stream*, void* dst, uint64_t src,
                     uint64_t bytes) {
  return guard([&] {
    check_device(device);
    check_range(plugin, src, bytes, "copy_device_to_host source");
    if (bytes > 0) std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  });
}

kiln_error* copy_d2d(kiln_plugin* plugin, uint32_t device, kiln_stream*, uint64_t dst, uint64_t src,
                     uint64_t bytes) {
  return guard([&] {
    check_device(device);
    check_range(plugin, dst, bytes, "copy_device_to_device destination");
    check_range(plugin, src, bytes, "copy_device_to_device source");
    if (bytes > 0)
      std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  });
}

kiln_error* memory_stats(kiln_plugin* plugin, uint32_t device, kiln_memory_stats* out) {
  return guard([&] {
    check_device(device);
    const auto stats = plugin->memory.stats();
    kiln_memory_stats s{};
    s.struct_size = sizeof(s);
    s.bytes_in_use = stats.bytes_in_use;
    s.peak_bytes_in_use = stats.peak_bytes_in_use;
    s.bytes_limit = plugin->cpu.memory_bytes;
    s.num_allocations = stats.num_allocations;
    kiln::sdk::write_struct(out, s);
  });
}

void require_recorded(const kiln_event& e, const char* what) {
  if (!e.recorded)
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, std::string(what) + " of an event never recorded");
}

kiln_error* event_elapsed_ms(const kiln_event* start, const kiln_event* end, double* ms) {
  return guard([&] {
    if (!start->recorded || !end->recorded) {
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "event_elapsed_ms of an event never recorded");
    }
    *ms = std::chrono::duration<double, std::milli>(end->time - start->time).count();
  });
}

kiln_plugin_api make_api() {
  kiln_plugin_api api = kiln::sdk::api_table();
  api.plugin_create = plugin_create;
  api.plugin_destroy = [](kiln_plugin* p) { delete p; };
  api.get_attributes = get_attributes;
  api.device_count = [](kiln_plugin*, uint32_t* out) -> kiln_error* {
    *out = 1;
    return nullptr;
  };
  api.device_info = device_info;
  api.mem_alloc = mem_alloc;
  api.mem_free = mem_free;
  api.mem_register = mem_register;
  api.mem_unregister = mem_unregister;
  api.copy_host_to_device = copy_h2d;
  api.copy_device_to_host = copy_d2h;
  api.copy_device_to_device = copy_d2d;
  api.memory_stats = memory_stats;
  api.stream_create = [](kiln_plugin*, uint32_t device, kiln_stream** out) {
    return guard([&] {
      check_device(device);
      *out = new kiln_stream{};
    });
  };
  api.stream_destroy = [](kiln_stream* s) { delete s; };
  api.stream_synchronize = [](kiln_stream*) -> kiln_error* { return nullptr; };
  api.event_create = [](kiln_plugin*, uint32_t device, kiln_event** out) {
    return guard([&] {
      check_device(device);
      *out = new kiln_event{};
    });
  };
  api.event_destroy = [](kiln_event* e) { delete e; };
  api.event_record = [](kiln_event* e, kiln_stream*) -> kiln_error* {
    e->time = std::chrono::steady_clock::now();
    e->recorded = true;
    return nullptr;
  };
  api.event_synchronize = [](kiln_event*) -> kiln_error* { return nullptr; };
  api.event_elapsed_ms = event_elapsed_ms;
  // ABI 1.2. Work is done when a call returns: one order for every stream (no stream or copy
  // flags), and a recorded event has always passed. 1.3: host memory shared by descriptor.
  api.device_capabilities = [](kiln_plugin*, uint32_t device, uint64_t* flags) {
    return guard([&] {
      check_device(device);
      *flags = KILN_CAPABILITY_IMPORT_POSIX_FD;
    });
  };
  api.mem_import = [](kiln_plugin* p, uint32_t device, const kiln_mem_import_desc* desc,
                      uint64_t* address) {
    return guard([&] {
      check_device(device);
      const auto import = p->imports.map(desc, "cpp_openmp");
      p->memory.register_external(import.address, import.bytes);
      *address = import.address;
    });
  };
  api.mem_release_import = [](kiln_plugin* p, uint32_t device, uint64_t address) {
    return guard([&] {
      check_device(device);
      const auto import = p->imports.unmap(address);
      p->memory.unregister_external(import.address, import.bytes);
    });
  };
  api.stream_wait_event = [](kiln_stream*, kiln_event* e) {
    return guard([&] { require_recorded(*e, "stream_wait_event"); });
  };
  api.event_query = [](kiln_event* e, int* done) {
    return guard([&] {
      require_recorded(*e, "event_query");
      *done = 1;
    });
  };
  kiln::cpu::add_code_functions(api);
  return api;
}

}  // namespace

extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_get_api(uint32_t host_major,
                                                                         uint32_t) {
  static const kiln_plugin_api api = make_api();
  return host_major == KILN_ABI_MAJOR ? &api : nullptr;
}
