#include "core/runtime/staged_copies.h"

#include <cstring>

namespace kiln {

namespace {

constexpr int kUploadMarker = -1;
constexpr int kDownloadMarker = -2;
constexpr int kComputeMarker = -3;

bool has_events(const kiln_plugin_api& api) {
  return api.event_create && api.event_record && api.event_destroy && api.stream_wait_event;
}

}  // namespace

bool StagedCopies::possible(const Plugin& plugin, uint32_t device) {
  const kiln_plugin_api& api = plugin.api();
  const uint64_t needed = KILN_CAPABILITY_ASYNC_COPY | KILN_CAPABILITY_PINNED_HOST;
  return (capabilities_of(plugin, device) & needed) == needed && api.host_alloc && api.host_free &&
         api.stream_create && api.stream_synchronize && api.stream_destroy;
}

StagedCopies::StagedCopies(const Plugin& plugin, uint32_t device)
    : plugin_(plugin), device_(device), events_work_(has_events(plugin.api())) {}

StagedCopies::~StagedCopies() {
  // A failure here has no one to report to: the memory goes with the plugin.
  const kiln_plugin_api& api = plugin_.api();
  auto quiet = [&](kiln_error* e) {
    if (e) api.error_destroy(e);
  };
  for (kiln_stream* s : {upload_, compute_, download_})
    if (s) quiet(api.stream_synchronize(s));
  for (const auto* pool : {&upload_pinned_, &download_pinned_})
    for (const auto& [b, p] : *pool) quiet(api.host_free(plugin_.instance(), device_, p.host));
  for (const auto& [key, e] : events_) api.event_destroy(e);
  for (kiln_stream* s : {upload_, compute_, download_})
    if (s) api.stream_destroy(s);
}

Status StagedCopies::make_stream(kiln_stream** stream) {
  if (*stream) return Ok{};
  return plugin_.check(plugin_.api().stream_create(plugin_.instance(), device_, stream),
                       "stream_create");
}

Result<kiln_event*> StagedCopies::event(int key) {
  auto it = events_.find(key);
  if (it != events_.end()) return it->second;
  kiln_event* e = nullptr;
  if (auto s = plugin_.check(plugin_.api().event_create(plugin_.instance(), device_, &e),
                             "event_create");
      !s)
    return std::move(s).error();
  events_[key] = e;
  return e;
}

Status StagedCopies::follow(kiln_stream* waiter, kiln_stream* stream, int key) {
  auto e = event(key);
  if (!e) return std::move(e).error();
  const kiln_plugin_api& api = plugin_.api();
  if (auto s = plugin_.check(api.event_record(*e, stream), "event_record"); !s) return s;
  return plugin_.check(api.stream_wait_event(waiter, *e), "stream_wait_event");
}

Status StagedCopies::synchronize(kiln_stream* stream, const char* what) {
  if (!stream) return Ok{};
  return plugin_.check(plugin_.api().stream_synchronize(stream), what);
}

// `b`'s page-locked buffer of at least `bytes` in `pool` (kept between runs).
Result<std::byte*> StagedCopies::pinned(std::map<int, Pinned>& pool, int b, size_t bytes) {
  const kiln_plugin_api& api = plugin_.api();
  auto it = pool.find(b);
  if (it != pool.end() && it->second.bytes >= bytes)
    return static_cast<std::byte*>(it->second.host);
  if (it != pool.end()) {
    if (auto s =
            plugin_.check(api.host_free(plugin_.instance(), device_, it->second.host), "host_free");
        !s)
      return std::move(s).error();
    pool.erase(it);
  }
  void* host = nullptr;
  if (auto s =
          plugin_.check(api.host_alloc(plugin_.instance(), device_, bytes, &host), "host_alloc");
      !s)
    return std::move(s).error();
  pool[b] = {host, bytes};
  return static_cast<std::byte*>(host);
}

Status StagedCopies::begin_uploads(bool overlap) {
  if (auto s = make_stream(&upload_); !s) return s;
  // The last run's copies may still read the page-locked sources about to be rewritten.
  if (uploads_queued_)
    if (auto s = synchronize(upload_, "waiting for the last run's input copies"); !s) return s;
  uploads_queued_ = false;
  upload_pending_.clear();
  downloads_.clear();
  overlap_run_ = overlap && events_work_;
  if (!events_work_) return Ok{};
  // An earlier run's kernels (on either stream) may still read the input buffers.
  if (auto s = follow(upload_, nullptr, kUploadMarker); !s) return s;
  if (overlap_run_)
    if (auto s = make_stream(&compute_); !s) return s;
  return compute_ ? follow(upload_, compute_, kComputeMarker) : Ok{};
}

Status StagedCopies::upload(int b, uint64_t address, std::span<const std::byte> bytes) {
  const kiln_plugin_api& api = plugin_.api();
  auto host = pinned(upload_pinned_, b, bytes.size());
  if (!host) return std::move(host).error();
  std::memcpy(*host, bytes.data(), bytes.size());
  uploads_queued_ = true;
  if (auto s = plugin_.check(api.copy_host_to_device(plugin_.instance(), device_, upload_, address,
                                                     *host, bytes.size()),
                             "copy_host_to_device");
      !s)
    return s;
  if (!overlap_run_) return Ok{};
  auto e = event(b);
  if (!e) return std::move(e).error();
  if (auto s = plugin_.check(api.event_record(*e, upload_), "event_record"); !s) return s;
  upload_pending_[b] = true;
  return Ok{};
}

Status StagedCopies::end_uploads() {
  if (overlap_run_ || !uploads_queued_) return Ok{};
  uploads_queued_ = false;
  return synchronize(upload_, "waiting for the inputs' copies");
}

Status StagedCopies::before_kernel(std::span<const int> buffers) {
  for (int b : buffers) {
    auto it = upload_pending_.find(b);
    if (it == upload_pending_.end()) continue;
    if (auto s = plugin_.check(plugin_.api().stream_wait_event(compute_, events_.at(b)),
                               "stream_wait_event");
        !s)
      return s;
    upload_pending_.erase(it);
  }
  return Ok{};
}

Status StagedCopies::download(int b, uint64_t address, size_t bytes) {
  const kiln_plugin_api& api = plugin_.api();
  if (auto s = make_stream(&download_); !s) return s;
  auto host = pinned(download_pinned_, b, std::max<size_t>(bytes, 1));
  if (!host) return std::move(host).error();
  downloads_[b] = bytes;
  if (bytes == 0) return Ok{};
  // Without events a plugin runs its streams in one order (plugin.h): nothing to follow.
  if (events_work_)
    if (auto s = follow(download_, compute_stream(), kDownloadMarker); !s) return s;
  // An input no kernel has waited for yet (one the graph returns as it came).
  if (upload_pending_.count(b) != 0)
    if (auto s =
            plugin_.check(api.stream_wait_event(download_, events_.at(b)), "stream_wait_event");
        !s)
      return s;
  return plugin_.check(
      api.copy_device_to_host(plugin_.instance(), device_, download_, *host, address, bytes),
      "copy_device_to_host");
}

Status StagedCopies::wait_downloads() {
  return synchronize(download_, "waiting for the outputs' copies");
}

std::span<const std::byte> StagedCopies::downloaded(int b) const {
  return {static_cast<const std::byte*>(download_pinned_.at(b).host), downloads_.at(b)};
}

Status StagedCopies::settle() {
  if (auto s = synchronize(compute_, "waiting for the kernels"); !s) return s;
  if (auto s = synchronize(upload_, "waiting for the inputs' copies"); !s) return s;
  uploads_queued_ = false;
  upload_pending_.clear();
  return Ok{};
}

}  // namespace kiln
