// What the schedule options decide about lowering (ScheduleOptions): library calls the
// autotuner declined, fixed-point scatter sums, and the precision of f32 library products.
#pragma once

#include <string>
#include <vector>

namespace kiln {

struct LowerOptions {
  // library_call_signature()s the autotuner found slower than generated kernels.
  std::vector<std::string> declined;
  bool deterministic = false;  // float scatter sums in fixed point
  // f32 convolution (and matmul) library calls may multiply on TF32 tensor cores, where the
  // plugin lists `tf32` for the call (kir::kExternTf32); generated kernels keep f32.
  bool conv_tf32 = false;
  bool matmul_tf32 = false;
  // Positions per chunk of an embedding bag's long bags (bag_chunk_for).
  int64_t bag_chunk = 16;
};

// The chunk of an embedding bag's long bags, and the most a short bag's single reduction row
// covers (embedding_bag_spans.h), on a device of `warp_width` lanes: 16 where lanes run in
// lockstep (a GPU's threads along the columns step through every masked position), 64 where a
// position every reduce masks off is skipped (cpp_openmp) and each chunk's two partials cost a
// compare-and-swap per element.
constexpr int64_t bag_chunk_for(int64_t warp_width) {
  return warp_width > 1 ? 16 : 64;
}

}  // namespace kiln
