// The ptx plugin's ABI table: devices through the CUDA driver (opened at run time), memory,
// events; the code half (compile, load, launch) is in ptx_code.cpp.
#include <dlfcn.h>

#include <algorithm>
#include <kiln/plugin.hpp>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>

#include "plugins/ptx/ptx_compiler.h"
#include "plugins/ptx/ptx_state.h"

using kiln::sdk::Failure;
using kiln::sdk::guard;

kiln::ptx::Device& kiln_plugin::use(uint32_t device) {
  if (device >= devices.size()) {
    throw Failure(KILN_STATUS_NOT_FOUND, "device " + std::to_string(device) + " does not exist (" +
                                             std::to_string(devices.size()) + " CUDA devices" +
                                             (no_driver.empty() ? "" : "; " + no_driver) + ")");
  }
  check(cuda.cuCtxSetCurrent(devices[device].context), "cuCtxSetCurrent");
  return devices[device];
}

std::string kiln_plugin::arch_for(uint32_t device) {
  const std::string& own = use(device).arch;
  return arch == "auto" ? own : arch;
}

void kiln_plugin::check(kiln::ptx::CUresult r, const std::string& what) const {
  if (r != 0) throw Failure(KILN_STATUS_INTERNAL, what + ": " + kiln::ptx::cuda_error(cuda, r));
}

kiln::ptx::CublasLibrary& kiln_plugin::matmul_library() {
  if (cublas_tried || devices.empty()) return cublas;
  cublas_tried = true;
  std::string why;
  if (cublas_prefetched.valid()) {
    std::tie(cublas, why) = cublas_prefetched.get();
  } else {
    cublas = kiln::ptx::CublasLibrary::open(cublas_option, why);
  }
  if (cublas.available())
    log(KILN_LOG_INFO, "ptx: matmuls through " + cublas.path());
  else
    log(KILN_LOG_INFO, "ptx: no cuBLAS (" + why + "); matmuls become generated kernels");
  return cublas;
}

kiln::ptx::CudnnLibrary& kiln_plugin::conv_library() {
  if (cudnn_tried || devices.empty()) return cudnn;
  cudnn_tried = true;
  std::string why;
  cudnn = kiln::ptx::CudnnLibrary::open(cudnn_option, why);
  cudnn.set_deterministic(deterministic);
  if (cudnn.available())
    log(KILN_LOG_INFO, "ptx: 2-d convolutions through " + cudnn.path());
  else
    log(KILN_LOG_INFO, "ptx: no cuDNN (" + why + "); convolutions become generated kernels");
  return cudnn;
}

namespace {

constexpr const char* kVersion = "0.1.0";

int attribute(const kiln_plugin& p, kiln::ptx::CUdevice d, int which) {
  int v = 0;
  return p.cuda.cuDeviceGetAttribute(&v, which, d) == 0 ? v : 0;
}

void describe(kiln_plugin& p, kiln::ptx::Device& dev) {
  using namespace kiln::ptx;
  const int major = attribute(p, dev.handle, kComputeCapabilityMajor);
  const int minor = attribute(p, dev.handle, kComputeCapabilityMinor);
  dev.arch = "sm_" + std::to_string(major) + std::to_string(minor);
  size_t memory = 0;
  p.cuda.cuDeviceTotalMem(&memory, dev.handle);
  const int sms = attribute(p, dev.handle, kMultiprocessorCount);
  const double clock_ghz = attribute(p, dev.handle, kClockRateKHz) / 1e6;
  const double memory_clock_ghz = attribute(p, dev.handle, kMemoryClockRateKHz) / 1e6;
  const int bus_bits = attribute(p, dev.handle, kGlobalMemoryBusWidth);
  // 128 f32 lanes per multiprocessor from compute capability 8.6 on (8.0 and older: 64).
  const int lanes = major > 8 || (major == 8 && minor >= 6) ? 128 : 64;
  auto& props = dev.properties;
  props.add_string("kind", "gpu");
  props.add_string("name", dev.name);
  props.add_string("arch", dev.arch);
  props.add_int("memory_bytes", static_cast<int64_t>(memory));
  props.add_int("compute_units", sms);
  dev.multiprocessors = std::max(sms, 1);
  props.add_int("warp_width", 32);
  props.add_int("shared_memory_bytes", attribute(p, dev.handle, kSharedMemoryPerBlock));
  // Past 48 KB only where the driver can raise a kernel's limit.
  if (p.cuda.cuFuncSetAttribute)
    dev.shared_optin_bytes = std::max<int64_t>(
        dev.shared_optin_bytes, attribute(p, dev.handle, kSharedMemoryPerBlockOptin));
  props.add_int("l2_bytes", attribute(p, dev.handle, kL2CacheSize));
  props.add_int("max_threads_per_block", attribute(p, dev.handle, kMaxThreadsPerBlock));
  // Double data rate: two transfers per memory clock.
  props.add_float("bandwidth_gbps", memory_clock_ghz * 2 * bus_bits / 8);
  props.add_float("peak_gflops_f32", sms * lanes * 2 * clock_ghz);
}

// With `cublas_prefetch`, cuBLAS starts loading on its own thread once the driver library is
// there: the load then overlaps the driver's initialization.
void open_devices(kiln_plugin& p, bool prefetch_cublas) {
  p.no_driver = kiln::ptx::open_cuda_driver(p.cuda, [&] {
    if (!prefetch_cublas || p.cublas_option == "off") return;
    p.cublas_prefetched = std::async(std::launch::async, [option = p.cublas_option] {
      std::string why;
      auto library = kiln::ptx::CublasLibrary::open(option, why);
      return std::make_pair(std::move(library), why);
    });
  });
  if (!p.no_driver.empty()) {
    p.log(KILN_LOG_INFO, "ptx: " + p.no_driver + "; no devices");
    return;
  }
  int count = 0;
  p.check(p.cuda.cuDeviceGetCount(&count), "cuDeviceGetCount");
  p.devices.resize(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    kiln::ptx::Device& d = p.devices[static_cast<size_t>(i)];
    p.check(p.cuda.cuDeviceGet(&d.handle, i), "cuDeviceGet");
    char name[256] = {};
    p.cuda.cuDeviceGetName(name, sizeof name - 1, d.handle);
    d.name = name;
    p.check(p.cuda.cuDevicePrimaryCtxRetain(&d.context, d.handle), "cuDevicePrimaryCtxRetain");
    describe(p, d);
  }
}

void destroy(kiln_plugin* p) {
  if (!p) return;
  if (p->cublas_prefetched.valid()) p->cublas_prefetched.wait();
  p->cublas.release_handles([&](uint32_t d) { p->cuda.cuCtxSetCurrent(p->devices[d].context); });
  p->cudnn.release_handles([&](uint32_t d) { p->cuda.cuCtxSetCurrent(p->devices[d].context); });
  for (kiln::ptx::DeviceScratch* scratch : p->scratches()) scratch->release(*p);
  kiln::ptx::release_attention_kernels(*p);
  kiln::ptx::release_conv_kernels(*p);
  for (void* host : p->host_allocations) p->cuda.cuMemFreeHost(host);
  kiln::ptx::release_imports(*p);
  for (const auto& [address, device] : p->memory.live()) {
    p->cuda.cuCtxSetCurrent(p->devices[device].context);
    p->cuda.cuMemFree(address);
  }
  for (auto& d : p->devices)
    if (d.context) p->cuda.cuDevicePrimaryCtxRelease(d.handle);
  if (p->cuda.library) kiln::ptx::close_cuda_driver(p->cuda);
  delete p;
}

// LLVM, linked in statically, keeps process-wide registries (targets, options) that cannot be
// torn down and set up again: the plugin stays mapped once loaded, like the OpenMP runtime
// of the CPU plugin's artifacts.
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
    std::vector<std::string> known = {"arch",           "libdevice",
                                      "cublas",         "cublas_prefetch",
                                      "cudnn",          "deterministic",
                                      "pad_rows_from",  "fused_attention",
                                      "conv_kernel",    "conv_tile",
                                      "conv_splits",    "attention_out_strides",
                                      "cubin",          "attention_rows_per_warp",
                                      "attention_keys", "unaligned_rows",
                                      "attention_order"};
    known.insert(known.end(), kiln::gpu::tuning_keys().begin(), kiln::gpu::tuning_keys().end());
    if (options.has("conv_tf32"))
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "the ptx option conv_tf32 is now the config's schedule.conv_tf32 (every "
                    "plugin's library calls follow it; the PyTorch bridge sets it from "
                    "torch.backends.cudnn.allow_tf32)");
    options.reject_unknown(known);
    auto plugin = std::unique_ptr<kiln_plugin, void (*)(kiln_plugin*)>(new kiln_plugin, destroy);
    plugin->log = kiln::sdk::HostLog(create.log, create.log_user_data);
    plugin->abi_minor = create.abi_minor;
    plugin->libdevice = options.get("libdevice", kiln::ptx::find_libdevice());
    // The tuning knobs given as options replace the heuristic default config.
    std::string knobs;
    for (const std::string& key : kiln::gpu::tuning_keys())
      if (options.has(key)) knobs += key + "=" + options.get(key, "") + " ";
    try {
      plugin->tuning = kiln::gpu::parse_tuning(knobs, plugin->tuning);
    } catch (const std::invalid_argument& e) {
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, e.what());
    }
    plugin->fingerprint = "ptx-codegen-2@" + kiln::sdk::plugin_binary_digest() + "; " +
                          kiln::gpu::tuning_line(plugin->tuning) +
                          "; libdevice=" + plugin->libdevice;
    plugin->arch = options.get("arch", "auto");
    if (plugin->arch != "auto" && plugin->arch.rfind("sm_", 0) != 0)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "arch is 'auto' or sm_XY, got '" + plugin->arch + "'");
    plugin->fingerprint += "; arch=" + plugin->arch;
    plugin->cublas_option = options.get("cublas", "");
    plugin->cudnn_option = options.get("cudnn", "");
    // The option's value, one of `values` (refused by name otherwise).
    const auto one_of = [&](const std::string& key, const std::string& fallback,
                            const std::vector<std::string>& values) {
      const std::string value = options.get(key, fallback);
      if (std::find(values.begin(), values.end(), value) != values.end()) return value;
      std::string listed;
      for (size_t i = 0; i < values.size(); ++i)
        listed += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + values[i];
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, key + " is " + listed + ", got '" + value + "'");
    };
    const auto flag = [&](const std::string& key, const char* fallback = "false") {
      return one_of(key, fallback, {"true", "false"}) == "true";
    };
    const bool prefetch = flag("cublas_prefetch");
    plugin->deterministic = flag("deterministic");
    plugin->fused_attention = flag("fused_attention", "true");
    plugin->attention_out_strides = flag("attention_out_strides", "true");
    plugin->conv_kernel = flag("conv_kernel", "true");
    plugin->cubin = flag("cubin", "true");
    if (const std::string tile = options.get("conv_tile", "auto"); tile != "auto") {
      std::string why;
      plugin->conv_tile = kiln::ptx::parse_conv_tile(tile, why);
      if (!plugin->conv_tile) throw Failure(KILN_STATUS_INVALID_ARGUMENT, "conv_tile " + why);
      plugin->fingerprint += "; conv_tile=" + tile;
    }
    // A whole number from `low` up to `high`, or nullopt.
    const auto count = [](const std::string& text, int64_t low,
                          int64_t high) -> std::optional<int64_t> {
      size_t used = 0;
      int64_t value = 0;
      try {
        value = std::stoll(text, &used);
      } catch (const std::logic_error&) {
        return std::nullopt;
      }
      if (used != text.size() || value < low || value > high) return std::nullopt;
      return value;
    };
    if (const std::string splits = options.get("conv_splits", "auto"); splits != "auto") {
      const auto parts = count(splits, 1, 64);
      if (!parts)
        throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                      "conv_splits is auto or a count of parts from 1 to 64, got '" + splits + "'");
      plugin->conv_splits = *parts;
      plugin->fingerprint += "; conv_splits=" + splits;
    }
    for (const auto& [key, low, high, to] :
         {std::tuple{"attention_rows_per_warp", "16", "32", &plugin->attention_tiling.warp_rows},
          std::tuple{"attention_keys", "32", "64", &plugin->attention_tiling.keys}}) {
      const std::string value = one_of(key, "auto", {"auto", low, high});
      if (value == "auto") continue;
      *to = std::stoll(value);
      plugin->fingerprint += std::string("; ") + key + "=" + value;
    }
    const std::string order = one_of("attention_order", "heavy_first", {"in_order", "heavy_first"});
    plugin->attention_tiling.heavy_first = order == "heavy_first";
    if (!plugin->attention_tiling.heavy_first) plugin->fingerprint += "; attention_order=" + order;
    const std::string pad_from = options.get("pad_rows_from", "4294967296");
    const auto pad = count(pad_from, 0, std::numeric_limits<int64_t>::max());
    if (!pad)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "pad_rows_from is a count of multiply-adds (>= 0), got '" + pad_from + "'");
    plugin->pad_rows_from = *pad;
    const std::string unaligned = one_of("unaligned_rows", "auto", {"auto", "groups", "padded"});
    plugin->unaligned_rows = unaligned == "groups"   ? kiln_plugin::UnalignedRows::Groups
                             : unaligned == "padded" ? kiln_plugin::UnalignedRows::Padded
                                                     : kiln_plugin::UnalignedRows::Auto;
    // Library choices are tuned and cached per fingerprint.
    if (!plugin->fused_attention) plugin->fingerprint += "; no fused_attention";
    if (!plugin->attention_out_strides) plugin->fingerprint += "; no attention_out_strides";
    if (!plugin->conv_kernel) plugin->fingerprint += "; no conv_kernel";
    if (!plugin->cubin) plugin->fingerprint += "; no cubin";
    if (unaligned != "auto") plugin->fingerprint += "; unaligned_rows=" + unaligned;
    open_devices(*plugin, prefetch);
    if (plugin->conv_tile)
      for (const kiln::ptx::Device& d : plugin->devices)
        if (const int64_t bytes = plugin->conv_tile->block_shared_bytes();
            bytes > d.shared_optin_bytes)
          throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                        "conv_tile " + plugin->conv_tile->name() + " takes " +
                            std::to_string(bytes) + " bytes of shared memory per block; " + d.name +
                            " gives " + std::to_string(d.shared_optin_bytes));
    *out = plugin.release();
  });
}

kiln_error* get_attributes(kiln_plugin* plugin, kiln_plugin_attributes* out) {
  return guard([&] {
    kiln_plugin_attributes a{};
    a.struct_size = sizeof(a);
    a.name = "ptx";
    a.vendor = "kiln";
    a.version = kVersion;
    a.kir_versions = "kir/1";
    a.artifact_format = "ptx";
    a.compiler_fingerprint = plugin->fingerprint.c_str();
    a.thread_safety = KILN_THREAD_SAFE_COMPILE | KILN_COMPILE_PER_KERNEL;
    kiln::sdk::write_struct(out, a);
  });
}

kiln_error* device_info(kiln_plugin* plugin, uint32_t device, kiln_device_info* out) {
  return guard([&] {
    const kiln::ptx::Device& d = plugin->use(device);
    kiln_device_info info{};
    info.struct_size = sizeof(info);
    info.kind = "cuda";
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
    // The driver aligns allocations to at least 256 bytes.
    if (alignment > 256 || (alignment & (alignment - 1)) != 0)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "alignment must be a power of two up to 256");
    kiln::ptx::CUdeviceptr ptr = 0;
    if (p->cuda.cuMemAlloc(&ptr, std::max<uint64_t>(bytes, 1)) != 0)
      throw Failure(KILN_STATUS_OUT_OF_MEMORY,
                    "cannot allocate " + std::to_string(bytes) + " bytes");
    p->memory.add(device, ptr, bytes);
    *address = ptr;
  });
}

kiln_error* mem_free(kiln_plugin* p, uint32_t device, uint64_t address) {
  return guard([&] {
    p->use(device);
    p->memory.remove(device, address);
    // Kernels still running may use it (their error words stay for the next wait).
    p->check(p->cuda.cuCtxSynchronize(), "waiting for the device");
    p->check(p->cuda.cuMemFree(address), "cuMemFree");
  });
}

// Copies given a stream by a host of ABI 1.2 are queued on it and return at once (host memory
// stays the host's to keep until it synchronizes: plugin.h's copy rule); the others are done,
// and device-to-host and device-to-device copies report kernel errors, when they return.
kiln_error* copy_h2d(kiln_plugin* p, uint32_t device, kiln_stream* stream, uint64_t dst,
                     const void* src, uint64_t bytes) {
  return guard([&] {
    p->use(device);
    p->memory.check_range(device, dst, bytes, "copy_host_to_device destination");
    kiln::ptx::refuse_in_capture(stream, "copy_host_to_device");
    if (bytes == 0) return;
    if (kiln::ptx::copies_asynchronously(*p, stream))
      p->check(p->cuda.cuMemcpyHtoDAsync(dst, src, bytes, stream->stream), "cuMemcpyHtoDAsync");
    else
      p->check(p->cuda.cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
  });
}

kiln_error* copy_d2h(kiln_plugin* p, uint32_t device, kiln_stream* stream, void* dst, uint64_t src,
                     uint64_t bytes) {
  return guard([&] {
    p->use(device);
    p->memory.check_range(device, src, bytes, "copy_device_to_host source");
    kiln::ptx::refuse_in_capture(stream, "copy_device_to_host");
    if (kiln::ptx::copies_asynchronously(*p, stream)) {
      if (bytes > 0)
        p->check(p->cuda.cuMemcpyDtoHAsync(dst, src, bytes, stream->stream), "cuMemcpyDtoHAsync");
      return;
    }
    if (bytes > 0) p->check(p->cuda.cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
    kiln::ptx::finish_launches(*p, device);
  });
}

kiln_error* copy_d2d(kiln_plugin* p, uint32_t device, kiln_stream* stream, uint64_t dst,
                     uint64_t src, uint64_t bytes) {
  return guard([&] {
    p->use(device);
    p->memory.check_range(device, dst, bytes, "copy_device_to_device destination");
    p->memory.check_range(device, src, bytes, "copy_device_to_device source");
    if (bytes == 0) return;
    if (kiln::ptx::copies_asynchronously(*p, stream)) {
      p->check(p->cuda.cuMemcpyDtoDAsync(dst, src, bytes, kiln::ptx::driver_stream(*p, stream)),
               "cuMemcpyDtoDAsync");
      return;
    }
    p->check(p->cuda.cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD");
    kiln::ptx::finish_launches(*p, device);
  });
}

}  // namespace

namespace {

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
  api.copy_host_to_device = copy_h2d;
  api.copy_device_to_host = copy_d2h;
  api.copy_device_to_device = copy_d2d;
  kiln::ptx::add_stream_functions(api);
  kiln::ptx::add_import_functions(api);
  kiln::ptx::add_code_functions(api);
  kiln::ptx::add_extern_functions(api);
  kiln::ptx::add_capture_functions(api);
  return api;
}

}  // namespace

extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_get_api(uint32_t host_major,
                                                                         uint32_t) {
  stay_loaded();
  static const kiln_plugin_api api = make_api();
  return host_major == KILN_ABI_MAJOR ? &api : nullptr;
}
