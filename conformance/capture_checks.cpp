// ABI 1.4's capture and replay, in its own process: work given a capturing stream is
// recorded, not run; a copy to or from the host is refused (UNSUPPORTED) without ending the
// capture; each replay runs the recorded launch and copy again on the memory as it is then.
// A plugin of an older minor, or a device that claims no capture, gets SKIP with the reason.
#include <vector>

#include "conformance/context.h"
#include "conformance/isolated.h"
#include "conformance/on_device.h"
#include "conformance/raw_kir_checks.h"

namespace kiln::conformance {
namespace {

constexpr int64_t kElements = 1000;  // odd, over several blocks of a GPU
constexpr int kAdd = 3;

// Allocations, an executable, a stream and a graph released however the check ends.
struct Held {
  RawPlugin& p;
  const kiln_plugin_api& a;
  uint32_t device;
  std::vector<uint64_t> memory;
  kiln_executable* exe = nullptr;
  kiln_stream* stream = nullptr;
  kiln_graph* graph = nullptr;
  ~Held() {
    if (graph) a.graph_destroy(graph);
    if (stream) a.stream_destroy(stream);
    if (exe) a.executable_destroy(exe);
    for (uint64_t m : memory) p.take(a.mem_free(p.instance(), device, m));
  }
};

Finding capture_and_replay(const Context& c) {
  OnDevice d = on_device(c);
  if (d.unusable) return *d.unusable;
  RawPlugin& p = *d.plugin;
  const kiln_plugin_api& a = d.api();
  if (!a.stream_begin_capture || !a.stream_end_capture || !a.graph_launch || !a.graph_destroy)
    return skip(
        "no stream_begin_capture, stream_end_capture, graph_launch or graph_destroy "
        "(ABI 1.4)");
  uint64_t flags = 0;
  if (a.device_capabilities) p.take(a.device_capabilities(p.instance(), c.device, &flags));
  if (!(flags & KILN_CAPABILITY_CAPTURE)) return skip("the device claims no capture");
  Held h{p, a, c.device, {}, nullptr, nullptr, nullptr};
  std::string error;
  const std::string artifact = compile(p, c.device, add_kernel("add", kElements, kAdd), error);
  if (!error.empty()) return fail("compile: " + error);
  if (std::string e =
          p.take(a.load(p.instance(), c.device, artifact.data(), artifact.size(), &h.exe));
      !e.empty())
    return fail("load: " + e);
  const uint64_t bytes = kElements * 4;
  uint64_t x = 0, y = 0;
  for (uint64_t* m : {&x, &y}) {
    if (std::string e = p.take(a.mem_alloc(p.instance(), c.device, bytes, 64, m)); !e.empty())
      return fail("mem_alloc: " + e);
    h.memory.push_back(*m);
  }
  std::vector<float> host(kElements), back(kElements, -7.0f);
  for (int64_t i = 0; i < kElements; ++i) host[static_cast<size_t>(i)] = static_cast<float>(i);
  if (std::string e =
          p.take(a.copy_host_to_device(p.instance(), c.device, nullptr, x, host.data(), bytes));
      !e.empty())
    return fail("copy_host_to_device: " + e);
  if (std::string e =
          p.take(a.copy_host_to_device(p.instance(), c.device, nullptr, y, back.data(), bytes));
      !e.empty())
    return fail("copy_host_to_device: " + e);

  kiln_status code = KILN_OK;
  p.take(a.stream_begin_capture(nullptr), &code);
  if (code != KILN_STATUS_INVALID_ARGUMENT)
    return fail("stream_begin_capture of the default stream was not INVALID_ARGUMENT");
  if (std::string e = p.take(a.stream_create(p.instance(), c.device, &h.stream)); !e.empty())
    return fail("stream_create: " + e);
  kiln_graph* none = nullptr;
  p.take(a.stream_end_capture(h.stream, &none), &code);
  if (code != KILN_STATUS_INVALID_ARGUMENT || none)
    return fail("stream_end_capture of a stream not capturing was not INVALID_ARGUMENT");

  // Recorded: y = x + 3, then x = y. Each replay adds 3 to x.
  if (std::string e = p.take(a.stream_begin_capture(h.stream)); !e.empty())
    return fail("stream_begin_capture: " + e);
  uint64_t buffers[2] = {x, y};
  kiln_launch_args args{};
  args.struct_size = sizeof args;
  args.kernel = "add";
  args.buffers = buffers;
  args.num_buffers = 2;
  args.stream = h.stream;
  if (std::string e = p.take(a.launch(h.exe, &args)); !e.empty()) return fail("launch: " + e);
  p.take(a.copy_host_to_device(p.instance(), c.device, h.stream, x, host.data(), bytes), &code);
  if (code != KILN_STATUS_UNSUPPORTED)
    return fail("a copy from the host on a capturing stream was not refused (UNSUPPORTED)");
  if (std::string e =
          p.take(a.copy_device_to_device(p.instance(), c.device, h.stream, x, y, bytes));
      !e.empty())
    return fail("copy_device_to_device while capturing: " + e);
  if (std::string e = p.take(a.stream_end_capture(h.stream, &h.graph)); !e.empty() || !h.graph)
    return fail("stream_end_capture: " + (e.empty() ? "no graph" : e));
  auto read_y = [&]() -> std::string {
    return p.take(a.copy_device_to_host(p.instance(), c.device, nullptr, back.data(), y, bytes));
  };
  if (std::string e = read_y(); !e.empty()) return fail("copy_device_to_host: " + e);
  if (back[1] != -7.0f) return fail("the captured launch ran before any replay");

  for (int replay = 1; replay <= 2; ++replay)
    if (std::string e = p.take(a.graph_launch(h.graph, replay == 1 ? nullptr : h.stream));
        !e.empty())
      return fail("graph_launch: " + e);
  if (std::string e = p.take(a.stream_synchronize(h.stream)); !e.empty())
    return fail("stream_synchronize: " + e);
  if (std::string e = read_y(); !e.empty()) return fail("copy_device_to_host: " + e);
  for (int64_t i = 0; i < kElements; ++i)
    if (back[static_cast<size_t>(i)] != static_cast<float>(i + 2 * kAdd))
      return fail("after two replays element " + std::to_string(i) + " is " +
                  std::to_string(back[static_cast<size_t>(i)]) + ", not " +
                  std::to_string(i + 2 * kAdd));
  // A replay reads the memory as it is now.
  for (float& v : host) v = -v;
  if (std::string e =
          p.take(a.copy_host_to_device(p.instance(), c.device, nullptr, x, host.data(), bytes));
      !e.empty())
    return fail("copy_host_to_device: " + e);
  if (std::string e = p.take(a.graph_launch(h.graph, nullptr)); !e.empty())
    return fail("graph_launch: " + e);
  if (std::string e = read_y(); !e.empty()) return fail("copy_device_to_host: " + e);
  for (int64_t i = 0; i < kElements; ++i)
    if (back[static_cast<size_t>(i)] != static_cast<float>(-i + kAdd))
      return fail("a replay after new inputs gave " + std::to_string(back[static_cast<size_t>(i)]) +
                  " at element " + std::to_string(i));
  return pass(
      "a launch and a copy recorded, not run; a host copy refused while capturing; "
      "three replays on two streams each ran both");
}

}  // namespace

void check_capture(const Context& c, Report& report) {
  report.add("capture", "a captured launch replays",
             run_isolated([&] { return capture_and_replay(c); }, c.timeout_seconds));
}

}  // namespace kiln::conformance
