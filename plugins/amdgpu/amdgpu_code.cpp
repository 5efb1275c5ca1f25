// The amdgpu plugin's code half: supports, tuning space, compile (KIR -> HSACO, with each
// kernel's launch shape in a small header before it), load (hipModuleLoadData), launch
// (asynchronous on the null stream; each kernel's error word is read when the host next waits
// for the device), and streams and events.
#include <kiln/plugin.hpp>
#include <memory>
#include <sstream>

#include "plugins/amdgpu/amdgpu_state.h"
#include "plugins/gpu/error_words.h"
#include "plugins/gpu/kernel_listing.h"
#include "plugins/gpu/tuning_space.h"
#include "plugins/kir_support/parse_args.h"

struct kiln_executable {
  struct Kernel {
    kiln::amdgpu::hipFunction fn = nullptr;
    kiln::gpu::LaunchShape shape;
    std::vector<int64_t> buffer_bytes;
    size_t slot = 0;  // its error word
  };
  kiln_plugin* plugin = nullptr;
  uint32_t device = 0;
  kiln::amdgpu::hipModule module = nullptr;
  // The kernels' error words (one per kernel), in mapped host memory the device writes.
  volatile int32_t* status_host = nullptr;
  void* status = nullptr;  // the same words' device address
  std::map<std::string, Kernel> kernels;
};

struct kiln_stream {
  kiln_plugin* plugin = nullptr;
  uint32_t device = 0;
};
struct kiln_event {
  kiln_plugin* plugin = nullptr;
  uint32_t device = 0;
  kiln::amdgpu::hipEvent event = nullptr;
  bool recorded = false;
};

namespace kiln::amdgpu {
namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

constexpr const char* kArtifactHeader = "kiln-amdgpu/1";

kiln_error* supports(kiln_plugin* p, uint32_t device, const char* text, size_t size, int* supported,
                     kiln_blob** reason) {
  return guard([&] {
    *supported = 0;
    if (reason) *reason = nullptr;
    const AmdgpuOptions options = p->options_for(device);
    try {
      compile_to_hsaco(kir_support::parse_kir_argument(text, size), options);
      *supported = 1;
    } catch (const std::exception& e) {
      if (reason) *reason = kiln::sdk::make_blob(e.what());
    }
  });
}

kiln_error* tuning_space(kiln_plugin* p, uint32_t, const char* text, size_t size,
                         kiln_blob** space) {
  return guard([&] {
    *space = kiln::sdk::make_blob(gpu::tuning_space(kir_support::parse_kir_argument(text, size),
                                                    p->tuning, {128, 256, 512, 1024}));
  });
}

// Artifact: the header line, one line per kernel ("kernel NAME BLOCK GRID BYTES..."),
// "hsaco", then the code object's bytes.
kiln_error* compile(kiln_plugin* p, const kiln_compile_args* args_in, kiln_blob** artifact,
                    kiln_blob** metadata) {
  return guard([&] {
    const auto args = kiln::sdk::read_struct(args_in);
    const auto kernels = kir_support::parse_kir_argument(args.kir_text, args.kir_size);
    AmdgpuOptions options = p->options_for(args.device);
    try {
      options.tuning = gpu::parse_tuning(args.config ? args.config : "", options.tuning);
    } catch (const std::invalid_argument& e) {
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, e.what());
    }
    AmdgpuOutput out;
    try {
      out = compile_to_hsaco(kernels, options);
    } catch (const std::exception& e) {
      throw Failure(KILN_STATUS_UNIMPLEMENTED, e.what());
    }
    std::string text = std::string(kArtifactHeader) + "\n" +
                       gpu::kernel_lines(kernels, options.tuning, wave_width(options)) + "hsaco\n" +
                       out.hsaco;
    *artifact = kiln::sdk::make_blob(std::move(text));
    if (metadata) {
      *metadata =
          kiln::sdk::make_blob("{\"arch\": " + kiln::sdk::json_string(options.arch) +
                               ", \"wave\": " + std::to_string(wave_width(options)) +
                               ", \"source\": " + kiln::sdk::json_string(out.llvm_ir) + "}");
    }
  });
}

void destroy_executable(kiln_executable* e) {
  if (!e) return;
  kiln_plugin* p = e->plugin;
  {
    std::lock_guard lock(p->mutex);
    p->pending.erase(e);
  }
  if (p->hip.hipSetDevice(p->devices[e->device].ordinal) == 0) {
    p->hip.hipDeviceSynchronize();  // its kernels may still run
    if (e->module) p->hip.hipModuleUnload(e->module);
    if (e->status_host) p->hip.hipHostFree(const_cast<int32_t*>(e->status_host));
  }
  delete e;
}

kiln_error* load(kiln_plugin* p, uint32_t device, const void* bytes, size_t size,
                 kiln_executable** out) {
  return guard([&] {
    p->use(device);
    const std::string text(static_cast<const char*>(bytes), size);
    std::istringstream in(text);
    std::string line;
    if (!std::getline(in, line) || line != kArtifactHeader)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "not an amdgpu plugin artifact");
    std::vector<gpu::ListedKernel> listed;
    try {
      listed = gpu::read_kernel_lines(in, "hsaco");
    } catch (const std::invalid_argument& e) {
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, e.what());
    }
    const std::string hsaco = text.substr(static_cast<size_t>(in.tellg()));
    if (hsaco.size() < 4 || hsaco.compare(0, 4,
                                          "\x7f"
                                          "ELF") != 0)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "the artifact's code object is not an ELF file");
    std::unique_ptr<kiln_executable, void (*)(kiln_executable*)> exe(new kiln_executable,
                                                                     destroy_executable);
    exe->plugin = p;
    exe->device = device;
    p->check(p->hip.hipModuleLoadData(&exe->module, hsaco.data()), "hipModuleLoadData");
    for (const gpu::ListedKernel& listing : listed) {
      kiln_executable::Kernel k{nullptr, listing.shape, listing.buffer_bytes, exe->kernels.size()};
      p->check(p->hip.hipModuleGetFunction(&k.fn, exe->module, listing.name.c_str()),
               "hipModuleGetFunction " + listing.name);
      exe->kernels[listing.name] = k;
    }
    void* host = nullptr;
    constexpr unsigned kMapped = 0x2;  // hipHostMallocMapped
    const size_t words = std::max<size_t>(exe->kernels.size(), 1);
    p->check(p->hip.hipHostMalloc(&host, words * sizeof(int32_t), kMapped), "hipHostMalloc");
    exe->status_host = static_cast<volatile int32_t*>(host);
    for (size_t i = 0; i < words; ++i) exe->status_host[i] = 0;
    p->check(p->hip.hipHostGetDevicePointer(&exe->status, host, 0), "hipHostGetDevicePointer");
    *out = exe.release();
  });
}

kiln_error* launch(kiln_executable* exe, const kiln_launch_args* args_in) {
  return guard([&] {
    kiln_plugin* p = exe->plugin;
    p->use(exe->device);
    {
      std::lock_guard lock(p->mutex);
      if (std::string f = gpu::take_pending_error_word(p->pending, exe->device); !f.empty())
        throw Failure(KILN_STATUS_INVALID_ARGUMENT, f + " (in an earlier run)");
    }
    const auto args = kiln::sdk::read_struct(args_in);
    const std::string name = args.kernel ? args.kernel : "";
    auto it = exe->kernels.find(name);
    if (it == exe->kernels.end()) throw Failure(KILN_STATUS_NOT_FOUND, "no kernel " + name);
    const kiln_executable::Kernel& k = it->second;
    p->memory.check_buffers(exe->device, args.buffers, args.num_buffers, k.buffer_bytes,
                            "kernel " + name);
    std::vector<void*> pointers;
    for (size_t i = 0; i < args.num_buffers; ++i)
      pointers.push_back(reinterpret_cast<void*>(args.buffers[i]));
    pointers.push_back(static_cast<char*>(exe->status) + k.slot * sizeof(int32_t));
    std::vector<void*> params;
    for (void*& ptr : pointers) params.push_back(&ptr);
    p->check(p->hip.hipModuleLaunchKernel(k.fn, k.shape.grid, 1, 1, k.shape.block, 1, 1, 0, nullptr,
                                          params.data(), nullptr),
             "launch of " + name);
    std::lock_guard lock(p->mutex);
    p->pending.insert(exe);
  });
}

void add_stream_functions(kiln_plugin_api& api) {
  api.stream_create = [](kiln_plugin* p, uint32_t device, kiln_stream** out) {
    return guard([&] {
      p->use(device);
      *out = new kiln_stream{p, device};
    });
  };
  api.stream_destroy = [](kiln_stream* s) { delete s; };
  api.stream_synchronize = [](kiln_stream* s) {
    return guard([&] {
      s->plugin->use(s->device);
      finish_launches(*s->plugin, s->device);
    });
  };
  api.event_create = [](kiln_plugin* p, uint32_t device, kiln_event** out) {
    return guard([&] {
      p->use(device);
      auto e = std::make_unique<kiln_event>();
      e->plugin = p;
      e->device = device;
      p->check(p->hip.hipEventCreate(&e->event), "hipEventCreate");
      *out = e.release();
    });
  };
  api.event_destroy = [](kiln_event* e) {
    if (e && e->event) e->plugin->hip.hipEventDestroy(e->event);
    delete e;
  };
  api.event_record = [](kiln_event* e, kiln_stream*) {
    return guard([&] {
      e->plugin->use(e->device);
      e->plugin->check(e->plugin->hip.hipEventRecord(e->event, nullptr), "hipEventRecord");
      e->recorded = true;
    });
  };
  api.event_synchronize = [](kiln_event* e) {
    return guard([&] {
      e->plugin->use(e->device);
      e->plugin->check(e->plugin->hip.hipEventSynchronize(e->event), "hipEventSynchronize");
      finish_launches(*e->plugin, e->device);
    });
  };
  api.event_elapsed_ms = [](const kiln_event* start, const kiln_event* end, double* ms) {
    return guard([&] {
      if (!start->recorded || !end->recorded)
        throw Failure(KILN_STATUS_INVALID_ARGUMENT, "event_elapsed_ms of an event never recorded");
      float value = 0;
      start->plugin->check(start->plugin->hip.hipEventElapsedTime(&value, start->event, end->event),
                           "hipEventElapsedTime");
      *ms = value;
    });
  };
}

}  // namespace

void finish_launches(kiln_plugin& p, uint32_t device) {
  p.check(p.hip.hipDeviceSynchronize(), "waiting for the device");
  std::lock_guard lock(p.mutex);
  const std::string failure = gpu::drain_error_words(p.pending, device);
  if (!failure.empty()) throw Failure(KILN_STATUS_INVALID_ARGUMENT, failure);
}

void add_code_functions(kiln_plugin_api& api) {
  api.supports = supports;
  api.tuning_space = tuning_space;
  api.compile = compile;
  api.load = load;
  api.executable_destroy = destroy_executable;
  api.launch = launch;
  add_stream_functions(api);
}

}  // namespace kiln::amdgpu
