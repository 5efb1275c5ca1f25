#include "core/runtime/replays.h"

#include <algorithm>

namespace kiln {

namespace {

// A model's calls alternate between a few output addresses (a caching allocator hands the
// last call's block back): a handful of recordings covers them.
constexpr size_t kMaxRecordings = 8;
constexpr size_t kMaxSeen = 16;
constexpr int64_t kMaxFailedRecordings = 2;

}  // namespace

bool Replays::possible(const Plugin& plugin, uint32_t device) {
  const kiln_plugin_api& api = plugin.api();
  return (capabilities_of(plugin, device) & KILN_CAPABILITY_CAPTURE) && api.stream_begin_capture &&
         api.stream_end_capture && api.graph_launch && api.graph_destroy && api.stream_create &&
         api.stream_destroy;
}

Replays::Replays(const Plugin& plugin, uint32_t device) : plugin_(plugin), device_(device) {}

Replays::~Replays() {
  const kiln_plugin_api& api = plugin_.api();
  for (const Recording& r : recordings_) api.graph_destroy(r.graph);
  if (stream_) api.stream_destroy(stream_);
}

Result<bool> Replays::run(const std::vector<uint64_t>& key,
                          const std::function<Status(kiln_stream*)>& issue) {
  if (stopped_) return false;
  auto found = std::find_if(recordings_.begin(), recordings_.end(),
                            [&](const Recording& r) { return r.key == key; });
  if (found != recordings_.end()) {
    std::rotate(recordings_.begin(), found, found + 1);
  } else {
    auto seen = std::find(seen_.begin(), seen_.end(), key);
    if (seen == seen_.end()) return false;
    seen_.erase(seen);
    // A failed recording costs this call a plain run (where a real error shows); a plan the
    // device fails to record again runs plainly from then on.
    if (auto s = record(key, issue); !s) {
      stats_.refused = s.error().message();
      stopped_ = ++stats_.failed_recordings >= kMaxFailedRecordings;
      return false;
    }
  }
  if (auto s = replay(recordings_.front().graph); !s) return std::move(s).error();
  return true;
}

void Replays::ran_plainly(const std::vector<uint64_t>& key) {
  if (stopped_ || std::find(seen_.begin(), seen_.end(), key) != seen_.end()) return;
  seen_.push_front(key);
  if (seen_.size() > kMaxSeen) seen_.pop_back();
}

Status Replays::record(const std::vector<uint64_t>& key,
                       const std::function<Status(kiln_stream*)>& issue) {
  const kiln_plugin_api& api = plugin_.api();
  if (!stream_)
    if (auto s = plugin_.check(api.stream_create(plugin_.instance(), device_, &stream_),
                               "stream_create");
        !s)
      return s;
  if (auto s = plugin_.check(api.stream_begin_capture(stream_), "stream_begin_capture"); !s)
    return s;
  const Status issued = issue(stream_);
  kiln_graph* graph = nullptr;
  const Status ended = plugin_.check(api.stream_end_capture(stream_, &graph), "stream_end_capture");
  if (!issued || !ended) {
    if (graph) api.graph_destroy(graph);
    return issued ? ended : issued;
  }
  recordings_.push_front({key, graph});
  if (recordings_.size() > kMaxRecordings) {
    api.graph_destroy(recordings_.back().graph);
    recordings_.pop_back();
  }
  ++stats_.captures;
  return Ok{};
}

Status Replays::replay(kiln_graph* graph) {
  if (auto s = plugin_.check(plugin_.api().graph_launch(graph, nullptr), "graph_launch"); !s)
    return s;
  ++stats_.replays;
  return Ok{};
}

}  // namespace kiln
