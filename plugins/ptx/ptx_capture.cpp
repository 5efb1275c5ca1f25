// Stream capture and replay (ABI 1.4) through CUDA graphs: a capture is the driver's stream
// capture in thread-local mode (a wait or an allocation on the capturing thread fails rather
// than escaping the capture) on a non-blocking stream of the kiln_stream's own, instantiated
// once at its end; a replay is one cuGraphLaunch. Library calls are captured where the
// library takes a stream (ptx_externs.cpp).
#include <memory>

#include "plugins/ptx/ptx_state.h"

namespace kiln::ptx {
namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

kiln_error* stream_begin_capture(kiln_stream* s) {
  return guard([&] {
    if (!s) throw Failure(KILN_STATUS_INVALID_ARGUMENT, "the default stream cannot capture");
    if (s->capturing)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "stream_begin_capture of a capturing stream");
    kiln_plugin& p = *s->plugin;
    if (!p.cuda.cuStreamBeginCapture)
      throw Failure(KILN_STATUS_UNSUPPORTED, "this CUDA driver has no stream capture");
    p.use(s->device);
    if (!s->capture_stream)
      p.check(p.cuda.cuStreamCreate(&s->capture_stream, kStreamNonBlocking), "cuStreamCreate");
    p.check(p.cuda.cuStreamBeginCapture(s->capture_stream, kCaptureModeThreadLocal),
            "cuStreamBeginCapture");
    // A capture in progress may already name scratch memory: until it ends, an outgrown
    // buffer is kept, as for a recording (device_scratch.h).
    ++p.graphs_alive;
    s->capturing = true;
    s->captured.clear();
    s->scratch_used.clear();
  });
}

kiln_error* stream_end_capture(kiln_stream* s, kiln_graph** out) {
  return guard([&] {
    if (!s || !s->capturing)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "stream_end_capture of a stream not capturing");
    kiln_plugin& p = *s->plugin;
    s->capturing = false;
    --p.graphs_alive;  // the capture's count, taken over by the recording if one is made
    p.use(s->device);
    CUgraph graph = nullptr;
    p.check(p.cuda.cuStreamEndCapture(s->capture_stream, &graph), "cuStreamEndCapture");
    auto g = std::make_unique<kiln_graph>();
    g->plugin = &p;
    g->device = s->device;
    g->executables = std::move(s->captured);
    g->scratch = std::move(s->scratch_used);
    s->captured.clear();
    s->scratch_used.clear();
    const CUresult made = p.cuda.cuGraphInstantiateWithFlags(&g->exec, graph, 0);
    p.cuda.cuGraphDestroy(graph);
    p.check(made, "cuGraphInstantiateWithFlags");
    ++p.graphs_alive;
    *out = g.release();
  });
}

kiln_error* graph_launch(kiln_graph* g, kiln_stream* s) {
  return guard([&] {
    if (!g) throw Failure(KILN_STATUS_INVALID_ARGUMENT, "graph_launch of no graph");
    refuse_in_capture(s, "graph_launch");
    if (s && s->device != g->device)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "graph_launch on a stream of device " + std::to_string(s->device) +
                        " of a graph recorded on device " + std::to_string(g->device));
    kiln_plugin& p = *g->plugin;
    p.use(g->device);
    report_earlier_error(p, g->device);
    const CUstream stream = driver_stream(p, s);
    for (DeviceScratch* scratch : g->scratch) scratch->follow(p, g->device, stream);
    p.check(p.cuda.cuGraphLaunch(g->exec, stream), "cuGraphLaunch");
    std::lock_guard lock(p.mutex);
    p.pending.insert(g->executables.begin(), g->executables.end());
  });
}

void graph_destroy(kiln_graph* g) {
  if (!g) return;
  if (g->exec) {
    g->plugin->use(g->device);
    g->plugin->cuda.cuGraphExecDestroy(g->exec);
    --g->plugin->graphs_alive;
  }
  delete g;
}

}  // namespace

void refuse_in_capture(const kiln_stream* s, const std::string& what) {
  if (s && s->capturing)
    throw Failure(KILN_STATUS_UNSUPPORTED, what + " on a capturing stream is not recorded");
}

void add_capture_functions(kiln_plugin_api& api) {
  api.stream_begin_capture = stream_begin_capture;
  api.stream_end_capture = stream_end_capture;
  api.graph_launch = graph_launch;
  api.graph_destroy = graph_destroy;
}

}  // namespace kiln::ptx
