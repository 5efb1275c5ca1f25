// Split reductions of the implicit-GEMM convolution kernel (conv_kernel.h). Where a call has
// too few output tiles to fill the GPU (deep layers: few positions, long reductions), its
// reduction is cut into `splits` parts: each block sums one part of one tile into f32
// partial sums in scratch memory, and a second kernel adds a tile's parts in order (the same
// bits every run) and rounds the sum into y.
#pragma once

#include <llvm/IR/Module.h>

#include <cstdint>

#include "plugins/ptx/conv_kernel.h"

namespace kiln::ptx {

inline constexpr const char* kConvFinishKernel = "kiln_conv_finish";
inline constexpr unsigned kConvFinishThreads = 256;

// How many parts `call` is cut into in blocks of `tile` on a device of `multiprocessors`:
// where its blocks are fewer than the multiprocessors, enough for two blocks on each, every
// part at least 40 steps of the reduction long; else 1 (no split).
int64_t conv_splits(const kir_support::ConvCall& call, const ConvTile& tile,
                    int64_t multiprocessors);
// The reduction steps of `spec`'s call.
int64_t conv_steps(const ConvKernelSpec& spec);
// Bytes of f32 partial sums a split call needs: splits x positions x output channels.
int64_t conv_partial_bytes(const ConvKernelSpec& spec);
// Element `channel` of output position `position` in split `split`'s partial sums, ordered as
// y is (channels-last: channels innermost; else positions innermost), so the finishing
// kernel reads and writes along the same addresses.
int64_t conv_partial_stride(const ConvKernelSpec& spec, bool channel);

// Adds kConvFinishKernel(y, partials) for a split `spec` to `m`: one thread per element of y,
// launched on conv_finish_blocks(spec) blocks of kConvFinishThreads.
void emit_conv_finish_kernel(llvm::Module& m, const NvptxTarget& target,
                             const ConvKernelSpec& spec);
int64_t conv_finish_blocks(const ConvKernelSpec& spec);

}  // namespace kiln::ptx
