#include "roofline.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace kiln::cpu {

double measure_copy_bandwidth_gbps(uint32_t threads) {
  constexpr size_t kBytes = size_t{32} << 20;  // past the last-level cache of most hosts
  const size_t parts = std::max<uint32_t>(threads, 1);
  std::vector<char> from(kBytes, 1), to(kBytes, 0);
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (size_t p = 0; p < parts; ++p) {
      workers.emplace_back([&, p] {
        const size_t lo = kBytes * p / parts, hi = kBytes * (p + 1) / parts;
        std::memcpy(to.data() + lo, from.data() + lo, hi - lo);
      });
    }
    for (auto& w : workers) w.join();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s > 0) best = std::max(best, 2.0 * kBytes / s / 1e9);  // read + write
  }
  return best;
}

double estimate_peak_gflops_f32(const CpuInfo& cpu, uint32_t threads) {
  double mhz = 0;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) mhz = std::max(mhz, std::atof(line.c_str() + colon + 1));
  }
  if (mhz <= 0) mhz = 2000;  // unknown clock: a conservative 2 GHz
  const uint32_t cores = std::min(std::max<uint32_t>(threads, 1), cpu.logical_cores);
  return cores * std::max<uint32_t>(cpu.simd_width_f32, 1) * 2.0 * mhz / 1000.0;
}

}  // namespace kiln::cpu
