// KIR kernels to PTX: one LLVM module per batch (gpu::emit_kernel for each kernel), libdevice
// linked when a kernel calls the math library, the O3 pipeline of the NVPTX target machine,
// then the NVPTX backend's assembly.
#pragma once

#include <string>
#include <vector>

#include "kiln/kir.hpp"
#include "plugins/gpu/launch_shape.h"
#include "plugins/kir_support/attention_call.h"
#include "plugins/ptx/attention_tiling.h"
#include "plugins/ptx/conv_kernel.h"

namespace kiln::ptx {

// The shared knobs' defaults, with rows of up to 64 elements a thread kept in registers: on
// the H100 a bf16 softmax over 32k columns took 53.0 us against 66.4 walked twice. The
// AMDGPU target keeps 32 (64 spills a log-softmax row to scratch there).
inline gpu::TuningConfig ptx_default_tuning() {
  gpu::TuningConfig c;
  c.persistent_limit = 64;
  return c;
}

struct PtxOptions {
  std::string arch = "sm_90";  // the device's compute capability
  std::string libdevice;       // libdevice.10.bc; "" searches (see find_libdevice)
  gpu::TuningConfig tuning = ptx_default_tuning();
};

struct PtxOutput {
  std::string llvm_ir;  // the optimized module, before code generation
  std::string ptx;
};

// Throws std::runtime_error naming the kernel and the reason.
PtxOutput compile_to_ptx(const std::vector<kir::Kernel>& kernels, const PtxOptions& options);

// The fused attention kernel (attention_kernel.h) for `call` on `arch`, tiled as `tiling`.
PtxOutput compile_attention_to_ptx(const kir_support::AttentionCall& call,
                                   const AttentionTiling& tiling, const std::string& arch);

// The implicit-GEMM convolution kernel (conv_kernel.h) for `spec` on `arch`.
PtxOutput compile_conv_to_ptx(const ConvKernelSpec& spec, const std::string& arch);

// KILN_LIBDEVICE, then the CUDA toolkit's usual places, then next to `beside` (a plugin's
// own folder, for bundles); "" when none exists.
std::string find_libdevice(const std::string& beside = "");

}  // namespace kiln::ptx
