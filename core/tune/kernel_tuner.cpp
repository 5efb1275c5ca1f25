#include "core/tune/kernel_tuner.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <sstream>

#include "core/interp/random_tensor.h"
#include "core/kir/kir_hash.h"
#include "core/runtime/compile_units.h"
#include "core/runtime/device_buffer.h"
#include "core/runtime/device_timer.h"
#include "core/support/median.h"

namespace kiln {
namespace {

constexpr size_t kBufferSets = 3;  // rotated, so a launch does not find its inputs in cache

std::vector<std::string> space_lines(const Plugin& plugin, uint32_t device,
                                     const std::string& text) {
  const kiln_plugin_api& api = plugin.api();
  if (!api.tuning_space) return {};
  kiln_blob* blob = nullptr;
  if (!plugin.check(api.tuning_space(plugin.instance(), device, text.c_str(), text.size(), &blob),
                    "tuning_space"))
    return {};
  return plugin.take_lines(blob);
}

// Buffers for one launch of `k`, inputs filled with fresh random values.
Result<std::vector<DeviceBuffer>> launch_buffers(std::shared_ptr<const Plugin> plugin,
                                                 uint32_t device, const kir::Kernel& k,
                                                 uint64_t seed) {
  std::vector<DeviceBuffer> out;
  for (const kir::Buffer& b : k.buffers) {
    const auto dtype = static_cast<DType>(b.dtype);
    const int64_t bytes = b.elements * kir::dtype_size(b.dtype);
    auto buf =
        DeviceBuffer::allocate(plugin, device, static_cast<uint64_t>(std::max<int64_t>(bytes, 1)));
    if (!buf) return std::move(buf).error();
    if (b.role != kir::Role::Out && bytes > 0) {
      const bool fp = kir::is_float(b.dtype);
      const HostTensor t = random_tensor(TensorType::contiguous(dtype, {b.elements}), seed++,
                                         fp ? std::pair{-1.0, 1.0} : std::pair{0.0, 1.0});
      if (auto s = buf->upload(t.bytes()); !s) return std::move(s).error();
    }
    out.push_back(std::move(*buf));
  }
  return out;
}

// Median ms of one config's launches under the protocol.
Result<double> time_config(const Plugin& plugin, kiln_executable* exe, const kir::Kernel& k,
                           const std::vector<std::vector<DeviceBuffer>>& sets, DeviceTimer& timer,
                           const AutotuneOptions& o) {
  auto launch = [&](size_t set) {
    std::vector<uint64_t> addresses;
    for (const DeviceBuffer& b : sets[set]) addresses.push_back(b.address());
    kiln_launch_args args{
        sizeof(args), k.name.c_str(), addresses.data(), addresses.size(), nullptr, 0, nullptr};
    return plugin.check(plugin.api().launch(exe, &args), "launch of " + k.name);
  };
  for (int64_t i = 0; i < o.warmup; ++i)
    if (auto s = launch(static_cast<size_t>(i) % sets.size()); !s) return std::move(s).error();
  std::vector<double> samples;
  for (int64_t i = 0; i < o.reps; ++i) {
    if (auto s = timer.mark(0); !s) return std::move(s).error();
    if (auto s = launch(static_cast<size_t>(i) % sets.size()); !s) return std::move(s).error();
    if (auto s = timer.mark(1); !s) return std::move(s).error();
    auto spans = timer.spans(1);
    if (!spans) return std::move(spans).error();
    samples.push_back(spans->at(0));
  }
  return median(std::move(samples));
}

Result<std::string> tune_kernel(std::shared_ptr<const Plugin> plugin, uint32_t device,
                                const kir::Kernel& k, const AutotuneOptions& o,
                                const DiskCache& cache, spdlog::logger& log) {
  const std::string text = kir::print({k});
  std::vector<TuningCandidate> candidates;
  for (const std::string& line : space_lines(*plugin, device, text)) {
    TuningCandidate c = read_candidate(line);
    if (c.exact || !o.deterministic) candidates.push_back(c);
  }
  if (candidates.size() <= 1) return candidates.empty() ? std::string() : candidates[0].config;
  std::string all;
  for (const TuningCandidate& c : candidates) all += c.config + "\n";
  const CacheKey key{
      "tune",
      {{"kir_hash", kir_hash(text)},
       {"device", device_label(*plugin, device)},
       {"compiler_fingerprint", plugin->attributes().compiler_fingerprint},
       {"candidates", kir_hash(all)},
       {"protocol", fmt::format("warmup={} reps={} sets={}", o.warmup, o.reps, kBufferSets)}}};
  if (auto hit = cache.get(key)) return *hit;

  std::vector<CompileUnit> units;
  for (const TuningCandidate& c : candidates) {
    CompileUnit unit;
    unit.kernels = {0};
    unit.names = {k.name};
    unit.config = c.config;
    unit.text = text;
    units.push_back(std::move(unit));
  }
  if (auto s = compile_units(*plugin, device, units, cache); !s) return std::move(s).error();
  std::vector<std::vector<DeviceBuffer>> sets;
  for (size_t i = 0; i < kBufferSets; ++i) {
    auto set = launch_buffers(plugin, device, k, 7919 * (i + 1));
    if (!set) return std::move(set).error();
    sets.push_back(std::move(*set));
  }
  auto timer = DeviceTimer::create(plugin, device, 2);
  if (!timer) return std::move(timer).error();
  double best = std::numeric_limits<double>::infinity();
  std::string winner = candidates[0].config, table;
  for (size_t i = 0; i < units.size(); ++i) {
    kiln_executable* exe = nullptr;
    Status loaded =
        plugin->check(plugin->api().load(plugin->instance(), device, units[i].artifact.data(),
                                         units[i].artifact.size(), &exe),
                      "load");
    Result<double> ms = loaded ? time_config(*plugin, exe, k, sets, *timer, o)
                               : Result<double>(std::move(loaded).error());
    if (exe) plugin->api().executable_destroy(exe);
    if (!ms) {  // a config the device rejects is no winner, not a failed compile
      table +=
          fmt::format("\n    {:>9}  {}  ({})", "failed", units[i].config, ms.error().message());
      continue;
    }
    table += fmt::format("\n    {:>9.4f}  {}", *ms, units[i].config);
    if (*ms < best) best = *ms, winner = units[i].config;
  }
  log.info("tuned {}: {} of {} configs, median ms per launch:{}\n    winner: {}", k.name,
           o.deterministic ? "exact" : "all", candidates.size(), table, winner);
  cache.put(key, winner);
  return winner;
}

}  // namespace

TuningCandidate read_candidate(const std::string& line) {
  TuningCandidate c;
  std::istringstream words(line);
  for (std::string pair; words >> pair;) {
    if (pair == "exact=0") {
      c.exact = false;
    } else if (pair != "exact=1") {
      c.config += (c.config.empty() ? "" : " ") + pair;
    }
  }
  return c;
}

Result<std::vector<std::string>> tune_kernels(std::shared_ptr<const Plugin> plugin, uint32_t device,
                                              const std::vector<kir::Kernel>& kernels,
                                              const AutotuneOptions& options,
                                              const DiskCache& cache, const Logging& logging) {
  auto log = logging.get("tune");
  std::vector<std::string> configs;
  for (const kir::Kernel& k : kernels) {
    if (!plugin->api().launch || !plugin->api().load) return Error::user("plugin cannot launch");
    auto c = tune_kernel(plugin, device, k, options, cache, *log);
    if (!c) return std::move(c).error().with_context("tuning " + k.name);
    configs.push_back(std::move(*c));
  }
  return configs;
}

}  // namespace kiln
