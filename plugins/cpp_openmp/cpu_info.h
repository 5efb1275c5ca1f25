// What the host CPU is: model, core count, SIMD features, caches, memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cpu {

struct CpuInfo {
  std::string model;  // "AMD EPYC 7B13", from /proc/cpuinfo
  std::string arch;   // "x86_64", "aarch64"
  uint32_t logical_cores = 0;
  std::vector<std::string> isa_features;  // "avx2", "fma", "avx512f", ...
  uint32_t simd_width_f32 = 1;            // f32 lanes of the widest vector unit
  uint64_t l1d_bytes = 0;
  uint64_t l2_bytes = 0;
  uint64_t l3_bytes = 0;
  uint64_t cache_line_bytes = 0;
  uint64_t memory_bytes = 0;
};

CpuInfo read_cpu_info();

}  // namespace kiln::cpu
