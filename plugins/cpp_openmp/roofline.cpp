#include "roofline.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace kiln::cpu {

double measure_copy_bandwidth_gbps(uint32_t threads) {
  constexpr size_t kBytes = size_t{16} << 20;  // past most hosts' last-level cache slices
  constexpr size_t kHugePage = size_t{2} << 20;
  const size_t parts = std::max<uint32_t>(threads, 1);
  // Huge pages where the kernel offers them: touching 64 MiB in 4 KiB pages costs more
  // (page faults, in a VM especially) than the copies measured, on every plugin load.
  auto buffer = [&] {
    std::unique_ptr<char[], void (*)(void*)> b(
        static_cast<char*>(std::aligned_alloc(kHugePage, kBytes)), std::free);
    if (!b) throw std::bad_alloc();
    madvise(b.get(), kBytes, MADV_HUGEPAGE);
    return b;
  };
  auto from = buffer(), to = buffer();
  std::memset(from.get(), 1, kBytes);
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (size_t p = 0; p < parts; ++p) {
      workers.emplace_back([&, p] {
        const size_t lo = kBytes * p / parts, hi = kBytes * (p + 1) / parts;
        std::memcpy(to.get() + lo, from.get() + lo, hi - lo);
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
