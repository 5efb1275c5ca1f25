// Device memory, streams and events, each check in its own process on the device under test.
#include <algorithm>
#include <cstring>
#include <vector>

#include "conformance/context.h"
#include "conformance/isolated.h"
#include "conformance/on_device.h"
#include "conformance/random_bytes.h"

namespace kiln::conformance {
namespace {

Finding sizes_and_alignments(const Context& c) {
  OnDevice d = on_device(c);
  if (d.unusable) return *d.unusable;
  RawPlugin& p = *d.plugin;
  int made = 0;
  for (const uint64_t bytes : {0ull, 1ull, 3ull, 4103ull, 1ull << 20})
    for (const uint64_t alignment : {1ull, 8ull, 64ull, 256ull}) {
      uint64_t address = 0;
      if (std::string e =
              p.take(d.api().mem_alloc(p.instance(), c.device, bytes, alignment, &address));
          !e.empty())
        return fail("mem_alloc(" + std::to_string(bytes) + ", alignment " +
                    std::to_string(alignment) + "): " + e);
      if (address % alignment != 0)
        return fail("mem_alloc(" + std::to_string(bytes) + ", alignment " +
                    std::to_string(alignment) + ") gave an address off by " +
                    std::to_string(address % alignment));
      if (std::string e = p.take(d.api().mem_free(p.instance(), c.device, address)); !e.empty())
        return fail("mem_free: " + e);
      ++made;
    }
  return pass(std::to_string(made) + " allocations of 0 to 1 MiB, alignments 1 to 256");
}

Finding copies(const Context& c) {
  OnDevice d = on_device(c);
  if (d.unusable) return *d.unusable;
  RawPlugin& p = *d.plugin;
  const size_t n = 4099;
  uint64_t a = 0, b = 0;
  if (std::string e = p.take(d.api().mem_alloc(p.instance(), c.device, n, 1, &a)); !e.empty())
    return fail("mem_alloc: " + e);
  if (std::string e = p.take(d.api().mem_alloc(p.instance(), c.device, n, 1, &b)); !e.empty())
    return fail("mem_alloc: " + e);
  const std::vector<unsigned char> data = random_bytes(n, 7);
  std::vector<unsigned char> back(n, 0);
  auto h2d = [&](uint64_t dst, const void* src, uint64_t bytes) {
    return p.take(d.api().copy_host_to_device(p.instance(), c.device, nullptr, dst, src, bytes));
  };
  auto d2h = [&](void* dst, uint64_t src, uint64_t bytes) {
    return p.take(d.api().copy_device_to_host(p.instance(), c.device, nullptr, dst, src, bytes));
  };
  // The host bytes are the plugin's only until the call returns: the core frees or reuses
  // them at once (docs/plugin-abi.md), so the source is overwritten right after the call.
  std::vector<unsigned char> source = data;
  if (std::string e = h2d(a, source.data(), n); !e.empty()) return fail("host to device: " + e);
  std::fill(source.begin(), source.end(), 0xEE);
  if (std::string e = d2h(back.data(), a, n); !e.empty()) return fail("device to host: " + e);
  if (back != data)
    return fail("4099 bytes came back different (read from the host after the copy returned?)");
  if (d.api().copy_device_to_device) {
    // Odd offsets on both sides: 1000 bytes from a + 3 to b + 1.
    if (std::string e = p.take(
            d.api().copy_device_to_device(p.instance(), c.device, nullptr, b + 1, a + 3, 1000));
        !e.empty())
      return fail("device to device: " + e);
    std::vector<unsigned char> part(1000);
    if (std::string e = d2h(part.data(), b + 1, 1000); !e.empty()) return fail(e);
    if (std::memcmp(part.data(), data.data() + 3, 1000) != 0)
      return fail("a device-to-device copy at odd offsets came back different");
  }
  // Zero bytes: nothing to do, and no error.
  if (std::string e = h2d(a, data.data(), 0); !e.empty()) return fail("a 0-byte copy: " + e);
  if (std::string e = d2h(back.data(), a, 0); !e.empty()) return fail("a 0-byte copy: " + e);
  p.take(d.api().mem_free(p.instance(), c.device, a));
  p.take(d.api().mem_free(p.instance(), c.device, b));
  return pass(
      "4099 bytes both ways (the source overwritten as the copy returned), 1000 bytes "
      "device to device at odd offsets, 0-byte copies");
}

Finding bounds(const Context& c) {
  OnDevice d = on_device(c);
  if (d.unusable) return *d.unusable;
  RawPlugin& p = *d.plugin;
  uint64_t a = 0;
  if (std::string e = p.take(d.api().mem_alloc(p.instance(), c.device, 64, 1, &a)); !e.empty())
    return fail("mem_alloc: " + e);
  std::vector<unsigned char> host(4096, 1);
  kiln_status code = KILN_OK;
  p.take(d.api().copy_host_to_device(p.instance(), c.device, nullptr, a, host.data(), 4096), &code);
  if (code == KILN_OK) return fail("a 4096-byte copy into a 64-byte allocation succeeded");
  p.take(d.api().copy_device_to_host(p.instance(), c.device, nullptr, host.data(), a + 60, 8),
         &code);
  if (code == KILN_OK) return fail("an 8-byte copy from byte 60 of a 64-byte allocation succeeded");
  p.take(d.api().mem_free(p.instance(), c.device, a + 8), &code);
  if (code == KILN_OK) return fail("mem_free of an address inside an allocation succeeded");
  p.take(d.api().mem_free(p.instance(), c.device, a));
  p.take(d.api().mem_free(p.instance(), c.device, a), &code);
  if (code == KILN_OK) return fail("a second mem_free of the same address succeeded");
  return pass("copies past an allocation's end and frees of foreign or freed addresses refused");
}

Finding out_of_memory(const Context& c) {
  OnDevice d = on_device(c);
  if (d.unusable) return *d.unusable;
  RawPlugin& p = *d.plugin;
  uint64_t address = 0;
  kiln_status code = KILN_OK;
  const std::string e =
      p.take(d.api().mem_alloc(p.instance(), c.device, uint64_t{1} << 60, 1, &address), &code);
  if (code == KILN_OK) {
    p.take(d.api().mem_free(p.instance(), c.device, address));
    return fail("an allocation of 2^60 bytes succeeded");
  }
  if (code != KILN_STATUS_OUT_OF_MEMORY)
    return fail("2^60 bytes refused with status " + std::to_string(code) +
                ", not OUT_OF_MEMORY: " + e);
  return pass(e);
}

Finding stats_and_leaks(const Context& c) {
  OnDevice d = on_device(c);
  if (d.unusable) return *d.unusable;
  RawPlugin& p = *d.plugin;
  if (!d.api().memory_stats) return skip("no memory_stats");
  auto stats = [&](kiln_memory_stats& s) {
    s = {};
    s.struct_size = sizeof s;
    return p.take(d.api().memory_stats(p.instance(), c.device, &s));
  };
  kiln_memory_stats before{}, during{}, after{};
  if (std::string e = stats(before); !e.empty()) return fail("memory_stats: " + e);
  std::vector<uint64_t> held;
  for (const uint64_t bytes : {1000ull, 3000ull, 5000ull}) {
    uint64_t a = 0;
    if (std::string e = p.take(d.api().mem_alloc(p.instance(), c.device, bytes, 64, &a));
        !e.empty())
      return fail("mem_alloc: " + e);
    held.push_back(a);
  }
  if (std::string e = stats(during); !e.empty()) return fail("memory_stats: " + e);
  for (uint64_t a : held) p.take(d.api().mem_free(p.instance(), c.device, a));
  if (std::string e = stats(after); !e.empty()) return fail("memory_stats: " + e);
  if (during.bytes_in_use < before.bytes_in_use + 9000 ||
      during.num_allocations != before.num_allocations + 3)
    return fail("3 allocations of 9000 bytes in all show as " +
                std::to_string(during.bytes_in_use - before.bytes_in_use) + " bytes in " +
                std::to_string(during.num_allocations - before.num_allocations) + " allocations");
  if (during.peak_bytes_in_use < during.bytes_in_use) return fail("the peak is below the use");
  if (after.bytes_in_use != before.bytes_in_use || after.num_allocations != before.num_allocations)
    return fail("after freeing everything " + std::to_string(after.bytes_in_use) + " bytes in " +
                std::to_string(after.num_allocations) +
                " allocations remain (before: " + std::to_string(before.bytes_in_use) + ")");
  return pass("in use and allocation counts follow allocations and frees back to " +
              std::to_string(before.bytes_in_use) + " bytes");
}

Finding streams_and_events(const Context& c) {
  OnDevice d = on_device(c);
  if (d.unusable) return *d.unusable;
  RawPlugin& p = *d.plugin;
  const kiln_plugin_api& a = d.api();
  if (!a.stream_create || !a.event_create) return skip("no streams or events");
  if (!a.stream_destroy || !a.stream_synchronize || !a.event_destroy || !a.event_record ||
      !a.event_synchronize || !a.event_elapsed_ms)
    return fail(
        "streams and events are offered in part: create without record, wait, time "
        "or destroy");
  kiln_stream* s = nullptr;
  if (std::string e = p.take(a.stream_create(p.instance(), c.device, &s)); !e.empty())
    return fail("stream_create: " + e);
  kiln_event* start = nullptr;
  kiln_event* end = nullptr;
  if (std::string e = p.take(a.event_create(p.instance(), c.device, &start)); !e.empty())
    return fail("event_create: " + e);
  if (std::string e = p.take(a.event_create(p.instance(), c.device, &end)); !e.empty())
    return fail("event_create: " + e);
  double ms = -1;
  kiln_status code = KILN_OK;
  p.take(a.event_elapsed_ms(start, end, &ms), &code);
  if (code == KILN_OK) return fail("event_elapsed_ms of events never recorded succeeded");
  if (std::string e = p.take(a.event_record(start, s)); !e.empty()) return fail("record: " + e);
  if (std::string e = p.take(a.event_record(end, s)); !e.empty()) return fail("record: " + e);
  if (std::string e = p.take(a.event_synchronize(end)); !e.empty())
    return fail("event_synchronize: " + e);
  if (std::string e = p.take(a.stream_synchronize(s)); !e.empty())
    return fail("stream_synchronize: " + e);
  if (std::string e = p.take(a.event_elapsed_ms(start, end, &ms)); !e.empty())
    return fail("event_elapsed_ms: " + e);
  if (!(ms >= 0)) return fail("elapsed " + std::to_string(ms) + " ms between two records");
  a.event_destroy(start);
  a.event_destroy(end);
  a.stream_destroy(s);
  return pass("a stream, two events recorded and waited for, " + std::to_string(ms) +
              " ms apart; elapsed time of unrecorded events refused");
}

}  // namespace

void check_memory(const Context& c, Report& report) {
  const std::vector<std::pair<const char*, Finding (*)(const Context&)>> memory = {
      {"sizes and alignments", sizes_and_alignments},
      {"copies of odd sizes and offsets", copies},
      {"bounds", bounds},
      {"out of memory reported as such", out_of_memory},
      {"statistics and leaks", stats_and_leaks}};
  for (const auto& [name, check] : memory)
    report.add("memory", name, run_isolated([&] { return check(c); }, c.timeout_seconds));
  report.add("streams", "streams and events",
             run_isolated([&] { return streams_and_events(c); }, c.timeout_seconds));
}

}  // namespace kiln::conformance
