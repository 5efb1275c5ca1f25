#include "bench/copy_floor.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

namespace kiln::bench {

std::vector<double> time_copy(int64_t bytes, int reps) {
  const size_t n = static_cast<size_t>(std::max<int64_t>(bytes / 2, 64));
  std::unique_ptr<char[]> src(new char[n]);
  std::unique_ptr<char[]> dst(new char[n]);
  // Touch every page of both so the first timed copy pays no page faults.
  std::memset(src.get(), 1, n);
  std::memset(dst.get(), 0, n);
  std::vector<double> times;
  for (int rep = 0; rep <= reps; ++rep) {
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel
    {
      const size_t threads = static_cast<size_t>(omp_get_num_threads());
      const size_t t = static_cast<size_t>(omp_get_thread_num());
      const size_t chunk = (n + threads - 1) / threads;
      const size_t begin = std::min(n, t * chunk);
      const size_t end = std::min(n, begin + chunk);
      std::memcpy(dst.get() + begin, src.get() + begin, end - begin);
    }
    const auto end = std::chrono::steady_clock::now();
    if (rep > 0) times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  return times;
}

}  // namespace kiln::bench
