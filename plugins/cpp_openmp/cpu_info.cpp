#include "cpu_info.h"

#include <unistd.h>

#include <fstream>
#include <thread>

namespace kiln::cpu {
namespace {

std::string read_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    // x86 says "model name", some Arm kernels say "Model" or nothing at all.
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

uint64_t sysconf_bytes(int name) {
  const long value = sysconf(name);
  return value > 0 ? static_cast<uint64_t>(value) : 0;
}

void read_isa(CpuInfo& info) {
#if defined(__x86_64__)
  info.arch = "x86_64";
  __builtin_cpu_init();
  struct Feature {
    const char* name;
    bool present;
    uint32_t lanes;
  };
  const Feature features[] = {
      {"sse4.2", __builtin_cpu_supports("sse4.2") != 0, 4},
      {"avx", __builtin_cpu_supports("avx") != 0, 8},
      {"avx2", __builtin_cpu_supports("avx2") != 0, 8},
      {"fma", __builtin_cpu_supports("fma") != 0, 0},
      {"avx512f", __builtin_cpu_supports("avx512f") != 0, 16},
      {"avx512bw", __builtin_cpu_supports("avx512bw") != 0, 0},
      {"avx512vl", __builtin_cpu_supports("avx512vl") != 0, 0},
  };
  for (const auto& f : features) {
    if (!f.present) continue;
    info.isa_features.emplace_back(f.name);
    if (f.lanes > info.simd_width_f32) info.simd_width_f32 = f.lanes;
  }
#elif defined(__aarch64__)
  info.arch = "aarch64";
  info.isa_features.emplace_back("neon");
  info.simd_width_f32 = 4;
#else
  info.arch = "unknown";
#endif
}

}  // namespace

CpuInfo read_cpu_info() {
  CpuInfo info;
  info.model = read_model_name();
  info.logical_cores = std::max(1u, std::thread::hardware_concurrency());
  read_isa(info);
  info.l1d_bytes = sysconf_bytes(_SC_LEVEL1_DCACHE_SIZE);
  info.l2_bytes = sysconf_bytes(_SC_LEVEL2_CACHE_SIZE);
  info.l3_bytes = sysconf_bytes(_SC_LEVEL3_CACHE_SIZE);
  info.cache_line_bytes = sysconf_bytes(_SC_LEVEL1_DCACHE_LINESIZE);
  info.memory_bytes = sysconf_bytes(_SC_PHYS_PAGES) * sysconf_bytes(_SC_PAGESIZE);
  return info;
}

}  // namespace kiln::cpu
