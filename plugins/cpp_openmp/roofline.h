// The two numbers a roofline needs, for this host: memory bandwidth, measured once when the
// plugin starts (a copy of 32 MiB split over the plugin's threads, best of three), and peak
// f32 throughput, estimated from the clock, the SIMD width and one FMA per lane per cycle.
#pragma once

#include <cstdint>

#include "cpu_info.h"

namespace kiln::cpu {

double measure_copy_bandwidth_gbps(uint32_t threads);
double estimate_peak_gflops_f32(const CpuInfo& cpu, uint32_t threads);

}  // namespace kiln::cpu
