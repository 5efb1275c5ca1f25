// Device memory a library call borrows for the length of the call (cuDNN's workspace, the
// padded rows of a cuBLAS product): one buffer per device, grown to the largest asked for and
// freed with the plugin. A recording (ABI 1.4) names the buffer it was made with, so while any
// recording lives an outgrown buffer is kept until the plugin goes instead of freed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "plugins/ptx/cuda_driver.h"

struct kiln_plugin;
struct kiln_stream;

namespace kiln::ptx {

class DeviceScratch {
 public:
  // At least `bytes` on `device` (its context current). Growing allocates, which a capture
  // cannot record: on a capturing `stream` that throws UNSUPPORTED naming `what`.
  CUdeviceptr get(kiln_plugin& p, uint32_t device, size_t bytes, const kiln_stream* stream,
                  const std::string& what);
  // Frees every buffer, each with its device's context current (plugin_destroy).
  void release(kiln_plugin& p);

 private:
  std::vector<std::pair<CUdeviceptr, size_t>> current_;    // by device
  std::vector<std::pair<uint32_t, CUdeviceptr>> retired_;  // (device, address)
};

}  // namespace kiln::ptx
