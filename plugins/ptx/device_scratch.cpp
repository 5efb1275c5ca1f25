#include "plugins/ptx/device_scratch.h"

#include <algorithm>

#include "plugins/ptx/ptx_state.h"

namespace kiln::ptx {

CUdeviceptr DeviceScratch::get(kiln_plugin& p, uint32_t device, size_t bytes, kiln_stream* stream,
                               const std::string& what) {
  std::lock_guard lock(mutex_);
  if (current_.size() <= device) current_.resize(device + 1, {0, 0});
  if (p.graphs_alive == 0) free_retired(p, device);
  if (stream && stream->capturing)
    stream->scratch_used.insert(this);
  else
    follow_locked(p, device, driver_stream(p, stream));
  auto& [address, size] = current_[device];
  if (size >= bytes) return address;
  refuse_in_capture(stream, what + " growing its scratch memory");
  // cuMemFree waits for the work queued on the old buffer.
  if (address && p.graphs_alive > 0)
    retired_.emplace_back(device, address);
  else if (address)
    p.check(p.cuda.cuMemFree(address), what + ": freeing scratch memory");
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

void DeviceScratch::follow(kiln_plugin& p, uint32_t device, CUstream stream) {
  std::lock_guard lock(mutex_);
  follow_locked(p, device, stream);
}

void DeviceScratch::follow_locked(kiln_plugin& p, uint32_t device, CUstream stream) {
  if (last_.size() <= device) last_.resize(device + 1);
  LastUse& last = last_[device];
  const bool other = last.gone || (last.any && last.stream != stream);
  if (other) {
    if (!last.event)
      p.check(p.cuda.cuEventCreate(&last.event, kEventDisableTiming),
              "scratch memory: cuEventCreate");
    if (!last.gone)
      p.check(p.cuda.cuEventRecord(last.event, last.stream), "scratch memory: cuEventRecord");
    p.check(p.cuda.cuStreamWaitEvent(stream, last.event, 0), "scratch memory: cuStreamWaitEvent");
  }
  last.any = true;
  last.gone = false;
  last.stream = stream;
}

void DeviceScratch::stream_gone(kiln_plugin& p, uint32_t device, CUstream stream) {
  std::lock_guard lock(mutex_);
  if (last_.size() <= device) return;
  LastUse& last = last_[device];
  if (!last.any || last.gone || last.stream != stream) return;
  const bool held = (last.event || p.cuda.cuEventCreate(&last.event, kEventDisableTiming) == 0) &&
                    p.cuda.cuEventRecord(last.event, stream) == 0;
  // No event holds its work: wait for it here rather than let a later user overlap it.
  if (!held) p.cuda.cuStreamSynchronize(stream);
  last.gone = held;
  last.any = held;
}

void DeviceScratch::free_retired(kiln_plugin& p, uint32_t device) {
  std::erase_if(retired_, [&](const std::pair<uint32_t, CUdeviceptr>& r) {
    if (r.first == device) p.cuda.cuMemFree(r.second);
    return r.first == device;
  });
}

void DeviceScratch::release(kiln_plugin& p) {
  std::lock_guard lock(mutex_);
  for (uint32_t d = 0; d < last_.size(); ++d) {
    if (!last_[d].event) continue;
    p.cuda.cuCtxSetCurrent(p.devices[d].context);
    p.cuda.cuEventDestroy(last_[d].event);
  }
  last_.clear();
  for (uint32_t d = 0; d < current_.size(); ++d) {
    if (!current_[d].first) continue;
    p.cuda.cuCtxSetCurrent(p.devices[d].context);
    p.cuda.cuMemFree(current_[d].first);
  }
  for (const auto& [d, address] : retired_) {
    p.cuda.cuCtxSetCurrent(p.devices[d].context);
    p.cuda.cuMemFree(address);
  }
  current_.clear();
  retired_.clear();
}

}  // namespace kiln::ptx
