// ABI 1.2's features for real devices, each check in its own process: the capability flags
// agree with the table, work on two streams ordered by an event (stream_wait_event) arrives
// in order, event_query answers without blocking, and page-locked host memory (host_alloc)
// serves copies that return early. A plugin of an older minor, or one that leaves a function
// out, gets SKIP with that reason.
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "conformance/context.h"
#include "conformance/isolated.h"
#include "conformance/on_device.h"
#include "conformance/random_bytes.h"

namespace kiln::conformance {
namespace {

constexpr size_t kBytes = size_t{4} << 20;  // long enough that an early return would show

Finding capabilities(const Context& c) {
  OnDevice d = on_device(c);
  if (d.unusable) return *d.unusable;
  RawPlugin& p = *d.plugin;
  const kiln_plugin_api& a = d.api();
  if (!a.device_capabilities) return skip("no device_capabilities (ABI 1.2): no capabilities");
  uint64_t flags = 0;
  if (std::string e = p.take(a.device_capabilities(p.instance(), c.device, &flags)); !e.empty())
    return fail("device_capabilities: " + e);
  std::string claimed;
  const auto claim = [&](uint64_t flag, const char* name, bool served) -> std::string {
    if (!(flags & flag)) return "";
    claimed += (claimed.empty() ? "" : ", ") + std::string(name);
    return served ? "" : std::string(name) + " claimed without the functions it needs";
  };
  const bool events = a.stream_create && a.event_record && a.stream_wait_event && a.event_query;
  const bool imports = a.mem_import && a.mem_release_import;
  const bool capture = a.stream_create && a.stream_begin_capture && a.stream_end_capture &&
                       a.graph_launch && a.graph_destroy;
  for (const std::string& why :
       {claim(KILN_CAPABILITY_STREAMS, "streams", events),
        claim(KILN_CAPABILITY_ASYNC_COPY, "asynchronous copies", events),
        claim(KILN_CAPABILITY_PINNED_HOST, "page-locked host memory", a.host_alloc && a.host_free),
        claim(KILN_CAPABILITY_IMPORT_POSIX_FD, "imports of file descriptors", imports),
        claim(KILN_CAPABILITY_IMPORT_CUDA_IPC, "imports of CUDA IPC handles", imports),
        claim(KILN_CAPABILITY_CAPTURE, "capture", capture)})
    if (!why.empty()) return fail(why);
  const uint64_t known = KILN_CAPABILITY_STREAMS | KILN_CAPABILITY_ASYNC_COPY |
                         KILN_CAPABILITY_PINNED_HOST | KILN_CAPABILITY_IMPORT_POSIX_FD |
                         KILN_CAPABILITY_IMPORT_CUDA_IPC | KILN_CAPABILITY_CAPTURE;
  if (flags & ~known) return fail("flags this ABI does not define: " + std::to_string(flags));
  return pass(claimed.empty() ? "none claimed (work done in one order)" : claimed);
}

// A copy on stream 1, an event, stream 2 waiting for it and copying on: the bytes arrive.
Finding ordered_streams(const Context& c) {
  OnDevice d = on_device(c);
  if (d.unusable) return *d.unusable;
  RawPlugin& p = *d.plugin;
  const kiln_plugin_api& a = d.api();
  if (!a.stream_wait_event || !a.event_query)
    return skip("no stream_wait_event or event_query (ABI 1.2)");
  uint64_t x = 0, y = 0;
  if (std::string e = p.take(a.mem_alloc(p.instance(), c.device, kBytes, 256, &x)); !e.empty())
    return fail("mem_alloc: " + e);
  if (std::string e = p.take(a.mem_alloc(p.instance(), c.device, kBytes, 256, &y)); !e.empty())
    return fail("mem_alloc: " + e);
  kiln_stream* s1 = nullptr;
  kiln_stream* s2 = nullptr;
  kiln_event* ev = nullptr;
  if (std::string e = p.take(a.stream_create(p.instance(), c.device, &s1)); !e.empty())
    return fail("stream_create: " + e);
  if (std::string e = p.take(a.stream_create(p.instance(), c.device, &s2)); !e.empty())
    return fail("stream_create: " + e);
  if (std::string e = p.take(a.event_create(p.instance(), c.device, &ev)); !e.empty())
    return fail("event_create: " + e);
  kiln_status code = KILN_OK;
  int done = -1;
  p.take(a.event_query(ev, &done), &code);
  if (code == KILN_OK) return fail("event_query of an event never recorded succeeded");
  p.take(a.stream_wait_event(s2, ev), &code);
  if (code == KILN_OK) return fail("stream_wait_event on an event never recorded succeeded");
  // Kept untouched until the streams are synchronized (the copy rule of ABI 1.2).
  const std::vector<unsigned char> data = random_bytes(kBytes, 11);
  std::vector<unsigned char> back(kBytes, 0);
  if (std::string e =
          p.take(a.copy_host_to_device(p.instance(), c.device, s1, x, data.data(), kBytes));
      !e.empty())
    return fail("copy on stream 1: " + e);
  if (std::string e = p.take(a.event_record(ev, s1)); !e.empty()) return fail("record: " + e);
  if (std::string e = p.take(a.stream_wait_event(s2, ev)); !e.empty())
    return fail("stream_wait_event: " + e);
  if (std::string e = p.take(a.copy_device_to_device(p.instance(), c.device, s2, y, x, kBytes));
      !e.empty())
    return fail("device copy on stream 2: " + e);
  if (std::string e =
          p.take(a.copy_device_to_host(p.instance(), c.device, s2, back.data(), y, kBytes));
      !e.empty())
    return fail("copy back on stream 2: " + e);
  if (std::string e = p.take(a.stream_synchronize(s2)); !e.empty())
    return fail("stream_synchronize: " + e);
  if (back != data) return fail("stream 2 did not wait for stream 1's copy: the bytes differ");
  // After the waits the event has passed: event_query says so, without blocking.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    if (std::string e = p.take(a.event_query(ev, &done)); !e.empty())
      return fail("event_query: " + e);
    if (done == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  } while (std::chrono::steady_clock::now() < deadline);
  if (done != 1) return fail("event_query never said done for an event whose work was waited for");
  if (std::string e = p.take(a.stream_synchronize(s1)); !e.empty())
    return fail("stream_synchronize: " + e);
  a.event_destroy(ev);
  a.stream_destroy(s1);
  a.stream_destroy(s2);
  p.take(a.mem_free(p.instance(), c.device, x));
  p.take(a.mem_free(p.instance(), c.device, y));
  return pass(
      "4 MiB copied on one stream and on by another waiting on an event arrived whole; "
      "event_query done after the wait, unrecorded events refused");
}

// Page-locked buffers: to the device and back through them on a stream, then freed once.
Finding pinned_host(const Context& c) {
  OnDevice d = on_device(c);
  if (d.unusable) return *d.unusable;
  RawPlugin& p = *d.plugin;
  const kiln_plugin_api& a = d.api();
  if (!a.host_alloc || !a.host_free) return skip("no host_alloc (ABI 1.2): no page-locked memory");
  void* in = nullptr;
  void* out = nullptr;
  if (std::string e = p.take(a.host_alloc(p.instance(), c.device, kBytes, &in)); !e.empty())
    return fail("host_alloc: " + e);
  if (std::string e = p.take(a.host_alloc(p.instance(), c.device, kBytes, &out)); !e.empty())
    return fail("host_alloc: " + e);
  if (reinterpret_cast<uintptr_t>(in) % 64 != 0 || reinterpret_cast<uintptr_t>(out) % 64 != 0)
    return fail("host_alloc memory is not 64-byte aligned");
  const std::vector<unsigned char> data = random_bytes(kBytes, 13);
  std::memcpy(in, data.data(), kBytes);
  std::memset(out, 0, kBytes);
  uint64_t x = 0;
  if (std::string e = p.take(a.mem_alloc(p.instance(), c.device, kBytes, 256, &x)); !e.empty())
    return fail("mem_alloc: " + e);
  kiln_stream* s = nullptr;
  if (std::string e = p.take(a.stream_create(p.instance(), c.device, &s)); !e.empty())
    return fail("stream_create: " + e);
  if (std::string e = p.take(a.copy_host_to_device(p.instance(), c.device, s, x, in, kBytes));
      !e.empty())
    return fail("copy from page-locked memory: " + e);
  if (std::string e = p.take(a.copy_device_to_host(p.instance(), c.device, s, out, x, kBytes));
      !e.empty())
    return fail("copy into page-locked memory: " + e);
  if (std::string e = p.take(a.stream_synchronize(s)); !e.empty())
    return fail("stream_synchronize: " + e);
  if (std::memcmp(out, data.data(), kBytes) != 0)
    return fail("4 MiB through page-locked memory came back different");
  a.stream_destroy(s);
  p.take(a.mem_free(p.instance(), c.device, x));
  if (std::string e = p.take(a.host_free(p.instance(), c.device, in)); !e.empty())
    return fail("host_free: " + e);
  kiln_status code = KILN_OK;
  p.take(a.host_free(p.instance(), c.device, in), &code);
  if (code == KILN_OK) return fail("a second host_free of the same memory succeeded");
  p.take(a.host_free(p.instance(), c.device, out));
  return pass(
      "4 MiB to the device and back through page-locked memory on a stream; a second "
      "host_free refused");
}

}  // namespace

void check_streams(const Context& c, Report& report) {
  const std::vector<std::pair<const char*, Finding (*)(const Context&)>> checks = {
      {"capabilities agree with the table", capabilities},
      {"two streams ordered by an event", ordered_streams},
      {"page-locked host memory", pinned_host}};
  for (const auto& [name, check] : checks)
    report.add("streams", name, run_isolated([&] { return check(c); }, c.timeout_seconds));
}

}  // namespace kiln::conformance
