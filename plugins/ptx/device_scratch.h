// Device memory a library call borrows for the length of the call (cuDNN's workspace, the
// padded rows of a cuBLAS product): one buffer per device, grown (by half at least) when a
// call asks for more and freed with the plugin. A recording (ABI 1.4) names the buffer it was
// made with, so while any recording lives an outgrown buffer is kept, and freed once none
// does (at the next call on that device) or with the plugin.
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
  // Frees the outgrown buffers of `device` (its context current).
  void free_retired(kiln_plugin& p, uint32_t device);
  std::vector<std::pair<CUdeviceptr, size_t>> current_;    // by device
  std::vector<std::pair<uint32_t, CUdeviceptr>> retired_;  // (device, address)
};

}  // namespace kiln::ptx
