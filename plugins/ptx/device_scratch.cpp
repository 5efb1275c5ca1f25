#include "plugins/ptx/device_scratch.h"

#include <algorithm>

#include "plugins/ptx/ptx_state.h"

namespace kiln::ptx {

CUdeviceptr DeviceScratch::get(kiln_plugin& p, uint32_t device, size_t bytes,
                               const kiln_stream* stream, const std::string& what) {
  std::lock_guard lock(mutex_);
  if (p.graphs_alive == 0) free_retired(p, device);
  // Hosts before ABI 1.2 run everything on the legacy default stream: one buffer serves all.
  auto& [address, size] = current_[{device, p.abi_minor >= 2 ? stream : nullptr}];
  if (size >= bytes) return address;
  refuse_in_capture(stream, what + " growing its scratch memory");
  if (address) p.check(retire(p, device, address), what + ": freeing scratch memory");
  // Half as much again as before, at least: sizes that creep up grow it a few times, not at
  // every step. Where the extra does not fit, exactly what is asked.
  const size_t grown = std::max(bytes, size + size / 2);
  address = 0;
  size = 0;  // nothing held should the allocation fail
  if (p.cuda.cuMemAlloc(&address, grown) == 0) {
    size = grown;
    return address;
  }
  address = 0;
  p.check(p.cuda.cuMemAlloc(&address, bytes), what + ": allocating scratch memory");
  size = bytes;
  return address;
}

CUresult DeviceScratch::retire(kiln_plugin& p, uint32_t device, CUdeviceptr address) {
  if (p.graphs_alive == 0) return p.cuda.cuMemFree(address);  // waits for the work queued on it
  retired_.emplace_back(device, address);
  return 0;
}

void DeviceScratch::forget(kiln_plugin& p, const kiln_stream* stream) {
  std::lock_guard lock(mutex_);
  std::erase_if(current_, [&](const auto& entry) {
    if (entry.first.second != stream) return false;
    // A stream's destruction reports no error.
    if (entry.second.first) (void)retire(p, entry.first.first, entry.second.first);
    return true;
  });
}

void DeviceScratch::free_retired(kiln_plugin& p, uint32_t device) {
  std::erase_if(retired_, [&](const std::pair<uint32_t, CUdeviceptr>& r) {
    if (r.first == device) p.cuda.cuMemFree(r.second);
    return r.first == device;
  });
}

void DeviceScratch::release(kiln_plugin& p) {
  std::lock_guard lock(mutex_);
  for (const auto& [key, buffer] : current_) {
    if (!buffer.first) continue;
    p.cuda.cuCtxSetCurrent(p.devices[key.first].context);
    p.cuda.cuMemFree(buffer.first);
  }
  for (const auto& [d, address] : retired_) {
    p.cuda.cuCtxSetCurrent(p.devices[d].context);
    p.cuda.cuMemFree(address);
  }
  current_.clear();
  retired_.clear();
}

}  // namespace kiln::ptx
