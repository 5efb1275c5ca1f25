// KIR kernels to one C++ translation unit: each kernel an `extern "C"` function
// `void kiln_kernel_<name>(void* const* buffers, krt::Status* status)` whose loops run in
// parallel with OpenMP over the outer dims and in vectors of `vector_width` lanes over the
// innermost one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/kir.hpp"

namespace kiln::cpu {

struct CodegenOptions {
  int threads = 1;
  // Below this many elements a kernel runs on one thread: waking a team costs more.
  int64_t parallel_threshold = int64_t{1} << 15;
  // A reduction with fewer rows than threads splits its reduced range across threads
  // once it is at least this long.
  int64_t split_threshold = int64_t{1} << 14;
  // A pointwise kernel with few rows cuts its inner dim into chunks no shorter than this.
  int64_t min_inner_chunk = 4096;
  // Lanes of the vector loops (krt::kLanes); 1 generates scalar loops only.
  int vector_width = 8;
  // The tiles (rows x columns) a pointwise kernel with a transposed load walks.
  int64_t tile_rows = 32;
  int64_t tile_cols = 64;
  // Whether loops run bodies over groups of kGroup vectors (loop_text.h) where they may.
  bool groups = true;
  // Vectors of outputs per block of a reduction in column form: 32 f32 vectors of 8 lanes
  // read 1 KiB of each row, contiguous runs the hardware prefetcher follows; blocks of 8
  // (256 bytes a row) took 1.4-1.9x as long over [4096, 4096] and [8192, 512] columns
  // (bench/results/2026-11-27-cpu-column-block/).
  int64_t column_block_vectors = 32;
  // A per-element value that costs a library call (exp, log, ...) and is needed by a later
  // walk of the row is kept in a row array on the thread's stack while the kernel's kept rows
  // take at most this (else recomputed): a quarter of the core's L2, at most 256 KiB, so a
  // 32k-word vocabulary's f32 row (125 KiB) is kept on CPUs with 1 MiB of L2
  // (softmax over [1024, 32000] bf16: 28 -> 24 ms at 2 threads on an AVX-512 EPYC).
  int64_t row_cache_bytes = 64 * 1024;
};

// Throws std::runtime_error naming the kernel and the reason when a kernel cannot be generated.
std::string generate_source(const std::vector<kir::Kernel>& kernels, const CodegenOptions& options);

std::string kernel_symbol(const std::string& kernel_name);

}  // namespace kiln::cpu
