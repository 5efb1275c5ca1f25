#include "core/runtime/compile.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "core/graph/graph_dump.h"
#include "core/kir/kir_emit.h"
#include "core/kir/kir_hash.h"
#include "core/lower/loop_ir_print.h"
#include "core/lower/matmul_kernel.h"
#include "core/memory/memory_plan.h"
#include "core/runtime/compile_units.h"
#include "core/runtime/compiled_graph_cache.h"
#include "core/runtime/compiled_graph_parts.h"
#include "core/runtime/debug_dump.h"
#include "core/runtime/plugin_loader.h"
#include "core/sched/kernel_cost.h"
#include "core/sched/program_bytes.h"
#include "core/sched/schedule_graph.h"
#include "core/tune/kernel_tuner.h"
#include "core/tune/plugin_selection.h"

namespace kiln {
namespace {

std::vector<std::string> extern_names(const Plugin& plugin) {
  if (!plugin.api().extern_names) return {};
  kiln_blob* blob = nullptr;
  if (!plugin.check(plugin.api().extern_names(plugin.instance(), &blob), "extern_names")) return {};
  return plugin.take_lines(blob);
}

// Kernels the plugin generates (batched into one compile), externs it implements, and
// everything else on the host oracle.
void build_plan(CompiledGraph::Parts& p, const std::vector<std::string>& externs,
                std::vector<kir::Kernel>& batch) {
  const LoopProgram& prog = p.program;
  std::vector<int> last_use(prog.buffers.size(), -1);
  std::vector<bool> allocated(prog.buffers.size(), false);
  std::vector<PlanStep> steps;
  for (size_t ki = 0; ki < prog.kernels.size(); ++ki) {
    const LoopKernel& k = prog.kernels[ki];
    PlanStep s;
    s.name = k.name;
    s.kernel = static_cast<int>(ki);
    if (k.kind != LoopKernelKind::Extern) {
      EmittedKernel e = emit_kir(k, prog);
      s.kind = PlanStep::Kind::Launch;
      s.buffers = e.buffers;
      batch.push_back(std::move(e.kernel));
    } else if (k.extern_name != "reference" && extern_available(externs, k)) {
      s.kind = PlanStep::Kind::Extern;
      s.name = k.extern_name;
      s.buffers = k.extern_inputs;
      s.buffers.insert(s.buffers.end(), k.extern_outputs.begin(), k.extern_outputs.end());
      for (const auto& [key, value] : k.attrs) s.params.push_back(value);
    } else {
      if (k.node < 0) continue;  // cannot happen: every extern records its node
      s.kind = PlanStep::Kind::Host;
      s.node = k.node;
      s.buffers = k.extern_inputs;
      s.buffers.insert(s.buffers.end(), k.extern_outputs.begin(), k.extern_outputs.end());
      if (k.extern_name != "reference")
        p.stats.fallbacks.push_back(k.origin + " (" + k.extern_name + ")");
    }
    for (int b : kernel_writes(k)) {
      if (!allocated[static_cast<size_t>(b)] &&
          prog.buffers[static_cast<size_t>(b)].kind == BufferKind::Temp) {
        allocated[static_cast<size_t>(b)] = true;
        PlanStep a;
        a.kind = PlanStep::Kind::Allocate;
        a.buffer = b;
        steps.push_back(a);
      }
    }
    for (int b : s.buffers) last_use[static_cast<size_t>(b)] = static_cast<int>(steps.size());
    steps.push_back(std::move(s));
  }
  for (int b : prog.outputs) last_use[static_cast<size_t>(b)] = static_cast<int>(steps.size());
  // A temp buffer is freed right after its last use.
  for (size_t i = 0; i < steps.size(); ++i) {
    p.plan.push_back(steps[i]);
    for (size_t b = 0; b < prog.buffers.size(); ++b) {
      if (last_use[b] == static_cast<int>(i) && prog.buffers[b].kind == BufferKind::Temp) {
        PlanStep f;
        f.kind = PlanStep::Kind::Free;
        f.buffer = static_cast<int>(b);
        p.plan.push_back(f);
      }
    }
  }
  for (const PlanStep& s : p.plan) {
    p.stats.kernels += s.kind == PlanStep::Kind::Launch;
    p.stats.externs += s.kind == PlanStep::Kind::Extern;
    p.stats.host_steps += s.kind == PlanStep::Kind::Host;
  }
}

// The device's bandwidth and peak from its plugin properties (0 where not reported).
Roofline roofline_of(const DeviceInfo& device) {
  auto number = [&](const char* key) {
    const DeviceProperty* p = device.find(key);
    if (!p) return 0.0;
    if (const auto* d = std::get_if<double>(&p->value)) return *d;
    if (const auto* i = std::get_if<int64_t>(&p->value)) return static_cast<double>(*i);
    return 0.0;
  };
  return {number("bandwidth_gbps"), number("peak_gflops_f32")};
}

// In place: an elementwise kernel whose temporary input dies right after it may write its
// output (allocated right before it, same size) over that input. The input's lifetime then
// ends where the output's begins, and the output's allocation is not poisoned.
void mark_in_place(CompiledGraph::Parts& p, std::vector<BufferLifetime>& lifetimes,
                   const std::vector<int>& slot) {
  std::vector<bool> taken(lifetimes.size(), false);
  for (size_t i = 0; i < p.plan.size(); ++i) {
    const PlanStep& launch = p.plan[i];
    if (launch.kind != PlanStep::Kind::Launch || launch.kernel < 0) continue;
    const LoopKernel& k = p.program.kernels[static_cast<size_t>(launch.kernel)];
    for (size_t a = i; a-- > 0 && p.plan[a].kind == PlanStep::Kind::Allocate;) {
      const int out = slot[static_cast<size_t>(p.plan[a].buffer)];
      for (size_t f = i + 1; f < p.plan.size() && p.plan[f].kind == PlanStep::Kind::Free; ++f) {
        const int in = slot[static_cast<size_t>(p.plan[f].buffer)];
        if (out < 0 || in < 0 || taken[static_cast<size_t>(in)] ||
            lifetimes[static_cast<size_t>(in)].bytes != lifetimes[static_cast<size_t>(out)].bytes ||
            dtype_size(p.program.buffers[static_cast<size_t>(p.plan[f].buffer)].dtype) !=
                dtype_size(p.program.buffers[static_cast<size_t>(p.plan[a].buffer)].dtype) ||
            !reads_only_where_written(k, p.plan[f].buffer, p.plan[a].buffer))
          continue;
        taken[static_cast<size_t>(in)] = true;
        lifetimes[static_cast<size_t>(in)].last = lifetimes[static_cast<size_t>(out)].first;
        lifetimes[static_cast<size_t>(out)].may_reuse = in;
        p.plan[a].in_place = true;
        break;
      }
    }
  }
}

// Lifetimes of the temporaries over the plan (an output lives to the end, when it is read
// back), and their places in one arena.
Status plan_arena(CompiledGraph::Parts& p, std::string& report) {
  const LoopProgram& prog = p.program;
  std::vector<int> first(prog.buffers.size(), -1), last(prog.buffers.size(), -1);
  const int end = static_cast<int>(p.plan.size());
  for (int i = 0; i < end; ++i) {
    const PlanStep& s = p.plan[static_cast<size_t>(i)];
    if (s.kind == PlanStep::Kind::Allocate) first[static_cast<size_t>(s.buffer)] = i;
    if (s.kind == PlanStep::Kind::Free) last[static_cast<size_t>(s.buffer)] = i;
  }
  std::vector<BufferLifetime> lifetimes;
  std::vector<int> which, slot(prog.buffers.size(), -1);
  for (size_t b = 0; b < prog.buffers.size(); ++b) {
    if (first[b] < 0) continue;
    slot[b] = static_cast<int>(lifetimes.size());
    lifetimes.push_back({buffer_bytes(prog.buffers[b]), first[b], last[b] < 0 ? end : last[b]});
    which.push_back(static_cast<int>(b));
  }
  mark_in_place(p, lifetimes, slot);
  const MemoryPlan plan = plan_memory(lifetimes);
  // Checked every time: a wrong offset would corrupt results silently.
  if (const std::string why = verify_memory_plan(lifetimes, plan); !why.empty())
    return Error::internal("memory plan of '" + p.graph.name + "': " + why);
  p.arena_offset.assign(prog.buffers.size(), -1);
  for (size_t i = 0; i < which.size(); ++i)
    p.arena_offset[static_cast<size_t>(which[i])] = plan.offsets[i];
  p.stats.arena_bytes = plan.arena_bytes;
  p.stats.naive_bytes = plan.naive_bytes;
  p.stats.in_place = plan.in_place;
  report = "arena " + std::to_string(plan.arena_bytes) + " bytes (naive " +
           std::to_string(plan.naive_bytes) + "); plan steps " + std::to_string(end) + "\n" +
           "buffer,bytes,first_step,last_step,offset\n";
  for (size_t i = 0; i < which.size(); ++i) {
    report += prog.buffers[static_cast<size_t>(which[i])].name + "," +
              std::to_string(lifetimes[i].bytes) + "," + std::to_string(lifetimes[i].first) + "," +
              std::to_string(lifetimes[i].last) + "," + std::to_string(plan.offsets[i]) + "\n";
  }
  return Ok{};
}

// The batch's compile units with their tuning configs (autotuned when asked).
Result<std::vector<CompileUnit>> kernel_units(CompiledGraph::Parts& p,
                                              const std::vector<kir::Kernel>& batch,
                                              const DiskCache& cache,
                                              const AutotuneOptions& autotune,
                                              const Logging& logging) {
  std::vector<std::string> configs(batch.size());
  if (autotune.kernels == KernelTuning::Exhaustive) {
    const auto start = std::chrono::steady_clock::now();
    auto tuned = tune_kernels(p.plugin, p.device, batch, autotune, cache, logging);
    if (!tuned) return std::move(tuned).error();
    configs = std::move(*tuned);
    p.stats.tune_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  for (size_t i = 0; i < batch.size(); ++i)
    p.kernel_configs.push_back(batch[i].name + " " + configs[i]);
  return make_compile_units(batch, configs, compiles_per_kernel(*p.plugin));
}

// Each unit's artifact from the kernel cache or the plugin, one executable per unit, and each
// launch step pointed at its kernel's executable.
Status load_units(CompiledGraph::Parts& p, std::vector<CompileUnit>& units, const DiskCache& cache,
                  const Logging& logging, const DebugDump& dump) {
  auto log = logging.get("runtime");
  const Plugin& plugin = *p.plugin;
  if (auto s = compile_units(plugin, p.device, units, cache); !s) return s;
  std::string metadata, code;
  std::map<std::string, int> unit_of;
  size_t kernels = 0;
  p.stats.units = units.size();
  for (size_t u = 0; u < units.size(); ++u) {
    const CompileUnit& unit = units[u];
    p.stats.units_cached += unit.cache_hit;
    p.stats.compile_ms += unit.compile_ms;
    metadata += unit.metadata.empty() ? "" : unit.metadata + "\n";
    code += generated_code(unit.metadata);
    kernels += unit.names.size();
    for (const std::string& name : unit.names) unit_of[name] = static_cast<int>(u);
    if (auto s = plugin.require(plugin.api().load, "load"); !s) return s;
    kiln_executable* exe = nullptr;
    if (auto s = plugin.check(plugin.api().load(plugin.instance(), p.device, unit.artifact.data(),
                                                unit.artifact.size(), &exe),
                              "load");
        !s)
      return s;
    p.executables.push_back(exe);
  }
  p.stats.cache_hit = p.stats.units_cached == units.size();
  dump.write("compile.json", metadata);
  if (!code.empty()) dump.write("code.txt", code);
  for (PlanStep& s : p.plan) {
    if (s.kind != PlanStep::Kind::Launch) continue;
    auto it = unit_of.find(s.name);
    if (it == unit_of.end())
      return Error::internal("kernel '" + s.name + "' is in no compile unit of '" + p.graph.name +
                             "'");
    s.executable = it->second;
  }
  if (p.stats.cache_hit) {
    log->info("kernel cache hit: {} kernels of '{}' in {} units", kernels, p.graph.name,
              units.size());
  } else {
    log->info(
        "compiled {} kernels of '{}' ({} of {} units from the cache) in {:.0f} ms{}", kernels,
        p.graph.name, p.stats.units_cached, units.size(), p.stats.compile_ms,
        units.size() > 1 && compiles_concurrently(plugin) ? " of compile time, in parallel" : "");
  }
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

// The plugin's externs the plan may call (mm and bmm dropped when the options say so).
std::vector<std::string> usable_externs(const Plugin& plugin, const ScheduleOptions& schedule) {
  std::vector<std::string> externs = extern_names(plugin);
  if (!schedule.library_matmul) {
    std::erase_if(externs, [](const std::string& line) {
      const std::string name = line.substr(0, line.find(' '));
      return name == "mm" || name == "bmm";
    });
  }
  return externs;
}

// Decomposition to KIR: the graph scheduled and lowered, the plan made and its arena laid
// out, the kernels to generate in `batch`.
Status schedule_and_plan(CompiledGraph::Parts& p, const Graph& graph,
                         std::shared_ptr<const OpRegistry> registry,
                         const ScheduleOptions& schedule, const DebugDump& dump,
                         const Logging& logging, CompiledGraphRecord& record,
                         std::vector<kir::Kernel>& batch) {
  auto log = logging.get("runtime");
  auto scheduled = schedule_graph(graph, std::move(registry), schedule, p.roofline);
  if (!scheduled) return std::move(scheduled).error();
  dump.write("decomposed.txt", dump_graph(scheduled->graph));
  p.graph = std::move(scheduled->graph);
  p.program = std::move(scheduled->program);
  p.stats.fallbacks = std::move(scheduled->fallbacks);
  for (const auto& f : p.stats.fallbacks)
    log->info("no kernel for {}: it runs on the host oracle", f);
  p.stats.inlined = scheduled->inlining.inlined;
  p.stats.merged = static_cast<size_t>(scheduled->fusion.fused);
  p.stats.failures = scheduled->failures();
  for (const FusionFailure& f : p.stats.failures) {
    log->debug("not fused: {}{}{} ({}): {}", f.producer, f.consumer.empty() ? "" : " + ",
               f.consumer, category_name(f.category), f.detail);
  }
  p.stats.bytes_unfused = program_bytes(scheduled->unfused);
  p.stats.bytes_fused = program_bytes(p.program);
  dump.write("unfused.loopir", print_loop_program(scheduled->unfused));
  dump.write("loopir", print_loop_program(p.program));
  dump.write("fusion_failures.csv", fusion_failures_csv(p.stats.failures));
  dump.write("kernels.csv", kernel_metadata_csv(p.program, p.roofline));

  // Asked only when there is an extern to place: a plugin may open its library lazily.
  record.asked_externs =
      std::any_of(p.program.kernels.begin(), p.program.kernels.end(),
                  [](const LoopKernel& k) { return k.kind == LoopKernelKind::Extern; });
  if (record.asked_externs) record.externs = usable_externs(*p.plugin, schedule);
  if (const int n = generate_missing_matmuls(p.program, record.externs); n > 0)
    log->info("{} matmuls of '{}' run as generated kernels (plugin '{}' {})", n, graph.name,
              p.plugin->name(),
              schedule.library_matmul ? "has no matmul library" : "told not to use its library");
  build_plan(p, record.externs, batch);
  std::string memory_report;
  if (auto s = plan_arena(p, memory_report); !s) return s;
  dump.write("memory_plan.txt", memory_report);
  p.kir_text = kir::print(batch);
  dump.write("kir", p.kir_text);
  return Ok{};
}

// A graph compiled earlier, from its "graphs" entry: units through the kernel cache (an
// evicted artifact is compiled again), parameters uploaded. An error means the entry cannot
// be used (damaged, or the plugin's externs changed); the caller then compiles in full.
Result<CompiledGraph> compiled_from_cache(std::string_view entry, const Graph& graph,
                                          std::shared_ptr<const OpRegistry> registry,
                                          std::unique_ptr<CompiledGraph::Parts> parts,
                                          const DiskCache& cache, const ScheduleOptions& schedule,
                                          const Logging& logging, const DebugDump& dump) {
  auto record = decode_compiled_graph(entry, std::move(registry), *parts);
  if (!record) return std::move(record).error();
  if (record->asked_externs && usable_externs(*parts->plugin, schedule) != record->externs)
    return Error::user("plugin '" + parts->plugin->name() +
                       "' offers other library calls than when the entry was made");
  if (!record->units.empty()) {
    if (auto s = load_units(*parts, record->units, cache, logging, dump); !s)
      return std::move(s).error().with_context("compiling '" + graph.name + "'");
  }
  parts->stats.graph_cache_hit = true;
  parts->graph.param_data = graph.param_data;  // weights are not part of the entry
  logging.get("runtime")->info("compiled graph cache hit: '{}' ({} kernels in {} units)",
                               graph.name, parts->stats.kernels, record->units.size());
  if (auto s = upload_params(*parts); !s) return std::move(s).error();
  return CompiledGraph(std::move(parts));
}

std::unique_ptr<CompiledGraph::Parts> fresh_parts(std::shared_ptr<const Plugin> plugin,
                                                  uint32_t device) {
  auto parts = std::make_unique<CompiledGraph::Parts>();
  parts->stats.target = plugin->name() + ":" + std::to_string(device);
  for (const auto& d : plugin->devices())
    if (d.index == device) parts->roofline = roofline_of(d);
  parts->plugin = std::move(plugin);
  parts->device = device;
  return parts;
}

}  // namespace

Result<CompiledGraph> compile_for_device(const Graph& graph,
                                         std::shared_ptr<const OpRegistry> registry,
                                         std::shared_ptr<const Plugin> plugin, uint32_t device,
                                         const DiskCache& cache, const Logging& logging,
                                         const std::string& debug_dir,
                                         const ScheduleOptions& schedule,
                                         const AutotuneOptions& autotune) {
  auto log = logging.get("runtime");
  const DebugDump dump(debug_dir, graph.name);
  dump.write("graph.txt", dump_graph(graph));
  // With debug dumps asked for, every stage runs (and is dumped); the entry is still written.
  const auto key = compiled_graph_key(graph, *plugin, device, schedule, autotune);
  if (key && debug_dir.empty()) {
    if (auto entry = cache.get(*key)) {
      auto cached = compiled_from_cache(*entry, graph, registry, fresh_parts(plugin, device), cache,
                                        schedule, logging, dump);
      if (cached) return cached;
      log->warn("compiled graph entry {} not used ({}); compiling '{}' again", cache.path_of(*key),
                cached.error().message(), graph.name);
    }
  }
  auto parts = fresh_parts(plugin, device);
  CompiledGraphRecord record;
  std::vector<kir::Kernel> batch;
  if (auto s = schedule_and_plan(*parts, graph, std::move(registry), schedule, dump, logging,
                                 record, batch);
      !s)
    return std::move(s).error();
  if (!batch.empty()) {
    auto units = kernel_units(*parts, batch, cache, autotune, logging);
    if (!units) return std::move(units).error().with_context("compiling '" + graph.name + "'");
    record.units = std::move(*units);
    if (auto s = load_units(*parts, record.units, cache, logging, dump); !s)
      return std::move(s).error().with_context("compiling '" + graph.name + "'");
  }
  if (key) cache.put(*key, encode_compiled_graph(*parts, record));
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
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start)
          .count();
  for (const auto& f : loaded.failures)
    logging.get("runtime")->warn("plugin '{}' did not load: {}", f.name, f.error.message());
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
    looked_at += (looked_at.empty() ? "" : ", ") + want.to_string();
  }
  const DiskCache cache = open_cache(options, logging);
  if (!candidates.empty()) {
    const SelectionCandidate& c = candidates.front();
    auto compiled = candidates.size() > 1 && options.selection.mode == SelectionMode::Autotune
                        ? select_and_compile(graph, registry, candidates, options, cache, logging)
                        : compile_for_device(graph, registry, c.plugin, c.device, cache, logging,
                                             options.debug_dir, options.schedule, options.autotune);
    if (compiled) compiled->set_plugin_load_ms(load_ms);
    return compiled;
  }
  return Error::user("no loaded plugin serves any configured device (" + looked_at +
                     "); see `kiln plugins`");
}

}  // namespace kiln
