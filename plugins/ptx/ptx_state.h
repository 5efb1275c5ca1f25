// The state of one ptx plugin instance, shared by its source files.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <future>
#include <kiln/plugin.hpp>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "plugins/gpu/launch_shape.h"
#include "plugins/kir_support/device_memory.h"
#include "plugins/kir_support/memory_functions.h"
#include "plugins/ptx/attention_tiling.h"
#include "plugins/ptx/conv_tile.h"
#include "plugins/ptx/cublas_library.h"
#include "plugins/ptx/cuda_driver.h"
#include "plugins/ptx/cudnn_library.h"
#include "plugins/ptx/device_scratch.h"
#include "plugins/ptx/ptx_compiler.h"

namespace kiln::ptx {

struct Device {
  CUdevice handle = 0;
  CUcontext context = nullptr;
  std::string name;
  std::string arch;  // "sm_90"
  // The most shared memory a block may take (past 48 KB by opting in per kernel).
  int64_t shared_optin_bytes = 48 * 1024;
  int64_t multiprocessors = 1;
  kiln::sdk::PropertyList properties;
};

// The plugin's own kernels compiled so far for calls (fused attention: ptx_attention.cpp;
// convolutions: ptx_conv_kernel.cpp), by device and call.
struct CallKernels {
  struct Loaded {
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    CUfunction second = nullptr;  // a second entry of the module, where one was asked for
  };
  std::mutex mutex;  // guards `loaded`
  std::map<std::pair<uint32_t, std::string>, Loaded> loaded;
};

// Another process's allocation opened by IPC handle (mem_import), and the part imported.
struct IpcImport {
  uint32_t device = 0;
  CUdeviceptr base = 0;  // what cuIpcOpenMemHandle returned (closed with cuIpcCloseMemHandle)
  uint64_t bytes = 0;
};

}  // namespace kiln::ptx

struct kiln_plugin {
  kiln::sdk::HostLog log;
  kiln::ptx::CudaDriver cuda;
  std::string no_driver;  // why there are no devices ("" when the driver opened)
  std::vector<kiln::ptx::Device> devices;
  std::string libdevice;
  std::string arch = "auto";  // "auto": each device's own compute capability
  kiln::gpu::TuningConfig tuning = kiln::ptx::ptx_default_tuning();
  std::string fingerprint;
  // The matmul externs: cuBLAS is opened on first need (a graph with a matmul), not at
  // start-up, which every process pays.
  kiln::ptx::CublasLibrary cublas;
  std::string cublas_option;  // the plugin's `cublas` option ("" searches, "off")
  bool cublas_tried = false;
  // With the `cublas_prefetch` option, cuBLAS is opened on a thread started at plugin
  // creation (its loading then overlaps the driver's start-up and the host's compile);
  // matmul_library() takes the result.
  std::future<std::pair<kiln::ptx::CublasLibrary, std::string>> cublas_prefetched;
  // Rows of products whose output rows are not 16-byte aligned, padded (ptx_externs.cpp).
  kiln::ptx::DeviceScratch cublas_scratch;
  std::mutex cublas_mutex;  // guards the four above (cuBLAS handles are made on first use)
  kiln::ptx::CublasLibrary& matmul_library();
  // The conv2d extern: cuDNN, opened on first need like cuBLAS, and one workspace per device
  // (grown to the largest a convolution asked for, freed with the plugin).
  kiln::ptx::CudnnLibrary cudnn;
  std::string cudnn_option;  // the plugin's `cudnn` option ("" searches, "off")
  bool cudnn_tried = false;
  kiln::ptx::DeviceScratch cudnn_workspace;
  std::mutex cudnn_mutex;                // guards the four above
  std::atomic<int64_t> graphs_alive{0};  // recordings alive and captures in progress
  bool deterministic = false;            // the `deterministic` option: cuDNN gradients that repeat
  // The `pad_rows_from` option: products of at least this many multiply-adds whose output rows
  // are not 16-byte aligned run on padded rows (ptx_externs.cpp).
  int64_t pad_rows_from = int64_t{1} << 32;
  // The `unaligned_rows` option: such products run as aligned row sets written in place
  // (`groups`, aligned_row_groups.h), on padded rows in scratch then copied (`padded`), or
  // in row sets where each set is large enough (`auto`, ptx_externs.cpp).
  enum class UnalignedRows { Auto, Groups, Padded };
  UnalignedRows unaligned_rows = UnalignedRows::Auto;
  kiln::ptx::CudnnLibrary& conv_library();
  bool fused_attention = true;  // the `fused_attention` option: offer the "attention" call
  // The `attention_out_strides` option: list the call's out_strides feature.
  bool attention_out_strides = true;
  // The `attention_rows_per_warp` and `attention_keys` options (0: attention_tiling's choice)
  // and `attention_order`.
  kiln::ptx::AttentionTiling attention_tiling;
  kiln::ptx::CallKernels attention;
  // The `conv_kernel` option: offer "conv2d" through the plugin's own kernel where cuDNN did
  // not open.
  bool conv_kernel = true;
  // The `cubin` option: assemble each unit's PTX for its device when it compiles (ptx_cubin.h).
  bool cubin = true;
  // The `conv_tile` option; unset: per call (conv_tile_for).
  std::optional<kiln::ptx::ConvTile> conv_tile;
  int64_t conv_splits = 0;  // the `conv_splits` option; 0: per call (conv_split.h)
  kiln::ptx::CallKernels conv_kernels;
  // Split reductions' partial sums (conv_split.h), under conv_kernels.mutex.
  kiln::ptx::DeviceScratch conv_partials;
  std::mutex mutex;  // guards `pending`
  // Executables with launches whose error words have not been read since: launches return
  // before their kernels finish, and the next call that waits for the device reports them.
  std::set<kiln_executable*> pending;
  kiln::kir_support::DeviceMemory memory;  // allocations and the host's registrations
  uint32_t abi_minor = 0;                  // negotiated with the host at plugin_create
  std::mutex host_mutex;                   // guards `host_allocations`
  std::set<void*> host_allocations;        // page-locked host memory from host_alloc (1.2)
  std::mutex import_mutex;                 // guards `imports`
  std::map<uint64_t, kiln::ptx::IpcImport> imports;  // mem_import's, by address (1.3)

  // Every scratch memory above, for what concerns them all: a stream's end, plugin_destroy.
  std::array<kiln::ptx::DeviceScratch*, 3> scratches() {
    return {&cublas_scratch, &cudnn_workspace, &conv_partials};
  }
  // Makes `device`'s context current on this thread; throws when it does not exist.
  kiln::ptx::Device& use(uint32_t device);
  // The sm_XY code is generated for on `device` (the `arch` option, or the device's own);
  // makes the device current.
  std::string arch_for(uint32_t device);
  // Throws with the driver's message when `r` is an error.
  void check(kiln::ptx::CUresult r, const std::string& what) const;
};

// A driver stream (created blocking: ordered with the legacy default stream, where library
// calls and copies without a stream run) and an event.
struct kiln_stream {
  kiln_plugin* plugin = nullptr;
  uint32_t device = 0;
  kiln::ptx::CUstream stream = nullptr;
  // While capturing (ABI 1.4) its work goes to `capture_stream`, made non-blocking on the
  // first capture: a blocking stream under capture would turn other threads' work on the
  // legacy default stream into errors. And the executables launched, whose error words a
  // replay sets.
  bool capturing = false;
  kiln::ptx::CUstream capture_stream = nullptr;
  std::set<kiln_executable*> captured;
  std::set<kiln::ptx::DeviceScratch*> scratch_used;  // by the captured library calls
};
// A captured stream's work, instantiated (ptx_capture.cpp).
struct kiln_graph {
  kiln_plugin* plugin = nullptr;
  uint32_t device = 0;
  kiln::ptx::CUgraphExec exec = nullptr;
  std::set<kiln_executable*> executables;
  std::set<kiln::ptx::DeviceScratch*> scratch;  // ordered with their other users at each replay
};
struct kiln_event {
  kiln_plugin* plugin = nullptr;
  uint32_t device = 0;
  kiln::ptx::CUevent event = nullptr;
  bool recorded = false;
};

namespace kiln::ptx {
void add_import_functions(kiln_plugin_api& api);
// Closes every import still open (plugin_destroy), each with its device's context current.
void release_imports(kiln_plugin& p);
// The driver stream work given `s` runs on: its own for a host of ABI 1.2 (its capture
// stream while it captures), the legacy default stream for none or for an older host (under
// 1.0 and 1.1 everything runs in one order).
inline CUstream driver_stream(const kiln_plugin& p, const kiln_stream* s) {
  if (!s || p.abi_minor < 2) return nullptr;
  return s->capturing ? s->capture_stream : s->stream;
}
// Whether a copy given `s` may return before it is done (ABI 1.2's copy rule).
inline bool copies_asynchronously(const kiln_plugin& p, const kiln_stream* s) {
  return s != nullptr && p.abi_minor >= 2;
}
void add_stream_functions(kiln_plugin_api& api);
void add_code_functions(kiln_plugin_api& api);
void add_extern_functions(kiln_plugin_api& api);
void add_capture_functions(kiln_plugin_api& api);
// Whether the plugin offers the "attention" call (ptx_attention.cpp), and the call itself.
bool offers_attention(const kiln_plugin& p);
void attention_call(kiln_plugin* p, uint32_t device, const kiln_launch_args& args,
                    const std::string& name);
// Unloads the attention kernels (plugin_destroy).
void release_attention_kernels(kiln_plugin& p);
// The function `entry` of the kernel kept in `kernels` under (device, key), compiled by
// `compile` (to PTX) for the device's arch and loaded on first use (refused while `stream`
// captures), allowed `dynamic_shared_bytes` of dynamic shared memory per block, with the
// module's `second_entry` where one is named. Under the mutex of `kernels`.
const CallKernels::Loaded& load_call_kernel(
    kiln_plugin& p, CallKernels& kernels, uint32_t device, const std::string& key,
    const char* entry, const std::function<std::string(const std::string& arch)>& compile,
    const kiln_stream* stream, const std::string& name, int dynamic_shared_bytes = 0,
    const char* second_entry = nullptr);
void release_call_kernels(kiln_plugin& p, CallKernels& kernels);
// Whether every device (or the `arch` option) is sm_80 or later: the tensor-core
// instructions (mma, ldmatrix, cp.async) of the plugin's own kernels.
bool has_tensor_cores(const kiln_plugin& p);
// Whether the plugin offers its own "conv2d" (ptx_conv_kernel.cpp), with the dtypes it takes
// as an extern_names line, and the call itself (under conv_kernels.mutex of its own; the
// caller has let the cudnn_mutex go).
bool offers_conv_kernel(kiln_plugin& p);
std::string conv_kernel_extern_line();
void conv_kernel_call(kiln_plugin* p, uint32_t device, const kiln_launch_args& args,
                      const std::string& name);
// Unloads the convolution kernels (plugin_destroy).
void release_conv_kernels(kiln_plugin& p);
// Throws UNSUPPORTED when `s` captures: `what` is never recorded (ABI 1.4's capture rule).
void refuse_in_capture(const kiln_stream* s, const std::string& what);
// Waits for `device` (current on this thread) and throws, naming the kernel, the first error
// a kernel launched there reported since the last wait.
void finish_launches(kiln_plugin& p, uint32_t device);
// Throws, naming the kernel, an error a kernel launched on `device` has already set (a launch
// reports an earlier run's error without waiting).
void report_earlier_error(kiln_plugin& p, uint32_t device);
}  // namespace kiln::ptx
