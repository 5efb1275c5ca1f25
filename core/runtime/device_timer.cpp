#include "core/runtime/device_timer.h"

#include <utility>

namespace kiln {

Result<DeviceTimer> DeviceTimer::create(std::shared_ptr<const Plugin> plugin, uint32_t device,
                                        size_t marks) {
  DeviceTimer t;
  t.plugin_ = std::move(plugin);
  t.device_ = device;
  marks = std::max<size_t>(marks, 2);
  const kiln_plugin_api& api = t.plugin_->api();
  if (api.event_create && api.event_record && api.event_synchronize && api.event_elapsed_ms &&
      api.event_destroy) {
    for (size_t i = 0; i < marks; ++i) {
      kiln_event* e = nullptr;
      if (auto s =
              t.plugin_->check(api.event_create(t.plugin_->instance(), device, &e), "event_create");
          !s)
        return std::move(s).error();
      t.events_.push_back(e);
    }
    return t;
  }
  t.host_.resize(marks);
  if (api.stream_create && api.stream_synchronize && api.stream_destroy) {
    if (auto s = t.plugin_->check(api.stream_create(t.plugin_->instance(), device, &t.stream_),
                                  "stream_create");
        !s)
      return std::move(s).error();
  }
  return t;
}

DeviceTimer::DeviceTimer(DeviceTimer&& o) noexcept {
  *this = std::move(o);
}

DeviceTimer& DeviceTimer::operator=(DeviceTimer&& o) noexcept {
  std::swap(plugin_, o.plugin_);
  std::swap(device_, o.device_);
  std::swap(events_, o.events_);
  std::swap(host_, o.host_);
  std::swap(stream_, o.stream_);
  return *this;
}

DeviceTimer::~DeviceTimer() {
  if (!plugin_) return;
  for (kiln_event* e : events_) plugin_->api().event_destroy(e);
  if (stream_) plugin_->api().stream_destroy(stream_);
}

Status DeviceTimer::wait() {
  if (!stream_) return Ok{};
  return plugin_->check(plugin_->api().stream_synchronize(stream_), "stream_synchronize");
}

Status DeviceTimer::mark(size_t i) {
  if (events_.empty()) {
    if (i > 0)
      if (auto s = wait(); !s) return s;
    host_.at(i) = std::chrono::steady_clock::now();
    return Ok{};
  }
  return plugin_->check(plugin_->api().event_record(events_.at(i), nullptr), "event_record");
}

Result<std::vector<double>> DeviceTimer::spans(size_t last) {
  std::vector<double> out;
  if (events_.empty()) {
    for (size_t i = 0; i < last; ++i)
      out.push_back(
          std::chrono::duration<double, std::milli>(host_.at(i + 1) - host_.at(i)).count());
    return out;
  }
  const kiln_plugin_api& api = plugin_->api();
  if (auto s = plugin_->check(api.event_synchronize(events_.at(last)), "event_synchronize"); !s)
    return std::move(s).error();
  for (size_t i = 0; i < last; ++i) {
    double ms = 0;
    if (auto s = plugin_->check(api.event_elapsed_ms(events_.at(i), events_.at(i + 1), &ms),
                                "event_elapsed_ms");
        !s)
      return std::move(s).error();
    out.push_back(ms);
  }
  return out;
}

}  // namespace kiln
