// The ptx plugin's "attention" call: the fused kernel (attention_kernel.h), compiled through
// LLVM for a call's shape on its first use on a device, kept until the plugin goes, and launched
// on the call's stream. Offered for f16 and bf16 when every device is sm_80 or later (its
// tensor-core instructions) and the `fused_attention` option is not false.
#include <kiln/plugin.hpp>
#include <stdexcept>

#include "plugins/ptx/attention_kernel.h"
#include "plugins/ptx/attention_tiling.h"
#include "plugins/ptx/ptx_compiler.h"
#include "plugins/ptx/ptx_state.h"

namespace kiln::ptx {
namespace {

using kiln::sdk::Failure;
using kir_support::AttentionCall;

// 16-byte loads of rows: offsets and strides of q, k and v in whole 8-element steps.
void check_alignment(const AttentionCall& c, const kiln_launch_args& args,
                     const std::string& name) {
  if (c.head_dim % 16 != 0 || c.head_dim > 128)
    throw Failure(
        KILN_STATUS_INVALID_ARGUMENT,
        name + ": head_dim must be a multiple of 16 up to 128, got " + std::to_string(c.head_dim));
  for (const kir_support::OperandLayout* l : {&c.q, &c.k, &c.v})
    if (l->offset % 8 || l->batch % 8 || l->head % 8 || l->row % 8)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    name + ": q, k and v offsets and strides must be multiples of 8 elements");
  for (size_t i = 0; i < 3; ++i)
    if (args.buffers[i] % 16)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, name + ": q, k and v must start 16-byte aligned");
  // Each thread stores two neighbouring elements as one 4-byte word.
  if (c.out.batch % 2 || c.out.head % 2 || c.out.row % 2)
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, name + ": the output strides must be even");
}

}  // namespace

bool offers_attention(const kiln_plugin& p) {
  return p.fused_attention && has_tensor_cores(p);
}

void attention_call(kiln_plugin* p, uint32_t device, const kiln_launch_args& args,
                    const std::string& name) {
  if (!offers_attention(*p)) throw Failure(KILN_STATUS_UNIMPLEMENTED, "no extern '" + name + "'");
  AttentionCall call;
  try {
    call = kir_support::read_attention_call(args);
  } catch (const std::invalid_argument& e) {
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, name + ": " + e.what());
  }
  const bool masked = call.mask != kir_support::AttentionMask::None;
  p->memory.check_buffers(device, args.buffers, args.num_buffers, call.buffer_bytes(), name);
  check_alignment(call, args, name);
  p->use(device);
  const AttentionTiling tiling = attention_tiling(call, p->attention_tiling);
  const int64_t blocks = attention_blocks(call, tiling);
  if (blocks == 0 || call.head_dim == 0) return;
  const CUdeviceptr out = args.buffers[masked ? 4 : 3];
  if (call.kv_len == 0) {  // a softmax over no keys: torch gives zeros
    refuse_in_capture(args.stream, "extern " + name + " over no keys");
    p->check(p->cuda.cuMemsetD8(out, 0, static_cast<size_t>(call.buffer_bytes().back())),
             name + ": cuMemsetD8");
    return;
  }
  if (blocks > 0x7fffffff)
    throw Failure(KILN_STATUS_UNIMPLEMENTED, name + ": more blocks than one launch takes");
  std::lock_guard lock(p->attention.mutex);
  CUfunction fn =
      load_call_kernel(
          *p, p->attention, device, call.key(), kAttentionKernel,
          [&](const std::string& arch) { return compile_attention_to_ptx(call, tiling, arch).ptx; },
          args.stream, name)
          .function;
  CUdeviceptr pointers[5] = {args.buffers[0], args.buffers[1], args.buffers[2],
                             masked ? args.buffers[3] : 0, out};
  void* params[5] = {&pointers[0], &pointers[1], &pointers[2], &pointers[3], &pointers[4]};
  p->check(p->cuda.cuLaunchKernel(fn, static_cast<unsigned>(blocks), 1, 1, kAttentionThreads, 1, 1,
                                  0, driver_stream(*p, args.stream), params, nullptr),
           "launch of " + name);
}

void release_attention_kernels(kiln_plugin& p) {
  release_call_kernels(p, p.attention);
}

}  // namespace kiln::ptx
