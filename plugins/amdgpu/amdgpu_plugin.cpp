// The amdgpu plugin's ABI table: devices through the HIP runtime (opened at run time), memory,
// events; the code half (compile, load, launch) is in amdgpu_code.cpp. All work goes to each
// device's null stream, as in ptx.
#include <dlfcn.h>

#include <cstdlib>
#include <kiln/plugin.hpp>
#include <memory>

#include "plugins/amdgpu/amdgpu_state.h"
#include "plugins/amdgpu/device_libs.h"
#include "plugins/amdgpu/kfd_arch.h"

using kiln::sdk::Failure;
using kiln::sdk::guard;

kiln::amdgpu::Device& kiln_plugin::use(uint32_t device) {
  if (device >= devices.size()) {
    throw Failure(KILN_STATUS_NOT_FOUND, "device " + std::to_string(device) + " does not exist (" +
                                             std::to_string(devices.size()) + " AMD GPUs" +
                                             (no_runtime.empty() ? "" : "; " + no_runtime) + ")");
  }
  check(hip.hipSetDevice(devices[device].ordinal), "hipSetDevice");
  return devices[device];
}

void kiln_plugin::check(kiln::amdgpu::hipError r, const std::string& what) const {
  if (r != 0) throw Failure(KILN_STATUS_INTERNAL, what + ": " + kiln::amdgpu::hip_error(hip, r));
}

kiln::amdgpu::RocblasLibrary& kiln_plugin::matmul_library() {
  if (rocblas_tried || devices.empty()) return rocblas;
  rocblas_tried = true;
  std::string why;
  rocblas = kiln::amdgpu::RocblasLibrary::open(rocblas_option, why);
  if (rocblas.available())
    log(KILN_LOG_INFO, "amdgpu: matmuls through " + rocblas.path());
  else
    log(KILN_LOG_INFO, "amdgpu: no rocBLAS (" + why + "); matmuls become generated kernels");
  return rocblas;
}

kiln::amdgpu::AmdgpuOptions kiln_plugin::options_for(uint32_t device) {
  kiln::amdgpu::AmdgpuOptions o;
  const kiln::amdgpu::Device& d = use(device);
  o.arch = arch != "auto" ? arch : d.arch;
  if (o.arch.empty())
    throw Failure(KILN_STATUS_UNIMPLEMENTED,
                  "the ISA of device " + std::to_string(device) +
                      " is unknown (the driver's topology did not say, or *_VISIBLE_DEVICES "
                      "reorders the GPUs): set the amdgpu plugin's `arch` option");
  o.wave = wave;
  o.device_libs = device_libs;
  o.tuning = tuning;
  return o;
}

namespace {

constexpr const char* kVersion = "0.1.0";

int attribute(const kiln_plugin& p, int ordinal, int which) {
  int v = 0;
  return p.hip.hipDeviceGetAttribute(&v, which, ordinal) == 0 ? v : 0;
}

void describe(kiln_plugin& p, kiln::amdgpu::Device& dev) {
  using namespace kiln::amdgpu;
  size_t memory = 0;
  p.hip.hipDeviceTotalMem(&memory, dev.ordinal);
  const int cus = attribute(p, dev.ordinal, kMultiprocessorCount);
  const double clock_ghz = attribute(p, dev.ordinal, kClockRateKHz) / 1e6;
  const double memory_clock_ghz = attribute(p, dev.ordinal, kMemoryClockRateKHz) / 1e6;
  const int bus_bits = attribute(p, dev.ordinal, kMemoryBusWidth);
  auto& props = dev.properties;
  props.add_string("kind", "gpu");
  props.add_string("name", dev.name);
  props.add_string("arch", dev.arch.empty() ? "unknown" : dev.arch);
  props.add_int("memory_bytes", static_cast<int64_t>(memory));
  props.add_int("compute_units", cus);
  props.add_int("warp_width", attribute(p, dev.ordinal, kWarpSize));
  props.add_int("shared_memory_bytes", attribute(p, dev.ordinal, kMaxSharedMemoryPerBlock));
  props.add_int("l2_bytes", attribute(p, dev.ordinal, kL2CacheSize));
  props.add_int("max_threads_per_block", attribute(p, dev.ordinal, kMaxThreadsPerBlock));
  // Double data rate: two transfers per memory clock.
  props.add_float("bandwidth_gbps", memory_clock_ghz * 2 * bus_bits / 8);
  // 64 f32 lanes per compute unit, a fused multiply-add each per clock.
  props.add_float("peak_gflops_f32", cus * 64 * 2 * clock_ghz);
}

// HIP numbers the GPUs as the driver's topology lists them unless a *_VISIBLE_DEVICES
// setting picks or reorders them: only then is the topology's ISA per device trusted.
bool topology_order_holds() {
  for (const char* name : {"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
                           "GPU_DEVICE_ORDINAL"})
    if (const char* v = std::getenv(name); v && *v) return false;
  return true;
}

void open_devices(kiln_plugin& p, const std::string& runtime_path) {
  p.no_runtime = kiln::amdgpu::open_hip_runtime(p.hip, runtime_path);
  if (!p.no_runtime.empty()) {
    p.log(KILN_LOG_INFO, "amdgpu: " + p.no_runtime + "; no devices");
    return;
  }
  int count = 0;
  if (const kiln::amdgpu::hipError r = p.hip.hipGetDeviceCount(&count); r != 0 || count <= 0) {
    p.no_runtime = r != 0 ? "hipGetDeviceCount: " + kiln::amdgpu::hip_error(p.hip, r)
                          : std::string("the HIP runtime sees no AMD GPU");
    p.log(KILN_LOG_INFO, "amdgpu: " + p.no_runtime + "; no devices");
    return;
  }
  const std::vector<std::string> archs = kiln::amdgpu::kfd_gpu_archs();
  const bool trusted = topology_order_holds() && archs.size() == static_cast<size_t>(count);
  p.devices.resize(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    kiln::amdgpu::Device& d = p.devices[static_cast<size_t>(i)];
    d.ordinal = i;
    char name[256] = {};
    p.hip.hipDeviceGetName(name, sizeof name - 1, i);
    d.name = name;
    if (trusted) d.arch = archs[static_cast<size_t>(i)];
    describe(p, d);
  }
}

void destroy(kiln_plugin* p) {
  if (!p) return;
  // rocBLAS's handles go before the runtime they use, each on its own device.
  p->rocblas.release_handles([&](uint32_t d) { p->hip.hipSetDevice(p->devices[d].ordinal); });
  for (const auto& [address, device] : p->memory.live()) {
    p->hip.hipSetDevice(p->devices[device].ordinal);
    p->hip.hipFree(reinterpret_cast<void*>(address));
  }
  if (p->hip.library) kiln::amdgpu::close_hip_runtime(p->hip);
  delete p;
}

// LLVM, linked in statically, keeps process-wide registries that cannot be torn down and set
// up again: the plugin stays mapped once loaded.
void stay_loaded() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&stay_loaded), &info) != 0 && info.dli_fname) {
    if (void* self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) dlclose(self);
  }
}

kiln_error* plugin_create(const kiln_plugin_create_args* args, kiln_plugin** out) {
  return guard([&] {
    const auto create = kiln::sdk::read_struct(args);
    const kiln::sdk::Options options(create.options, create.num_options);
    std::vector<std::string> known = {"arch", "wave", "device_libs", "hip", "rocblas"};
    known.insert(known.end(), kiln::gpu::tuning_keys().begin(), kiln::gpu::tuning_keys().end());
    options.reject_unknown(known);
    auto plugin = std::unique_ptr<kiln_plugin, void (*)(kiln_plugin*)>(new kiln_plugin, destroy);
    plugin->log = kiln::sdk::HostLog(create.log, create.log_user_data);
    plugin->device_libs = options.get("device_libs", kiln::amdgpu::find_device_libs());
    std::string knobs;
    for (const std::string& key : kiln::gpu::tuning_keys())
      if (options.has(key)) knobs += key + "=" + options.get(key, "") + " ";
    try {
      plugin->tuning = kiln::gpu::parse_tuning(knobs, plugin->tuning);
    } catch (const std::invalid_argument& e) {
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, e.what());
    }
    plugin->arch = options.get("arch", "auto");
    if (plugin->arch != "auto" && !kiln::amdgpu::known_arch(plugin->arch))
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "arch is 'auto' or an AMDGPU ISA LLVM knows (gfx90a, gfx942, gfx1100, ...), "
                    "got '" +
                        plugin->arch + "'");
    const std::string wave = options.get("wave", "auto");
    if (wave != "auto" && wave != "32" && wave != "64")
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "wave is auto, 32 or 64, got '" + wave + "'");
    plugin->wave = wave == "auto" ? 0 : static_cast<unsigned>(std::stoul(wave));
    if (plugin->tuning.block_size % 64 != 0)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "block_size must be a multiple of 64 on AMD GPUs (a wave64 block)");
    plugin->fingerprint = "amdgpu-codegen-1@" + kiln::sdk::plugin_binary_digest() + "; " +
                          kiln::gpu::tuning_line(plugin->tuning) +
                          "; device_libs=" + plugin->device_libs + "; arch=" + plugin->arch +
                          "; wave=" + wave;
    plugin->rocblas_option = options.get("rocblas", "");
    open_devices(*plugin, options.get("hip", ""));
    *out = plugin.release();
  });
}

kiln_error* get_attributes(kiln_plugin* plugin, kiln_plugin_attributes* out) {
  return guard([&] {
    kiln_plugin_attributes a{};
    a.struct_size = sizeof(a);
    a.name = "amdgpu";
    a.vendor = "kiln";
    a.version = kVersion;
    a.kir_versions = "kir/1";
    a.artifact_format = "hsaco";
    a.compiler_fingerprint = plugin->fingerprint.c_str();
    a.thread_safety = KILN_THREAD_SAFE_COMPILE | KILN_COMPILE_PER_KERNEL;
    kiln::sdk::write_struct(out, a);
  });
}

kiln_error* device_info(kiln_plugin* plugin, uint32_t device, kiln_device_info* out) {
  return guard([&] {
    const kiln::amdgpu::Device& d = plugin->use(device);
    kiln_device_info info{};
    info.struct_size = sizeof(info);
    info.kind = "rocm";
    info.name = d.name.c_str();
    info.properties = d.properties.data();
    info.num_properties = d.properties.size();
    kiln::sdk::write_struct(out, info);
  });
}

kiln_error* mem_alloc(kiln_plugin* p, uint32_t device, uint64_t bytes, uint64_t alignment,
                      uint64_t* address) {
  return guard([&] {
    p->use(device);
    // HIP aligns allocations to at least 256 bytes.
    if (alignment > 256 || (alignment & (alignment - 1)) != 0)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "alignment must be a power of two up to 256");
    void* ptr = nullptr;
    if (p->hip.hipMalloc(&ptr, std::max<uint64_t>(bytes, 1)) != 0 || !ptr)
      throw Failure(KILN_STATUS_OUT_OF_MEMORY,
                    "cannot allocate " + std::to_string(bytes) + " bytes");
    *address = reinterpret_cast<uint64_t>(ptr);
    p->memory.add(device, *address, bytes);
  });
}

kiln_error* mem_free(kiln_plugin* p, uint32_t device, uint64_t address) {
  return guard([&] {
    p->use(device);
    p->memory.remove(device, address);
    p->check(p->hip.hipDeviceSynchronize(), "waiting for the device");
    p->check(p->hip.hipFree(reinterpret_cast<void*>(address)), "hipFree");
  });
}

void* at(uint64_t address) {
  return reinterpret_cast<void*>(address);
}

kiln_plugin_api make_api() {
  kiln_plugin_api api = kiln::sdk::api_table();
  api.plugin_create = plugin_create;
  api.plugin_destroy = destroy;
  api.get_attributes = get_attributes;
  api.device_count = [](kiln_plugin* p, uint32_t* out) -> kiln_error* {
    *out = static_cast<uint32_t>(p->devices.size());
    return nullptr;
  };
  api.device_info = device_info;
  api.mem_alloc = mem_alloc;
  api.mem_free = mem_free;
  kiln::kir_support::add_memory_functions(api);
  api.copy_host_to_device = [](kiln_plugin* p, uint32_t device, kiln_stream*, uint64_t dst,
                               const void* src, uint64_t bytes) {
    return guard([&] {
      p->use(device);
      p->memory.check_range(device, dst, bytes, "copy_host_to_device destination");
      if (bytes > 0) p->check(p->hip.hipMemcpyHtoD(at(dst), src, bytes), "hipMemcpyHtoD");
    });
  };
  api.copy_device_to_host = [](kiln_plugin* p, uint32_t device, kiln_stream*, void* dst,
                               uint64_t src, uint64_t bytes) {
    return guard([&] {
      p->use(device);
      p->memory.check_range(device, src, bytes, "copy_device_to_host source");
      if (bytes > 0) p->check(p->hip.hipMemcpyDtoH(dst, at(src), bytes), "hipMemcpyDtoH");
      kiln::amdgpu::finish_launches(*p, device);
    });
  };
  api.copy_device_to_device = [](kiln_plugin* p, uint32_t device, kiln_stream*, uint64_t dst,
                                 uint64_t src, uint64_t bytes) {
    return guard([&] {
      p->use(device);
      p->memory.check_range(device, dst, bytes, "copy_device_to_device destination");
      p->memory.check_range(device, src, bytes, "copy_device_to_device source");
      if (bytes > 0) {
        p->check(p->hip.hipMemcpyDtoD(at(dst), at(src), bytes), "hipMemcpyDtoD");
        kiln::amdgpu::finish_launches(*p, device);
      }
    });
  };
  kiln::amdgpu::add_code_functions(api);
  kiln::amdgpu::add_extern_functions(api);
  return api;
}

}  // namespace

extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_get_api(uint32_t host_major,
                                                                         uint32_t) {
  stay_loaded();
  static const kiln_plugin_api api = make_api();
  return host_major == KILN_ABI_MAJOR ? &api : nullptr;
}
