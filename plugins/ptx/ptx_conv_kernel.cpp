// The ptx plugin's own "conv2d" where cuDNN did not open (absent, or the `cudnn` option off):
// the implicit-GEMM kernel (conv_kernel.h) for the call's shape and what its buffers'
// alignment allows, compiled on first use on a device and launched on the call's stream.
// Offered for f32 (on TF32 where the call allows it), f16 and bf16 when every device is sm_80
// or later and the `conv_kernel` option is not false; forward only: the core generates the
// gradients' kernels.
#include <kiln/plugin.hpp>
#include <stdexcept>

#include "plugins/ptx/conv_kernel.h"
#include "plugins/ptx/conv_split.h"
#include "plugins/ptx/ptx_compiler.h"
#include "plugins/ptx/ptx_state.h"

namespace kiln::ptx {

using kiln::sdk::Failure;
using kir_support::ConvCall;

bool offers_conv_kernel(kiln_plugin& p) {
  return p.conv_kernel && has_tensor_cores(p) && !p.conv_library().available();
}

std::string conv_kernel_extern_line() {
  return "conv2d f32 f16 bf16 tf32 strides implicit_gemm";
}

void conv_kernel_call(kiln_plugin* p, uint32_t device, const kiln_launch_args& args,
                      const std::string& name) {
  ConvCall call;
  try {
    call = kir_support::read_conv_call(args);
  } catch (const std::invalid_argument& e) {
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, name + ": " + e.what());
  }
  if (!conv_kernel_takes(call))
    throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                  name + ": takes f32, f16 and bf16, got " + kir::dtype_name(call.dtype));
  p->memory.check_buffers(device, args.buffers, args.num_buffers, call.buffer_bytes(), name);
  p->use(device);
  // Every device takes it: the default within 48 KB, a wider one where the device allows it,
  // an option's checked at plugin_create.
  const auto& d = p->devices[device];
  const ConvTile tile =
      p->conv_tile.value_or(conv_tile_for(call, d.multiprocessors, d.shared_optin_bytes));
  const int64_t shared = tile.shared_bytes();
  const int64_t splits =
      p->conv_splits > 0 ? p->conv_splits : conv_splits(call, tile, d.multiprocessors);
  std::lock_guard lock(p->conv_kernels.mutex);
  ConvKernelSpec spec =
      conv_kernel_spec(call, tile, splits, args.buffers[0], args.buffers[1], args.buffers[2]);
  CUdeviceptr partials = 0;
  if (spec.splits > 1) {
    try {
      partials = p->conv_partials.get(*p, device, static_cast<size_t>(conv_partial_bytes(spec)),
                                      args.stream, "extern " + name);
    } catch (const Failure& f) {
      if (f.code() == KILN_STATUS_UNSUPPORTED) throw;  // growing while a stream captures
      // No memory for the partial sums: the reduction whole.
      spec = conv_kernel_spec(call, tile, 1, args.buffers[0], args.buffers[1], args.buffers[2]);
    }
  }
  const std::array<int64_t, 3> grid = conv_kernel_grid(spec);
  if (grid[0] == 0 || grid[1] == 0) return;  // no output element
  if (grid[0] > 0x7fffffff || grid[1] > 0xffff || grid[2] > 0xffff)
    throw Failure(KILN_STATUS_UNIMPLEMENTED, name + ": more blocks than one launch takes");
  const CallKernels::Loaded& kernels = load_call_kernel(
      *p, p->conv_kernels, device, spec.key(), kConvKernel,
      [&](const std::string& arch) { return compile_conv_to_ptx(spec, arch).ptx; }, args.stream,
      name, static_cast<int>(shared), spec.splits > 1 ? kConvFinishKernel : nullptr);
  const CUstream stream = driver_stream(*p, args.stream);
  CUdeviceptr pointers[4] = {args.buffers[0], args.buffers[1], args.buffers[2], partials};
  void* params[4] = {&pointers[0], &pointers[1], &pointers[2], &pointers[3]};
  p->check(p->cuda.cuLaunchKernel(kernels.function, static_cast<unsigned>(grid[0]),
                                  static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2]),
                                  static_cast<unsigned>(tile.threads()), 1, 1,
                                  static_cast<unsigned>(shared), stream, params, nullptr),
           "launch of " + name);
  if (spec.splits == 1) return;
  // The parts' sums, added in order and rounded into y.
  void* finish_params[2] = {&pointers[2], &pointers[3]};
  p->check(
      p->cuda.cuLaunchKernel(kernels.second, static_cast<unsigned>(conv_finish_blocks(spec)), 1, 1,
                             kConvFinishThreads, 1, 1, 0, stream, finish_params, nullptr),
      "launch of " + name + " (adding the split reduction's parts)");
}

void release_conv_kernels(kiln_plugin& p) {
  release_call_kernels(p, p.conv_kernels);
}

}  // namespace kiln::ptx
