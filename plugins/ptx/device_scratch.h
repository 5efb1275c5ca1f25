// Device memory a library call borrows for the length of the call (cuDNN's workspace, the
// padded rows of a cuBLAS product, a split convolution's partial sums): one buffer per
// device, grown (by half at least) when a call asks for more and freed with the plugin. A
// recording (ABI 1.4) names the buffer it was made with, so while any recording lives or any
// capture is in progress an outgrown buffer is kept, and freed once none does (at the next
// call on that device) or with the plugin.
//
// Users on different streams take turns: a call on another stream than the buffer's last
// user first makes its stream wait for the work queued on that user's stream so far (an
// event recorded there now: that user's calls have all been queued), so two streams never
// write the buffer at once. A capture is ordered when its recording is replayed (follow),
// not while it captures; a stream being destroyed leaves its last work in the event. The
// protocol needs each user's work queued before the next user's call starts: the plugin does
// not declare KILN_THREAD_SAFE_LAUNCH, so the host makes launches, extern calls and replays
// take turns. A plugin that runs them concurrently must hold the lock until the work is
// queued.
#pragma once

#include <cstddef>
#include <cstdint>
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
  // At least `bytes` on `device` (its context current), ordered after the buffer's users on
  // other streams; a capturing `stream` notes the buffer for its recording instead. Growing
  // allocates, which a capture cannot record: on a capturing stream that throws UNSUPPORTED
  // naming `what`.
  CUdeviceptr get(kiln_plugin& p, uint32_t device, size_t bytes, kiln_stream* stream,
                  const std::string& what);
  // Work about to be queued on `stream` (a recording's replay) uses the buffer of `device`
  // (its context current): ordered as get orders a call.
  void follow(kiln_plugin& p, uint32_t device, CUstream stream);
  // `stream` of `device` (its context current) is being destroyed: a later user waits for
  // its work through the event instead.
  void stream_gone(kiln_plugin& p, uint32_t device, CUstream stream);
  // Frees every buffer and event, each with its device's context current (plugin_destroy).
  void release(kiln_plugin& p);

 private:
  // The last user of a device's buffer.
  struct LastUse {
    bool any = false;  // some stream used it (the legacy default stream is null)
    CUstream stream = nullptr;
    CUevent event = nullptr;  // made on first need
    bool gone = false;        // the last user's stream was destroyed: its work is in `event`
  };
  void follow_locked(kiln_plugin& p, uint32_t device, CUstream stream);
  // Frees the outgrown buffers of `device` (its context current).
  void free_retired(kiln_plugin& p, uint32_t device);
  std::mutex mutex_;  // guards the three below: callers hold different locks of their own
  std::vector<std::pair<CUdeviceptr, size_t>> current_;    // by device
  std::vector<std::pair<uint32_t, CUdeviceptr>> retired_;  // (device, address)
  std::vector<LastUse> last_;                              // by device
};

}  // namespace kiln::ptx
