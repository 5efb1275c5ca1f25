// The implicit-GEMM convolution kernel behind the ptx plugin's "conv2d" call where no convolution
// library opened: output positions [N·OH·OW] times the weight's rows [K/groups] over the reduction
// [R·S·C/groups] (taps, then channels), on tensor cores, with no patch ever written to memory. Each
// block copies the patches of its output positions straight from x into shared memory (zeros for
// padding taps) and 64 output channels' weights beside them, a step of the reduction (64 or 128
// bytes per row) at a time, in a ring of 2-4 buffers in dynamic shared memory: the next steps fill
// by cp.async while one is computed. Each warp takes 32 or 64 positions by 64 channels (2x8 or 4x8
// mma fragments); with two slices of warps, each warp takes every other 32 bytes of a step, and the
// first slice adds the second's sums through shared memory before writing. f16/bf16 multiply by mma
// m16n8k16; f32 by mma m16n8k8 on TF32: once where the call allows TF32, else three times on split
// operands (big·big + big·small + small·big), which keeps f32's accuracy. Sums are f32 throughout,
// rounded once into y.
#pragma once

#include <llvm/IR/Module.h>

#include <array>
#include <cstdint>
#include <string>

#include "plugins/kir_support/conv_call.h"
#include "plugins/ptx/conv_tile.h"
#include "plugins/ptx/nvptx_target.h"

namespace kiln::ptx {

inline constexpr const char* kConvKernel = "kiln_conv";

// A call and what its buffers' addresses allow.
struct ConvKernelSpec {
  kir_support::ConvCall call;
  ConvTile tile;
  int64_t splits = 1;     // parts of the reduction (conv_split.h); 1: sums go straight into y
  bool vector_x = false;  // x copied 16 bytes at a time: channels contiguous, aligned
  bool vector_w = false;  // the same for the weight
  bool pair_y = false;    // two output channels per store: channels contiguous, aligned
  bool index32 = false;   // every element index fits 31 bits
  // Every field: the key a compiled kernel is kept under.
  std::string key() const;
};

// Whether the kernel takes `call`: a 16-bit float or f32 forward convolution.
bool conv_kernel_takes(const kir_support::ConvCall& call);
// The spec for `call` in blocks of `tile`, its reduction cut in at most `splits` parts (as
// many as leave none empty), reading x at byte address `x` (its buffer's start), the weight
// at `w` and writing y at `y`.
ConvKernelSpec conv_kernel_spec(const kir_support::ConvCall& call, const ConvTile& tile,
                                int64_t splits, uint64_t x, uint64_t w, uint64_t y);

// Adds kernel kConvKernel(x, w, y, partials) for `spec` to `m` (with splits, also the
// finishing kernel of conv_split.h; `partials` is unused without). Launch it on
// conv_kernel_grid(spec) blocks of spec.tile.threads() threads with
// spec.tile.shared_bytes() of dynamic shared memory.
void emit_conv_kernel(llvm::Module& m, const NvptxTarget& target, const ConvKernelSpec& spec);
std::array<int64_t, 3> conv_kernel_grid(const ConvKernelSpec& spec);

}  // namespace kiln::ptx
