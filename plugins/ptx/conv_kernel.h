// The implicit-GEMM convolution kernel behind the ptx plugin's "conv2d" call where no
// convolution library opened: output positions [N·OH·OW] times the weight's rows [K/groups]
// over the reduction [R·S·C/groups] (taps, then channels), on tensor cores, with no patch
// ever written to memory. Each block copies the patches of its 128 output positions straight
// from x into shared memory (zeros for padding taps) and 64 output channels' weights beside
// them, 64 bytes of the reduction per row at a time, three buffers: two filling by cp.async
// while the third is computed. Its 4 warps take 32 positions by 64 channels each (2x8 mma
// fragments). f16/bf16 multiply by mma m16n8k16; f32 by mma m16n8k8 on TF32: once where the
// call allows TF32, else three times on split operands (big·big + big·small + small·big),
// which keeps f32's accuracy. Sums are f32 throughout, rounded once into y.
#pragma once

#include <llvm/IR/Module.h>

#include <array>
#include <cstdint>
#include <string>

#include "plugins/kir_support/conv_call.h"
#include "plugins/ptx/nvptx_target.h"

namespace kiln::ptx {

inline constexpr const char* kConvKernel = "kiln_conv";
inline constexpr unsigned kConvThreads = 128;

// A call and what its buffers' addresses allow.
struct ConvKernelSpec {
  kir_support::ConvCall call;
  bool vector_x = false;  // x copied 16 bytes at a time: channels contiguous, aligned
  bool vector_w = false;  // the same for the weight
  bool pair_y = false;    // two output channels per store: channels contiguous, aligned
  bool index32 = false;   // every element index fits 31 bits
  // Every field: the key a compiled kernel is kept under.
  std::string key() const;
};

// Whether the kernel takes `call`: a 16-bit float or f32 forward convolution.
bool conv_kernel_takes(const kir_support::ConvCall& call);
// The spec for `call` reading x at byte address `x` (its buffer's start), the weight at `w`
// and writing y at `y`.
ConvKernelSpec conv_kernel_spec(const kir_support::ConvCall& call, uint64_t x, uint64_t w,
                                uint64_t y);

// Adds kernel kConvKernel(x, w, y) for `spec` to `m`. Launch it on conv_kernel_grid(call)
// blocks of kConvThreads threads.
void emit_conv_kernel(llvm::Module& m, const NvptxTarget& target, const ConvKernelSpec& spec);
std::array<int64_t, 3> conv_kernel_grid(const kir_support::ConvCall& call);

}  // namespace kiln::ptx
