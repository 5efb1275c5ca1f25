// A roofline estimate per kernel: the time to move its bytes at the device's bandwidth
// against the time to do its arithmetic at the device's peak, whichever is longer. The
// device's numbers come from the plugin (`bandwidth_gbps`, `peak_gflops_f32`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/lower/loop_ir.h"

namespace kiln {

struct Roofline {
  double bandwidth_gbps = 0;  // 0: unknown
  double peak_gflops = 0;
  // How work spreads over the device (DeviceProperty compute_units, warp_width; 0: unknown).
  int64_t compute_units = 0;
  int64_t warp_width = 0;
  bool known() const { return bandwidth_gbps > 0 && peak_gflops > 0; }
};

struct KernelCost {
  int loads = 0;   // load ops in the body
  int stores = 0;  // store ops in the body
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  double flops = 0;   // per the weights in kernel_cost.cpp
  double est_us = 0;  // 0 when the roofline is unknown
  std::string bound;  // "memory", "compute" or "" (unknown)
};

KernelCost kernel_cost(const LoopKernel& kernel, const LoopProgram& program,
                       const Roofline& roofline);

// One row per kernel: name, kind, iteration space, loads, stores, bytes, flops, the estimate,
// and (when `measured_us` has an entry per kernel, in program order) the measured time and
// the bandwidth it achieved.
std::string kernel_metadata_csv(const LoopProgram& program, const Roofline& roofline,
                                const std::vector<double>& measured_us = {});

}  // namespace kiln
