#include "core/runtime/compile.h"

#include <spdlog/spdlog.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>

#include "core/graph/graph_dump.h"
#include "core/lower/attention_library_call.h"
#include "core/lower/loop_ir_print.h"
#include "core/lower/matmul_kernel.h"
#include "core/ops/op_def.h"
#include "core/runtime/compile_units.h"
#include "core/runtime/compiled_graph_cache.h"
#include "core/runtime/compiled_graph_parts.h"
#include "core/runtime/debug_dump.h"
#include "core/runtime/device_roofline.h"
#include "core/runtime/execution_plan.h"
#include "core/runtime/placement.h"
#include "core/runtime/plugin_loader.h"
#include "core/sched/kernel_cost.h"
#include "core/sched/program_bytes.h"
#include "core/sched/schedule_graph.h"
#include "core/tune/kernel_tuner.h"
#include "core/tune/library_choice.h"
#include "core/tune/plugin_selection.h"

namespace kiln {

std::vector<std::string> extern_names(const Plugin& plugin) {
  if (!plugin.api().extern_names) return {};
  kiln_blob* blob = nullptr;
  if (!plugin.check(plugin.api().extern_names(plugin.instance(), &blob), "extern_names")) return {};
  return plugin.take_lines(blob);
}

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Each kernel's tuning config: autotuned when asked, else the plugin's default (""). Kernels
// placed on another plugin's device (`place` nonzero) run its default.
Result<std::vector<std::string>> tuned_configs(
    CompiledGraph::Parts& p, const std::vector<kir::Kernel>& batch, const std::vector<int>& place,
    const DiskCache& cache, const AutotuneOptions& autotune, const Logging& logging) {
  std::vector<std::string> configs(batch.size());
  std::vector<kir::Kernel> own;
  for (size_t i = 0; i < batch.size(); ++i)
    if (place[i] == 0) own.push_back(batch[i]);
  if (autotune.kernels == KernelTuning::Exhaustive && !own.empty()) {
    const auto start = std::chrono::steady_clock::now();
    auto tuned = tune_kernels(p.plugin, p.device, own, autotune, cache, logging);
    if (!tuned) return std::move(tuned).error();
    for (size_t i = 0, next = 0; i < batch.size(); ++i)
      if (place[i] == 0) configs[i] = (*tuned)[next++];
    p.stats.tune_ms = ms_since(start);
  }
  for (size_t i = 0; i < batch.size(); ++i)
    p.kernel_configs.push_back(batch[i].name + " " + configs[i]);
  return configs;
}

// The kernels placed on device `at` (0: the graph's own, k: helper k - 1): each unit's artifact
// from the kernel cache or that device's plugin, one executable per unit, and each launch step
// there pointed at its kernel's executable.
Status load_units_at(CompiledGraph::Parts& p, int at, const std::vector<kir::Kernel>& batch,
                     const std::vector<std::string>& configs, const std::vector<int>& place,
                     const DiskCache& cache, const Logging& logging, std::string& metadata,
                     std::string& code) {
  auto log = logging.get("runtime");
  const bool own = at == 0;
  const Plugin& plugin = own ? *p.plugin : *p.helpers[static_cast<size_t>(at - 1)].plugin;
  const uint32_t device = own ? p.device : p.helpers[static_cast<size_t>(at - 1)].device;
  std::vector<kiln_executable*>& executables =
      own ? p.executables : p.helpers[static_cast<size_t>(at - 1)].executables;
  std::vector<kir::Kernel> kernels;
  std::vector<std::string> kernel_configs;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (place[i] != at) continue;
    kernels.push_back(batch[i]);
    // A config is the serving plugin's (tuned for it, or recorded when it ran the kernel): a
    // helper runs its own default.
    kernel_configs.push_back(own ? configs[i] : "");
  }
  if (kernels.empty()) return Ok{};
  // Kernels alike but for their names compile once, under the first one's name.
  const std::vector<size_t> first = first_alike(kernels, kernel_configs);
  std::map<std::string, std::string> entry_of;
  std::vector<kir::Kernel> distinct;
  std::vector<std::string> distinct_configs;
  for (size_t i = 0; i < kernels.size(); ++i) {
    entry_of[kernels[i].name] = kernels[first[i]].name;
    if (first[i] != i) continue;
    distinct.push_back(kernels[i]);
    distinct_configs.push_back(kernel_configs[i]);
  }
  std::vector<CompileUnit> units = make_compile_units(
      distinct, distinct_configs, compiles_per_kernel(plugin),
      compiles_concurrently(plugin) ? static_cast<size_t>(tbb::this_task_arena::max_concurrency())
                                    : 1);
  const auto compile_start = std::chrono::steady_clock::now();
  if (auto s = compile_units(plugin, device, units, cache, &logging); !s) return s;
  const double compile_wall_ms = ms_since(compile_start);
  const auto load_start = std::chrono::steady_clock::now();
  std::map<std::string, int> unit_of;
  size_t cached = 0;
  double compile_ms = 0;
  for (size_t u = 0; u < units.size(); ++u) {
    const CompileUnit& unit = units[u];
    cached += unit.cache_hit;
    compile_ms += unit.compile_ms;
    metadata += unit.metadata.empty() ? "" : unit.metadata + "\n";
    code += generated_code(unit.metadata);
    for (const std::string& name : unit.names) unit_of[name] = static_cast<int>(u);
    if (auto s = plugin.require(plugin.api().load, "load"); !s) return s;
    kiln_executable* exe = nullptr;
    if (auto s = plugin.check(plugin.api().load(plugin.instance(), device, unit.artifact.data(),
                                                unit.artifact.size(), &exe),
                              "load");
        !s)
      return s;
    executables.push_back(exe);
  }
  // Loads run one unit after another (a GPU driver assembling PTX there would show here).
  const double load_ms = ms_since(load_start);
  p.stats.units += units.size();
  p.stats.distinct_kernels += distinct.size();
  p.stats.units_cached += cached;
  p.stats.compile_ms += compile_ms;
  for (PlanStep& s : p.plan) {
    if (s.kind != PlanStep::Kind::Launch || s.place != at) continue;
    const auto entry = entry_of.find(s.name);
    const auto it = entry == entry_of.end() ? unit_of.end() : unit_of.find(entry->second);
    if (it == unit_of.end())
      return Error::internal("kernel '" + s.name + "' is in no compile unit of '" + p.graph.name +
                             "'");
    s.executable = it->second;
    s.entry = entry->second == s.name ? "" : entry->second;
  }
  const std::string where = own ? "" : " on " + plugin.name();
  const std::string alike =
      distinct.size() < kernels.size() ? ", " + std::to_string(distinct.size()) + " distinct" : "";
  if (cached == units.size()) {
    log->info("kernel cache hit: {} kernels of '{}' in {} units{}{}, loaded in {:.0f} ms",
              kernels.size(), p.graph.name, units.size(), alike, where, load_ms);
  } else {
    log->info(
        "compiled {} kernels of '{}'{} ({} of {} units from the cache{}) in {:.0f} ms{}; {:.0f} ms "
        "from the first to the last unit, loaded in {:.0f} ms",
        kernels.size(), p.graph.name, where, cached, units.size(), alike, compile_ms,
        units.size() > 1 && compiles_concurrently(plugin) ? " of compile time, in parallel" : "",
        compile_wall_ms, load_ms);
  }
  return Ok{};
}

// Every kernel of `batch` compiled (or taken from the cache) and loaded on its device.
Status load_units(CompiledGraph::Parts& p, const std::vector<kir::Kernel>& batch,
                  const std::vector<std::string>& configs, const std::vector<int>& place,
                  const DiskCache& cache, const Logging& logging, const DebugDump& dump) {
  std::string metadata, code;
  for (int at = 0; at <= static_cast<int>(p.helpers.size()); ++at)
    if (auto s = load_units_at(p, at, batch, configs, place, cache, logging, metadata, code); !s)
      return s;
  p.stats.cache_hit = p.stats.units_cached == p.stats.units;
  dump.write("compile.json", metadata);
  if (!code.empty()) dump.write("code.txt", code);
  return Ok{};
}

Status upload_params(CompiledGraph::Parts& p) {
  p.resident.resize(p.program.buffers.size());
  for (size_t b = 0; b < p.program.buffers.size(); ++b) {
    const LoopBuffer& lb = p.program.buffers[b];
    if (lb.kind != BufferKind::Param) continue;
    const Value& v = p.graph.value(lb.value);
    auto it = p.graph.param_data.find(v.name);
    if (it == p.graph.param_data.end())
      return Error::user("parameter '" + v.name + "' has no data (missing from the weights?)");
    if (it->second.dtype() != v.type.dtype || it->second.sizes() != v.type.sizes) {
      return Error::user("parameter '" + v.name + "' is " + it->second.type().to_string() +
                         " but the graph says " + v.type.to_string());
    }
    auto buf = DeviceBuffer::allocate(
        p.plugin, p.device, static_cast<uint64_t>(std::max<int64_t>(buffer_bytes(lb), 1)));
    if (!buf) return std::move(buf).error();
    if (auto s = buf->upload(storage_bytes(it->second, v.type, lb.elements)); !s) return s;
    p.resident[b] = std::move(*buf);
  }
  return Ok{};
}

// The plugin's externs the plan may call (mm and bmm, or conv2d, dropped when the options say
// so).
std::vector<std::string> usable_externs(const Plugin& plugin, const ScheduleOptions& schedule) {
  std::vector<std::string> externs = extern_names(plugin);
  std::erase_if(externs, [&](const std::string& line) {
    const std::string name = line.substr(0, line.find(' '));
    return (!schedule.library_matmul && (name == "mm" || name == "bmm")) ||
           (!schedule.library_conv && name.rfind("conv2d", 0) == 0);
  });
  return externs;
}

// Whether `program` has library calls (placed by the plugin's extern list).
bool calls_externs(const LoopProgram& program) {
  return std::any_of(program.kernels.begin(), program.kernels.end(),
                     [](const LoopKernel& k) { return k.kind == LoopKernelKind::Extern; });
}

// What scheduling found, into the compile's statistics (logged as they are taken).
void take_schedule_stats(CompiledGraph::Parts& p, const CompiledGraphRecord& r,
                         const Logging& logging) {
  auto log = logging.get("runtime");
  p.stats.fallbacks = r.fallbacks;
  for (const auto& f : p.stats.fallbacks)
    log->info("no kernel for {}: it runs on the host oracle", f);
  p.stats.inlined = r.inlined;
  p.stats.merged = r.merged;
  p.stats.failures = r.failures;
  for (const FusionFailure& f : p.stats.failures) {
    log->debug("not fused: {}{}{} ({}): {}", f.producer, f.consumer.empty() ? "" : " + ",
               f.consumer, category_name(f.category), f.detail);
  }
  p.stats.bytes_unfused = r.bytes_unfused;
  p.stats.bytes_fused = r.bytes_fused;
}

// The plan, its arena and the KIR batch of p.program (a fresh one, or one from the cache).
Status plan_program(CompiledGraph::Parts& p, const std::vector<std::string>& externs,
                    std::vector<kir::Kernel>& batch, const DebugDump& dump) {
  if (auto s = build_plan(p, externs, batch); !s) return s;
  std::string memory_report;
  if (auto s = plan_arena(p, memory_report); !s) return s;
  dump.write("memory_plan.txt", memory_report);
  p.kir_text = kir::print(batch);
  dump.write("kir", p.kir_text);
  return Ok{};
}

// Decomposition to KIR: the graph scheduled and lowered, what its cache entry records, the
// plan made and its arena laid out, the kernels to generate in `batch`.
Status schedule_and_plan(CompiledGraph::Parts& p, const Graph& graph,
                         std::shared_ptr<const OpRegistry> registry,
                         const ScheduleOptions& schedule, const DebugDump& dump,
                         const Logging& logging, CompiledGraphRecord& record,
                         std::vector<kir::Kernel>& batch) {
  // Lowering asks for the plugin's library calls where its choices depend on them: a graph
  // with a 2-d convolution or an attention (or a softmax: attention written out, which
  // scheduling makes one), whose node becomes a library call where the plugin has one, and
  // any graph when matmuls may take TF32 products (a matmul's dtype code says so only where
  // the library lists tf32). Listing opens the libraries, which other graphs need not wait for.
  const bool asks = schedule.matmul_tf32 ||
                    std::any_of(graph.nodes.begin(), graph.nodes.end(), [](const Node& n) {
                      return n.op->name.find("conv") != std::string::npos ||
                             n.op->name == kAttentionOp || n.op->name == "aten._softmax.default";
                    });
  if (asks) {
    record.asked_externs = true;
    record.externs = usable_externs(*p.plugin, schedule);
  }
  const auto start = std::chrono::steady_clock::now();
  auto scheduled = schedule_graph(graph, std::move(registry), schedule, p.roofline, record.externs);
  if (!scheduled) return std::move(scheduled).error();
  logging.get("runtime")->info("scheduled '{}' in {:.0f} ms: {} nodes, {} kernels", graph.name,
                               ms_since(start), scheduled->graph.nodes.size(),
                               scheduled->program.kernels.size());
  dump.write("decomposed.txt", dump_graph(scheduled->graph));
  p.graph = std::move(scheduled->graph);
  p.program = std::move(scheduled->program);
  record.fallbacks = std::move(scheduled->fallbacks);
  record.inlined = scheduled->inlining.inlined;
  record.merged = static_cast<size_t>(scheduled->fusion.fused);
  record.failures = scheduled->failures();
  record.bytes_unfused = program_bytes(scheduled->unfused);
  record.bytes_fused = program_bytes(p.program);
  take_schedule_stats(p, record, logging);
  dump.write("unfused.loopir", print_loop_program(scheduled->unfused));
  dump.write("loopir", print_loop_program(p.program));
  dump.write("fusion_failures.csv", fusion_failures_csv(p.stats.failures));
  dump.write("kernels.csv", kernel_metadata_csv(p.program, p.roofline));

  // Asked only when there is an extern to place: a plugin may open its library lazily.
  if (!record.asked_externs) {
    record.asked_externs = calls_externs(p.program);
    if (record.asked_externs) record.externs = usable_externs(*p.plugin, schedule);
  }
  if (const int n = generate_missing_matmuls(p.program, record.externs); n > 0)
    logging.get("runtime")->info(
        "{} matmuls of '{}' run as generated kernels (plugin '{}' {})", n, graph.name,
        p.plugin->name(),
        schedule.library_matmul ? "has no matmul library" : "told not to use its library");
  return plan_program(p, record.externs, batch, dump);
}

// A graph compiled earlier, from its "graphs" entry: the decoded graph and program planned
// again, each kernel's config from the entry. An error means the entry cannot be used
// (damaged, or the plugin's externs changed): the caller compiles in full.
Status parts_from_cache(std::string_view entry, std::shared_ptr<const OpRegistry> registry,
                        CompiledGraph::Parts& p, const ScheduleOptions& schedule,
                        const Logging& logging, const DebugDump& dump,
                        std::vector<kir::Kernel>& batch, std::vector<std::string>& configs) {
  auto decoded = decode_compiled_graph(entry, std::move(registry));
  if (!decoded) return std::move(decoded).error();
  const CompiledGraphRecord& r = decoded->record;
  if ((r.asked_externs || calls_externs(decoded->program)) &&
      usable_externs(*p.plugin, schedule) != r.externs)
    return Error::user("plugin '" + p.plugin->name() +
                       "' offers other library calls than when the entry was made");
  p.graph = std::move(decoded->graph);
  p.program = std::move(decoded->program);
  take_schedule_stats(p, r, logging);
  if (auto s = plan_program(p, r.externs, batch, dump); !s) return s;
  if (r.kernel_configs.size() != batch.size())
    return Error::internal("compiled graph entry has configs for " +
                           std::to_string(r.kernel_configs.size()) + " kernels, its program " +
                           std::to_string(batch.size()));
  for (size_t i = 0; i < batch.size(); ++i) {
    const std::string& line = r.kernel_configs[i];
    if (line.rfind(batch[i].name + " ", 0) != 0)
      return Error::internal("compiled graph entry: config '" + line + "' is not kernel " +
                             batch[i].name + "'s");
    configs.push_back(line.substr(batch[i].name.size() + 1));
  }
  p.kernel_configs = r.kernel_configs;
  return Ok{};
}

std::unique_ptr<CompiledGraph::Parts> fresh_parts(std::shared_ptr<const Plugin> plugin,
                                                  uint32_t device, const Logging& logging) {
  auto parts = std::make_unique<CompiledGraph::Parts>();
  parts->log = logging.get("runtime");
  parts->stats.target = plugin->name() + ":" + std::to_string(device);
  parts->roofline = roofline_of(*plugin, device);
  parts->plugin = std::move(plugin);
  parts->device = device;
  return parts;
}

}  // namespace

Result<CompiledGraph> compile_for_device(
    const Graph& graph, std::shared_ptr<const OpRegistry> registry,
    std::shared_ptr<const Plugin> plugin, uint32_t device, const DiskCache& cache,
    const Logging& logging, const std::string& debug_dir, const ScheduleOptions& schedule,
    const AutotuneOptions& autotune, const std::vector<PlacementTarget>& helpers,
    PlacementPolicy placement) {
  auto log = logging.get("runtime");
  const DebugDump dump(debug_dir, graph.name);
  dump.write("graph.txt", dump_graph(graph));
  auto parts = fresh_parts(plugin, device, logging);
  std::vector<kir::Kernel> batch;
  std::vector<std::string> configs;
  // With debug dumps asked for, every stage runs (and is dumped); the entry is still written.
  const auto key = compiled_graph_key(graph, *plugin, device, schedule, autotune);
  bool from_cache = false;
  if (key && debug_dir.empty()) {
    if (auto entry = cache.get(*key)) {
      auto s = parts_from_cache(*entry, registry, *parts, schedule, logging, dump, batch, configs);
      from_cache = s.has_value();
      if (!from_cache) {
        log->warn("compiled graph entry {} not used ({}); compiling '{}' again",
                  cache.path_of(*key), s.error().message(), graph.name);
        parts = fresh_parts(plugin, device, logging);
        batch.clear();
        configs.clear();
      }
    }
  }
  CompiledGraphRecord record;
  std::vector<int> place(batch.size(), 0);
  const auto placed = [&]() -> Status {
    auto where = place_kernels(*parts, batch, helpers, placement, cache, logging);
    if (!where) return std::move(where).error();
    place = std::move(*where);
    return Ok{};
  };
  if (from_cache) {
    if (auto s = placed(); !s) return std::move(s).error();
  } else {
    if (auto s = schedule_and_plan(*parts, graph, registry, schedule, dump, logging, record, batch);
        !s)
      return std::move(s).error();
    // Library calls the autotuner times slower than generated kernels are declined, and the
    // graph lowered again without them.
    if (autotune.kernels == KernelTuning::Exhaustive && autotune.libraries) {
      auto declined = declined_library_calls(parts->graph, parts->program, registry, plugin, device,
                                             cache, logging, schedule, autotune);
      if (!declined) return std::move(declined).error();
      if (!declined->empty()) {
        ScheduleOptions chosen = schedule;
        chosen.declined_library_calls = std::move(*declined);
        parts = fresh_parts(plugin, device, logging);
        batch.clear();
        record = CompiledGraphRecord{};
        if (auto s =
                schedule_and_plan(*parts, graph, registry, chosen, dump, logging, record, batch);
            !s)
          return std::move(s).error();
      }
    }
    if (auto s = placed(); !s) return std::move(s).error();
    auto tuned = tuned_configs(*parts, batch, place, cache, autotune, logging);
    if (!tuned) return std::move(tuned).error().with_context("compiling '" + graph.name + "'");
    configs = std::move(*tuned);
  }
  if (std::any_of(place.begin(), place.end(), [](int d) { return d != 0; })) {
    for (const PlacementTarget& h : helpers) parts->helpers.push_back({h.plugin, h.device, {}});
    plan_transfers(*parts, batch, place);
  }
  if (!batch.empty()) {
    if (auto s = load_units(*parts, batch, configs, place, cache, logging, dump); !s)
      return std::move(s).error().with_context("compiling '" + graph.name + "'");
  }
  parts->stats.graph_cache_hit = from_cache;
  if (from_cache) {
    log->info("compiled graph cache hit: '{}' ({} kernels in {} units)", graph.name, batch.size(),
              parts->stats.units);
  } else if (key) {
    record.kernel_configs = parts->kernel_configs;
    cache.put(*key, encode_compiled_graph(parts->graph, parts->program, record));
  }
  parts->graph.param_data = graph.param_data;  // weights are not part of an entry
  if (auto s = upload_params(*parts); !s) return std::move(s).error();
  return CompiledGraph(std::move(parts));
}

DiskCache open_cache(const Options& options, const Logging& logging) {
  return DiskCache(options.cache.enabled ? options.cache.dir : "",
                   options.cache.max_size_mb * 1024 * 1024, logging.get("cache"));
}

Result<CompiledGraph> compile(const Graph& graph, std::shared_ptr<const OpRegistry> registry,
                              const Options& options, const Logging& logging) {
  const auto load_start = std::chrono::steady_clock::now();
  const LoadedPlugins loaded = load_plugins(options, logging);
  const double load_ms = ms_since(load_start);
  for (const auto& f : loaded.failures)
    logging.get("runtime")->warn("plugin '{}' did not load: {}", f.name, f.error.message());
  auto compiled =
      compile_with(graph, registry, loaded, options, open_cache(options, logging), logging);
  if (compiled) compiled->set_plugin_load_ms(load_ms);
  return compiled;
}

Result<CompiledGraph> compile_with(const Graph& graph, std::shared_ptr<const OpRegistry> registry,
                                   const LoadedPlugins& loaded, const Options& options,
                                   const DiskCache& cache, const Logging& logging) {
  if (options.selection.mode == SelectionMode::Plugin) {
    bool found = false;
    std::string names;
    for (const auto& plugin : loaded.plugins) {
      found = found || plugin->name() == options.selection.plugin;
      names += (names.empty() ? "" : ", ") + plugin->name();
    }
    if (!found)
      return Error::user("no plugin named '" + options.selection.plugin + "' is loaded (loaded: " +
                         (names.empty() ? "none" : names) + "); see `kiln plugins`");
  }
  std::string looked_at;
  std::vector<SelectionCandidate> candidates;
  for (const DeviceRef& want : options.devices) {
    const size_t before = candidates.size();
    for (const auto& plugin : loaded.plugins) {
      if (options.selection.mode == SelectionMode::Plugin &&
          plugin->name() != options.selection.plugin)
        continue;
      uint32_t seen = 0;
      for (const DeviceInfo& d : plugin->devices()) {
        if (d.kind != want.kind) continue;
        if (seen++ != want.index) continue;
        candidates.push_back({plugin, d.index, plugin->name() + " " + want.to_string()});
      }
    }
    // Configs name devices a machine may lack (a fleet shares one): skipped, and said so.
    if (candidates.size() == before)
      logging.get("runtime")->info(
          "configured device {} is absent (no loaded plugin reports it); "
          "skipped",
          want.to_string());
    looked_at += (looked_at.empty() ? "" : ", ") + want.to_string();
  }
  if (!candidates.empty()) {
    if (candidates.size() > 1 && options.selection.mode == SelectionMode::Autotune)
      return select_and_compile(graph, registry, candidates, options, cache, logging);
    // The first device serves the graph; the others run what its plugin declines.
    std::vector<PlacementTarget> helpers;
    for (size_t i = 1; i < candidates.size(); ++i)
      helpers.push_back({candidates[i].plugin, candidates[i].device});
    const SelectionCandidate& c = candidates.front();
    return compile_for_device(graph, registry, c.plugin, c.device, cache, logging,
                              options.debug_dir, options.schedule, options.autotune, helpers,
                              options.placement);
  }
  // A plugin that failed to load usually says why nothing serves: say it here too.
  std::string failures;
  for (const PluginLoadFailure& f : loaded.failures) failures += "; " + f.error.message();
  return Error::user("no loaded plugin serves any configured device (" + looked_at + ")" +
                     failures + "; see `kiln plugins`");
}

}  // namespace kiln
