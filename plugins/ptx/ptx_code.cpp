// The ptx plugin's code half: supports, tuning space, compile (KIR -> PTX, with each kernel's
// launch shape in a small header before it, and the PTX assembled for the device by the
// driver's JIT: ptx_cubin.h), load (cuModuleLoadData of the cubin, or of the PTX where there
// is none or it does not load), and launch (asynchronous on the stream it is given, the legacy
// default stream for none: each kernel's error word is read when the host next waits for the
// device, or at the device's next launch once set, and a set one fails that call).
#include <kiln/plugin.hpp>
#include <memory>
#include <sstream>

#include "plugins/gpu/error_words.h"
#include "plugins/gpu/kernel_listing.h"
#include "plugins/gpu/tuning_space.h"
#include "plugins/kir_support/parse_args.h"
#include "plugins/ptx/ptx_compiler.h"
#include "plugins/ptx/ptx_cubin.h"
#include "plugins/ptx/ptx_state.h"

struct kiln_executable {
  struct Kernel {
    kiln::ptx::CUfunction fn = nullptr;
    kiln::gpu::LaunchShape shape;
    std::vector<int64_t> buffer_bytes;
    size_t slot = 0;  // its error word
  };
  kiln_plugin* plugin = nullptr;
  uint32_t device = 0;
  kiln::ptx::CUmodule module = nullptr;
  // The kernels' error words (one per kernel), in pinned host memory the device writes
  // through: reading them after a wait costs no copy.
  volatile int32_t* status_host = nullptr;
  kiln::ptx::CUdeviceptr status = 0;
  std::map<std::string, Kernel> kernels;
};

namespace kiln::ptx {
namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

constexpr const char* kArtifactHeader = "kiln-ptx/2";

std::string section(const std::string& name, const std::string& bytes) {
  return name + " " + std::to_string(bytes.size()) + "\n" + bytes;
}

// The next "NAME BYTES" line and its bytes into `bytes`; false at the end of the artifact.
bool read_section(std::istream& in, size_t artifact_bytes, const std::string& name,
                  std::string& bytes) {
  std::string line;
  if (!std::getline(in, line)) return false;
  std::istringstream fields(line);
  std::string word;
  size_t size = 0;
  if (!(fields >> word >> size) || word != name)
    throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                  "malformed ptx artifact: '" + line + "' where its " + name + " section starts");
  const std::streamoff at = in.tellg();  // -1 where the line ended the artifact
  const size_t left = at < 0 ? 0 : artifact_bytes - static_cast<size_t>(at);
  if (size > left) {
    throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                  "ptx artifact cut short in its " + name + " section (" + std::to_string(size) +
                      " bytes named, " + std::to_string(left) + " there)");
  }
  bytes.resize(size);
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  return true;
}

PtxOptions options_for(kiln_plugin& p, uint32_t device) {
  PtxOptions o;
  o.arch = p.arch_for(device);
  o.libdevice = p.libdevice;
  o.tuning = p.tuning;
  return o;
}

kiln_error* supports(kiln_plugin* p, uint32_t device, const char* text, size_t size, int* supported,
                     kiln_blob** reason) {
  return guard([&] {
    *supported = 0;
    if (reason) *reason = nullptr;
    try {
      compile_to_ptx(kir_support::parse_kir_argument(text, size), options_for(*p, device));
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

// Artifact: the header line, one line per kernel ("kernel NAME BLOCK GRID BYTES..."), "ptx",
// then the PTX text.
kiln_error* compile(kiln_plugin* p, const kiln_compile_args* args_in, kiln_blob** artifact,
                    kiln_blob** metadata) {
  return guard([&] {
    const auto args = kiln::sdk::read_struct(args_in);
    const auto kernels = kir_support::parse_kir_argument(args.kir_text, args.kir_size);
    PtxOptions options = options_for(*p, args.device);
    try {
      options.tuning = gpu::parse_tuning(args.config ? args.config : "", options.tuning);
    } catch (const std::invalid_argument& e) {
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, e.what());
    }
    PtxOutput out;
    try {
      out = compile_to_ptx(kernels, options);
    } catch (const std::exception& e) {
      throw Failure(KILN_STATUS_UNIMPLEMENTED, e.what());
    }
    // Code for another arch than the device's own is left to the driver at load.
    std::string cubin;
    if (p->cubin && options.arch == p->devices[args.device].arch) {
      std::string why;
      cubin = assemble_cubin(p->cuda, out.ptx, why);
      if (cubin.empty()) p->log(KILN_LOG_DEBUG, "ptx: " + why + "; the PTX is assembled at load");
    }
    std::string text = std::string(kArtifactHeader) + "\n";
    text += gpu::kernel_lines(kernels, options.tuning, 32);
    text += "code\n" + section("ptx", out.ptx);
    if (!cubin.empty()) text += section("cubin", cubin);
    *artifact = kiln::sdk::make_blob(std::move(text));
    if (metadata) {
      *metadata = kiln::sdk::make_blob("{\"arch\": " + kiln::sdk::json_string(options.arch) +
                                       ", \"cubin_bytes\": " + std::to_string(cubin.size()) +
                                       ", \"source\": " + kiln::sdk::json_string(out.ptx) + "}");
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
  if (p->cuda.cuCtxSetCurrent(p->devices[e->device].context) == 0) {
    p->cuda.cuCtxSynchronize();  // its kernels may still run
    if (e->module) p->cuda.cuModuleUnload(e->module);
    if (e->status_host) p->cuda.cuMemFreeHost(const_cast<int32_t*>(e->status_host));
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
      throw Failure(
          KILN_STATUS_INVALID_ARGUMENT,
          std::string("not a ptx plugin artifact (the plugin reads ") + kArtifactHeader + ")");
    std::unique_ptr<kiln_executable, void (*)(kiln_executable*)> exe(new kiln_executable,
                                                                     destroy_executable);
    exe->plugin = p;
    exe->device = device;
    std::vector<gpu::ListedKernel> listed;
    try {
      listed = gpu::read_kernel_lines(in, "code");
    } catch (const std::invalid_argument& e) {
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, e.what());
    }
    std::string ptx, cubin;
    if (!read_section(in, size, "ptx", ptx))
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "ptx artifact without its ptx section");
    read_section(in, size, "cubin", cubin);
    // A cubin the device does not take (another GPU of the same arch name, an older driver)
    // leaves the PTX to the driver.
    const CUresult from_cubin =
        cubin.empty() ? -1 : p->cuda.cuModuleLoadData(&exe->module, cubin.data());
    if (from_cubin != 0) {
      if (!cubin.empty())
        p->log(KILN_LOG_INFO, "ptx: the artifact's cubin did not load (" +
                                  cuda_error(p->cuda, from_cubin) + "); assembling its PTX");
      p->check(p->cuda.cuModuleLoadData(&exe->module, ptx.c_str()), "cuModuleLoadData");
    }
    for (const gpu::ListedKernel& listing : listed) {
      kiln_executable::Kernel k{nullptr, listing.shape, listing.buffer_bytes, exe->kernels.size()};
      p->check(p->cuda.cuModuleGetFunction(&k.fn, exe->module, listing.name.c_str()),
               "cuModuleGetFunction " + listing.name);
      exe->kernels[listing.name] = k;
    }
    void* host = nullptr;
    constexpr unsigned kDeviceMap = 0x02;  // CU_MEMHOSTALLOC_DEVICEMAP
    const size_t words = std::max<size_t>(exe->kernels.size(), 1);
    p->check(p->cuda.cuMemHostAlloc(&host, words * sizeof(int32_t), kDeviceMap), "cuMemHostAlloc");
    exe->status_host = static_cast<volatile int32_t*>(host);
    for (size_t i = 0; i < words; ++i) exe->status_host[i] = 0;
    p->check(p->cuda.cuMemHostGetDevicePointer(&exe->status, host, 0), "cuMemHostGetDevicePointer");
    *out = exe.release();
  });
}

kiln_error* launch(kiln_executable* exe, const kiln_launch_args* args_in) {
  return guard([&] {
    kiln_plugin* p = exe->plugin;
    p->use(exe->device);
    const auto args = kiln::sdk::read_struct(args_in);
    // A recorded launch reports nothing: an earlier run's error waits for the replay or a wait.
    if (!(args.stream && args.stream->capturing)) report_earlier_error(*p, exe->device);
    const std::string name = args.kernel ? args.kernel : "";
    auto it = exe->kernels.find(name);
    if (it == exe->kernels.end()) throw Failure(KILN_STATUS_NOT_FOUND, "no kernel " + name);
    const kiln_executable::Kernel& k = it->second;
    p->memory.check_buffers(exe->device, args.buffers, args.num_buffers, k.buffer_bytes,
                            "kernel " + name);
    std::vector<CUdeviceptr> pointers(args.buffers, args.buffers + args.num_buffers);
    pointers.push_back(exe->status + k.slot * sizeof(int32_t));
    std::vector<void*> params;
    for (CUdeviceptr& ptr : pointers) params.push_back(&ptr);
    p->check(p->cuda.cuLaunchKernel(k.fn, k.shape.grid, 1, 1, k.shape.block, 1, 1, 0,
                                    driver_stream(*p, args.stream), params.data(), nullptr),
             "launch of " + name);
    if (args.stream && args.stream->capturing) args.stream->captured.insert(exe);
    std::lock_guard lock(p->mutex);
    p->pending.insert(exe);
  });
}

}  // namespace

void report_earlier_error(kiln_plugin& p, uint32_t device) {
  std::lock_guard lock(p.mutex);
  if (std::string f = gpu::take_pending_error_word(p.pending, device); !f.empty())
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, f + " (in an earlier run)");
}

void finish_launches(kiln_plugin& p, uint32_t device) {
  p.check(p.cuda.cuCtxSynchronize(), "waiting for the device");
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
}

}  // namespace kiln::ptx
