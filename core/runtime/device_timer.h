// Times spans of device work with the plugin's events: marks recorded on the device's
// default stream between steps, read after the last one completes. Launches may return
// before their kernels finish, so the host clock around them would time only the enqueue.
// A plugin without events is timed by the host clock after a wait on its default stream
// (its stream_synchronize), or, lacking that too, around its calls as they return.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/runtime/plugin.h"

namespace kiln {

class DeviceTimer {
 public:
  // Room for `marks` marks (at least 2).
  static Result<DeviceTimer> create(std::shared_ptr<const Plugin> plugin, uint32_t device,
                                    size_t marks);
  DeviceTimer(DeviceTimer&&) noexcept;
  DeviceTimer& operator=(DeviceTimer&&) noexcept;
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;
  ~DeviceTimer();

  // Mark `i` after the work enqueued so far.
  Status mark(size_t i);
  // Waits for mark `last` and returns the ms from mark i to mark i + 1, for i < last; a kernel
  // error reported by the wait comes back as the error.
  Result<std::vector<double>> spans(size_t last);

 private:
  DeviceTimer() = default;
  Status wait();
  std::shared_ptr<const Plugin> plugin_;
  uint32_t device_ = 0;
  std::vector<kiln_event*> events_;  // empty: host clock
  std::vector<std::chrono::steady_clock::time_point> host_;
  kiln_stream* stream_ = nullptr;  // for the wait without events
};

}  // namespace kiln
