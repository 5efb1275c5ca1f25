// The bandwidth floor: a plain copy, split over the machine's threads, timed in the same
// run as the workloads so that ratios to it hold up.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::bench {

// Times `reps` copies of `bytes / 2` bytes (so that `bytes` move: half read, half written)
// after one warm-up; returns each copy's milliseconds.
std::vector<double> time_copy(int64_t bytes, int reps);

}  // namespace kiln::bench
