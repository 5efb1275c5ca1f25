#include "core/runtime/smoke_test.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "core/runtime/device_buffer.h"

namespace kiln {
namespace {

std::vector<std::byte> random_bytes(uint64_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> data(bytes);
  for (auto& b : data) b = static_cast<std::byte>(rng() & 0xff);
  return data;
}

// Host-side owner of a plugin object destroyed by one of the table's destroy functions.
template <class T>
struct Owned {
  T* handle = nullptr;
  void (*destroy)(T*) = nullptr;
  ~Owned() {
    if (handle != nullptr && destroy != nullptr) destroy(handle);
  }
};

SmokeStep time_copy_with_events(const Plugin& plugin, uint32_t device, const DeviceBuffer& dst,
                                const DeviceBuffer& src) {
  const auto& api = plugin.api();
  if (!api.event_create || !api.event_record || !api.event_synchronize || !api.event_elapsed_ms ||
      !api.event_destroy) {
    return {"timed copy", true, "skipped: the plugin has no events"};
  }
  Owned<kiln_event> start{nullptr, api.event_destroy};
  Owned<kiln_event> end{nullptr, api.event_destroy};
  double ms = 0;
  Status status =
      plugin.check(api.event_create(plugin.instance(), device, &start.handle), "event_create");
  if (status)
    status = plugin.check(api.event_create(plugin.instance(), device, &end.handle), "event_create");
  if (status) status = plugin.check(api.event_record(start.handle, nullptr), "event_record");
  if (status) status = dst.copy_from(src);
  if (status) status = plugin.check(api.event_record(end.handle, nullptr), "event_record");
  if (status) status = plugin.check(api.event_synchronize(end.handle), "event_synchronize");
  if (status)
    status = plugin.check(api.event_elapsed_ms(start.handle, end.handle, &ms), "event_elapsed_ms");
  if (!status) return {"timed copy", false, status.error().to_string()};
  if (!(ms >= 0)) return {"timed copy", false, fmt::format("negative elapsed time {} ms", ms)};
  return {"timed copy", true, fmt::format("{:.3f} ms", ms)};
}

SmokeStep memory_stats(const Plugin& plugin, uint32_t device, uint64_t expected_at_least) {
  const auto& api = plugin.api();
  if (!api.memory_stats) return {"memory stats", true, "skipped: the plugin has no memory_stats"};
  kiln_memory_stats stats{};
  stats.struct_size = sizeof(stats);
  if (auto s = plugin.check(api.memory_stats(plugin.instance(), device, &stats), "memory_stats");
      !s) {
    return {"memory stats", false, s.error().to_string()};
  }
  if (stats.bytes_in_use < expected_at_least) {
    return {"memory stats", false,
            fmt::format("{} bytes in use, but {} are allocated", stats.bytes_in_use,
                        expected_at_least)};
  }
  return {"memory stats", true,
          fmt::format("{} bytes in use, peak {}", stats.bytes_in_use, stats.peak_bytes_in_use)};
}

}  // namespace

bool SmokeReport::passed() const {
  return std::all_of(steps.begin(), steps.end(), [](const SmokeStep& s) { return s.passed; });
}

SmokeReport smoke_test(const std::shared_ptr<const Plugin>& plugin, uint32_t device, uint64_t bytes,
                       uint64_t seed) {
  SmokeReport report{
      plugin->name(), plugin->devices().at(device).kind + ":" + std::to_string(device), {}};
  auto fail = [&](std::string step, const Error& e) {
    report.steps.push_back({std::move(step), false, e.to_string()});
    return report;
  };
  auto a = DeviceBuffer::allocate(plugin, device, bytes);
  if (!a) return fail("allocate", a.error());
  auto b = DeviceBuffer::allocate(plugin, device, bytes);
  if (!b) return fail("allocate", b.error());
  report.steps.push_back({"allocate", true, fmt::format("2 x {} bytes", bytes)});

  const std::vector<std::byte> pattern = random_bytes(bytes, seed);
  if (auto s = a->upload(pattern); !s) return fail("upload", s.error());
  report.steps.push_back({"upload", true, ""});
  report.steps.push_back(time_copy_with_events(*plugin, device, *b, *a));
  if (!report.steps.back().passed) return report;
  report.steps.push_back(memory_stats(*plugin, device, 2 * bytes));

  // Poison the host side first, so a download that writes nothing cannot pass.
  std::vector<std::byte> back(bytes, std::byte{0xA5});
  if (auto s = b->download(back); !s) return fail("download", s.error());
  const bool same = std::memcmp(back.data(), pattern.data(), bytes) == 0;
  report.steps.push_back(
      {"round trip", same, same ? "bytes match" : "bytes differ after the round trip"});
  return report;
}

}  // namespace kiln
