#include "core/tune/kernel_tuner.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <sstream>

#include "core/kir/kir_hash.h"
#include "core/runtime/compile_units.h"
#include "core/runtime/device_buffer.h"
#include "core/runtime/device_timer.h"
#include "core/support/median.h"
#include "core/tune/candidate_check.h"
#include "core/tune/tuning_inputs.h"

namespace kiln {
namespace {

constexpr size_t kBufferSets = 3;  // rotated, so a launch does not find its inputs in cache
// A config other than the default wins only when its median is this much faster: closer
// than that is timing noise, and the default (the plugin's heuristic) keeps the kernel.
constexpr double kNoiseMargin = 0.03;

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

// Buffers for one launch of `k` holding `inputs` (tuning_inputs.h).
Result<std::vector<DeviceBuffer>> launch_buffers(std::shared_ptr<const Plugin> plugin,
                                                 uint32_t device, const kir::Kernel& k,
                                                 const std::vector<HostTensor>& inputs) {
  std::vector<DeviceBuffer> out;
  for (size_t b = 0; b < k.buffers.size(); ++b) {
    const kir::Buffer& buffer = k.buffers[b];
    const int64_t bytes = buffer.elements * kir::dtype_size(buffer.dtype);
    auto buf =
        DeviceBuffer::allocate(plugin, device, static_cast<uint64_t>(std::max<int64_t>(bytes, 1)));
    if (!buf) return std::move(buf).error();
    if (buffer.role != kir::Role::Out && bytes > 0)
      if (auto s = buf->upload_at(0, inputs[b].bytes()); !s) return std::move(s).error();
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
       {"protocol", fmt::format("warmup={} reps={} sets={} budget_ms={} checked realistic",
                                o.warmup, o.reps, kBufferSets, o.budget_ms)}}};
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
  std::vector<std::vector<HostTensor>> inputs;
  std::vector<std::vector<DeviceBuffer>> sets;
  for (size_t i = 0; i < kBufferSets; ++i) {
    inputs.push_back(tuning_inputs(k, 7919 * (i + 1)));
    auto set = launch_buffers(plugin, device, k, inputs.back());
    if (!set) return std::move(set).error();
    sets.push_back(std::move(*set));
  }
  auto timer = DeviceTimer::create(plugin, device, 2);
  if (!timer) return std::move(timer).error();

  // The default config's outputs (and, for configs that may round differently, its outputs
  // on the inputs' magnitudes) are what every other candidate must reproduce.
  std::vector<HostTensor> expected, magnitude;
  const bool any_inexact = std::any_of(candidates.begin(), candidates.end(),
                                       [](const TuningCandidate& c) { return !c.exact; });
  const auto start = std::chrono::steady_clock::now();
  double default_ms = std::numeric_limits<double>::infinity();
  double best = default_ms;
  std::string winner = candidates[0].config, table;
  size_t timed = 0;
  for (size_t i = 0; i < units.size(); ++i) {
    const double spent =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (i > 0 && spent > static_cast<double>(o.budget_ms)) {
      table += fmt::format("\n    {:>9}  {} more configs past the budget of {} ms", "skipped",
                           units.size() - i, o.budget_ms);
      break;
    }
    kiln_executable* exe = nullptr;
    Status loaded =
        plugin->check(plugin->api().load(plugin->instance(), device, units[i].artifact.data(),
                                         units[i].artifact.size(), &exe),
                      "load");
    std::string wrong;
    Result<double> ms = Error::internal("not timed");
    if (loaded) {
      auto outputs = launch_outputs(*plugin, exe, k, sets[0], inputs[0]);
      if (outputs && i == 0) {
        expected = std::move(*outputs);
        if (any_inexact) {
          auto m = launch_outputs(*plugin, exe, k, sets[0], magnitudes_of(inputs[0]));
          if (m) magnitude = std::move(*m);
        }
      } else if (outputs) {
        wrong = output_mismatch(k, *outputs, expected, magnitude, candidates[i].exact);
      } else {
        loaded = std::move(outputs).error();
      }
      // The check changed the first set's buffers: upload its inputs again.
      for (size_t b = 0; loaded && b < k.buffers.size(); ++b)
        if (k.buffers[b].role != kir::Role::Out && inputs[0][b].numel() > 0)
          loaded = sets[0][b].upload_at(0, inputs[0][b].bytes());
      if (loaded && wrong.empty()) ms = time_config(*plugin, exe, k, sets, *timer, o);
    }
    if (exe) plugin->api().executable_destroy(exe);
    if (!loaded) ms = std::move(loaded).error();
    if (i == 0 && !ms) {
      // Data the kernel refuses (a position no check bounds): nothing to compare against, and
      // no reason to fail a compile the default config serves.
      log.warn("not tuning {}: the default config fails on tuning data ({})", k.name,
               ms.error().message());
      return winner;
    }
    if (!wrong.empty()) {  // never a winner, however fast
      table += fmt::format("\n    {:>9}  {}  ({})", "wrong", units[i].config, wrong);
      continue;
    }
    if (!ms) {  // a config the device rejects is no winner, not a failed compile
      table +=
          fmt::format("\n    {:>9}  {}  ({})", "failed", units[i].config, ms.error().message());
      continue;
    }
    ++timed;
    table += fmt::format("\n    {:>9.4f}  {}", *ms, units[i].config);
    if (i == 0) {
      default_ms = best = *ms;
    } else if (*ms < best && *ms < default_ms * (1 - kNoiseMargin)) {
      best = *ms;
      winner = units[i].config;
    }
  }
  log.info("tuned {}: {} of {} configs ({} timed), median ms per launch:{}\n    winner: {}", k.name,
           o.deterministic ? "exact" : "all", candidates.size(), timed, table, winner);
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
