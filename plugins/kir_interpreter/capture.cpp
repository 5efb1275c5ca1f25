#include "capture.h"

#include <memory>

#include "plugin_state.h"

namespace kiln::interp {

using kiln::sdk::Failure;
using kiln::sdk::guard;

void submit(kiln_plugin& p, kiln_stream* s, std::function<void()> work, bool copy) {
  if (s && s->capturing) {
    s->recorded.push_back(std::move(work));
    return;
  }
  p.streams.queue(s, std::move(work), copy);
}

void refuse_in_capture(const kiln_stream* s, const char* what) {
  if (s && s->capturing)
    throw Failure(KILN_STATUS_UNSUPPORTED,
                  std::string(what) + " on a capturing stream is not recorded");
}

#if KILN_ABI_MINOR >= 4
namespace {

kiln_error* stream_begin_capture(kiln_stream* s) {
  return guard([&] {
    if (!s) throw Failure(KILN_STATUS_INVALID_ARGUMENT, "the default stream cannot capture");
    if (s->capturing)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "stream_begin_capture of a capturing stream");
    // Work queued before the capture is not part of it.
    s->plugin->streams.run_all(s);
    s->recorded.clear();
    s->capturing = true;
  });
}

kiln_error* stream_end_capture(kiln_stream* s, kiln_graph** out) {
  return guard([&] {
    if (!s || !s->capturing)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "stream_end_capture of a stream not capturing");
    s->capturing = false;
    auto graph = std::make_unique<kiln_graph>();
    graph->plugin = s->plugin;
    graph->work = std::move(s->recorded);
    s->recorded.clear();
    *out = graph.release();
  });
}

kiln_error* graph_launch(kiln_graph* g, kiln_stream* s) {
  return guard([&] {
    if (!g) throw Failure(KILN_STATUS_INVALID_ARGUMENT, "graph_launch of no graph");
    refuse_in_capture(s, "graph_launch");
    for (const std::function<void()>& work : g->work) g->plugin->streams.queue(s, work);
  });
}

}  // namespace

void add_capture_functions(kiln_plugin_api& api) {
  api.stream_begin_capture = stream_begin_capture;
  api.stream_end_capture = stream_end_capture;
  api.graph_launch = graph_launch;
  api.graph_destroy = [](kiln_graph* g) { delete g; };
}
#endif

}  // namespace kiln::interp
