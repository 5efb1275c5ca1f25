// Device memory a library call borrows for the length of the call (cuDNN's workspace, the
// padded rows of a cuBLAS product, a split convolution's partial sums): one buffer per device
// and stream, so work queued on two streams at once never shares one. Grown (by half at
// least) when a call asks for more; freed with its stream, or with the plugin. A recording
// (ABI 1.4) names the buffer it was made with, so while any recording lives an outgrown or
// orphaned buffer is kept, and freed once none does (at the next call on that device) or with
// the plugin. Replays of two recordings made on one stream, launched at once on two others,
// would still share that stream's buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "plugins/ptx/cuda_driver.h"

struct kiln_plugin;
struct kiln_stream;

namespace kiln::ptx {

class DeviceScratch {
 public:
  // At least `bytes` on `device` (its context current) for work on `stream`. Growing
  // allocates, which a capture cannot record: on a capturing `stream` that throws UNSUPPORTED
  // naming `what`.
  CUdeviceptr get(kiln_plugin& p, uint32_t device, size_t bytes, const kiln_stream* stream,
                  const std::string& what);
  // Frees (or, while recordings live, retires) the buffer of `stream`, which is going: its
  // device's context current (stream_destroy).
  void forget(kiln_plugin& p, const kiln_stream* stream);
  // Frees every buffer, each with its device's context current (plugin_destroy).
  void release(kiln_plugin& p);

 private:
  // Frees the outgrown buffers of `device` (its context current).
  void free_retired(kiln_plugin& p, uint32_t device);
  // Frees `address` on `device` (the driver's result), or keeps it until no recording lives.
  CUresult retire(kiln_plugin& p, uint32_t device, CUdeviceptr address);
  std::mutex mutex_;  // calls on different streams may come from different threads
  using Key = std::pair<uint32_t, const kiln_stream*>;     // (device, stream)
  std::map<Key, std::pair<CUdeviceptr, size_t>> current_;  // (address, bytes)
  std::vector<std::pair<uint32_t, CUdeviceptr>> retired_;  // (device, address)
};

}  // namespace kiln::ptx
