// The ptx plugin's streams, events and page-locked host memory. Streams are driver streams
// created blocking, so the work the plugin queues without one (copies and library calls
// without a stream) stays ordered with them; events order streams (stream_wait_event) and
// time them. A wait reports the first error word a kernel set since the last one.
#include <memory>

#include "plugins/ptx/ptx_state.h"

namespace kiln::ptx {
namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

void require_recorded(const kiln_event& e, const char* what) {
  if (!e.recorded)
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, std::string(what) + " of an event never recorded");
}

kiln_error* stream_create(kiln_plugin* p, uint32_t device, kiln_stream** out) {
  return guard([&] {
    p->use(device);
    auto s = std::make_unique<kiln_stream>();
    s->plugin = p;
    s->device = device;
    p->check(p->cuda.cuStreamCreate(&s->stream, 0), "cuStreamCreate");
    *out = s.release();
  });
}

void stream_destroy(kiln_stream* s) {
  if (!s) return;
  if (s->stream) {
    s->plugin->use(s->device);
    if (s->capturing) {  // a capture never ended: its recording is dropped
      --s->plugin->graphs_alive;
      CUgraph graph = nullptr;
      if (s->plugin->cuda.cuStreamEndCapture(s->capture_stream, &graph) == 0 && graph)
        s->plugin->cuda.cuGraphDestroy(graph);
    }
    if (s->capture_stream) s->plugin->cuda.cuStreamDestroy(s->capture_stream);
    for (DeviceScratch* scratch : s->plugin->scratches())
      scratch->stream_gone(*s->plugin, s->device, s->stream);
    s->plugin->cuda.cuStreamDestroy(s->stream);
  }
  delete s;
}

kiln_error* stream_synchronize(kiln_stream* s) {
  return guard([&] {
    if (s->capturing)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "stream_synchronize of a capturing stream");
    s->plugin->use(s->device);
    s->plugin->check(s->plugin->cuda.cuStreamSynchronize(s->stream), "cuStreamSynchronize");
    finish_launches(*s->plugin, s->device);
  });
}

kiln_error* event_create(kiln_plugin* p, uint32_t device, kiln_event** out) {
  return guard([&] {
    p->use(device);
    auto e = std::make_unique<kiln_event>();
    e->plugin = p;
    e->device = device;
    p->check(p->cuda.cuEventCreate(&e->event, 0), "cuEventCreate");
    *out = e.release();
  });
}

void event_destroy(kiln_event* e) {
  if (e && e->event) e->plugin->cuda.cuEventDestroy(e->event);
  delete e;
}

kiln_error* event_record(kiln_event* e, kiln_stream* s) {
  return guard([&] {
    refuse_in_capture(s, "event_record");
    e->plugin->use(e->device);
    e->plugin->check(e->plugin->cuda.cuEventRecord(e->event, driver_stream(*e->plugin, s)),
                     "cuEventRecord");
    e->recorded = true;
  });
}

kiln_error* event_synchronize(kiln_event* e) {
  return guard([&] {
    e->plugin->use(e->device);
    e->plugin->check(e->plugin->cuda.cuEventSynchronize(e->event), "cuEventSynchronize");
    finish_launches(*e->plugin, e->device);
  });
}

kiln_error* event_elapsed_ms(const kiln_event* start, const kiln_event* end, double* ms) {
  return guard([&] {
    if (!start->recorded || !end->recorded)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "event_elapsed_ms of an event never recorded");
    float value = 0;
    start->plugin->check(start->plugin->cuda.cuEventElapsedTime(&value, start->event, end->event),
                         "cuEventElapsedTime");
    *ms = value;
  });
}

kiln_error* device_capabilities(kiln_plugin* p, uint32_t device, uint64_t* flags) {
  return guard([&] {
    p->use(device);
    *flags = KILN_CAPABILITY_STREAMS | KILN_CAPABILITY_ASYNC_COPY | KILN_CAPABILITY_PINNED_HOST;
    if (p->cuda.cuIpcOpenMemHandle) *flags |= KILN_CAPABILITY_IMPORT_CUDA_IPC;
    if (p->cuda.cuStreamBeginCapture && p->abi_minor >= 4) *flags |= KILN_CAPABILITY_CAPTURE;
  });
}

kiln_error* stream_wait_event(kiln_stream* s, kiln_event* e) {
  return guard([&] {
    require_recorded(*e, "stream_wait_event");
    refuse_in_capture(s, "stream_wait_event");
    if (e->device != s->device)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "stream_wait_event across devices");
    s->plugin->use(s->device);
    s->plugin->check(s->plugin->cuda.cuStreamWaitEvent(s->stream, e->event, 0),
                     "cuStreamWaitEvent");
  });
}

// Never waits: a kernel's error word is read by the next call that does.
kiln_error* event_query(kiln_event* e, int* done) {
  return guard([&] {
    require_recorded(*e, "event_query");
    e->plugin->use(e->device);
    const CUresult r = e->plugin->cuda.cuEventQuery(e->event);
    if (r != kCudaErrorNotReady) e->plugin->check(r, "cuEventQuery");
    *done = r == kCudaErrorNotReady ? 0 : 1;
  });
}

kiln_error* host_alloc(kiln_plugin* p, uint32_t device, uint64_t bytes, void** out) {
  return guard([&] {
    p->use(device);
    void* host = nullptr;
    if (p->cuda.cuMemHostAlloc(&host, std::max<uint64_t>(bytes, 1), 0) != 0 || !host)
      throw Failure(KILN_STATUS_OUT_OF_MEMORY,
                    "cannot allocate " + std::to_string(bytes) + " bytes of page-locked memory");
    std::lock_guard lock(p->host_mutex);
    p->host_allocations.insert(host);
    *out = host;
  });
}

kiln_error* host_free(kiln_plugin* p, uint32_t device, void* pointer) {
  return guard([&] {
    p->use(device);
    {
      std::lock_guard lock(p->host_mutex);
      if (p->host_allocations.erase(pointer) == 0)
        throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                      "host_free of memory host_alloc did not return, or freed already");
    }
    // Copies still queued may read or write it.
    p->check(p->cuda.cuCtxSynchronize(), "waiting for the device");
    p->check(p->cuda.cuMemFreeHost(pointer), "cuMemFreeHost");
  });
}

}  // namespace

void add_stream_functions(kiln_plugin_api& api) {
  api.stream_create = stream_create;
  api.stream_destroy = stream_destroy;
  api.stream_synchronize = stream_synchronize;
  api.event_create = event_create;
  api.event_destroy = event_destroy;
  api.event_record = event_record;
  api.event_synchronize = event_synchronize;
  api.event_elapsed_ms = event_elapsed_ms;
  api.device_capabilities = device_capabilities;
  api.stream_wait_event = stream_wait_event;
  api.event_query = event_query;
  api.host_alloc = host_alloc;
  api.host_free = host_free;
}

}  // namespace kiln::ptx
