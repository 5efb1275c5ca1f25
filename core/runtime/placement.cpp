#include "core/runtime/placement.h"

#include <spdlog/spdlog.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>

#include "core/kir/kir_hash.h"
#include "core/runtime/buffer_residence.h"
#include "core/runtime/compile_units.h"
#include "core/runtime/device_roofline.h"
#include "core/sched/program_bytes.h"

namespace kiln {
namespace {

// A copy between two plugins goes through host memory: at most a PCIe 4.0 x16 link's
// practical rate, and never faster than the slower device's memory; each copy costs a call.
constexpr double kHostLinkGbps = 25.0;
constexpr double kCopyCallUs = 10.0;

struct Answer {
  bool supported = true;
  std::string reason;
};

// Whether `target` supports `text` (one kernel), from the cache or the plugin.
Result<Answer> supports(const PlacementTarget& target, const std::string& text,
                        const DiskCache& cache) {
  const Plugin& plugin = *target.plugin;
  if (!plugin.api().supports) return Answer{};
  const CacheKey key{"supports",
                     {{"kir_hash", kir_hash(text)},
                      {"device", device_label(plugin, target.device)},
                      {"compiler_fingerprint", plugin.attributes().compiler_fingerprint}}};
  if (auto hit = cache.get(key); hit && !hit->empty() && (hit->at(0) == '0' || hit->at(0) == '1'))
    return Answer{hit->at(0) == '1', hit->size() > 2 ? hit->substr(2) : ""};
  int supported = 0;
  kiln_blob* reason = nullptr;
  if (auto s = plugin.check(plugin.api().supports(plugin.instance(), target.device, text.c_str(),
                                                  text.size(), &supported, &reason),
                            "supports");
      !s)
    return std::move(s).error();
  Answer a{supported != 0, reason ? plugin.take_blob(reason) : ""};
  if (!a.supported && a.reason.empty()) a.reason = "no reason given";
  cache.put(key, std::string(a.supported ? "1" : "0") + "\n" + a.reason);
  return a;
}

// The text a plugin is asked about: the kernel under a fixed name, so kernels alike but for
// their names (a model's repeated layers) are asked about once.
std::string query_text(const kir::Kernel& kernel) {
  kir::Kernel unnamed = kernel;
  unnamed.name = "kernel";
  return kir::print({unnamed});
}

// The serving device's answers for every kernel of `batch`, by query text: asked side by side
// where its plugin compiles concurrently, since answering may mean compiling (the ptx plugin
// generates the kernel's code to see that it can).
Result<std::map<std::string, Answer>> serving_answers(const PlacementTarget& serving,
                                                      const std::vector<kir::Kernel>& batch,
                                                      const DiskCache& cache) {
  std::vector<std::string> texts;
  for (const kir::Kernel& k : batch) texts.push_back(query_text(k));
  std::sort(texts.begin(), texts.end());
  texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
  std::vector<std::optional<Result<Answer>>> answers(texts.size());
  const auto ask = [&](size_t i) { answers[i] = supports(serving, texts[i], cache); };
  if (compiles_concurrently(*serving.plugin) && texts.size() > 1)
    tbb::parallel_for(size_t{0}, texts.size(), ask);
  else
    for (size_t i = 0; i < texts.size(); ++i) ask(i);
  std::map<std::string, Answer> out;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (!*answers[i]) return std::move(*answers[i]).error();
    out.emplace(texts[i], std::move(**answers[i]));
  }
  return out;
}

std::string target_name(const PlacementTarget& t) {
  return t.plugin->name() + ":" + std::to_string(t.device);
}

// The buffers a plan step reads and writes; `kernel` is a launch step's KIR kernel.
struct Touches {
  std::vector<int> reads, writes;
};
Touches touches(const PlanStep& s, const kir::Kernel* kernel, const LoopProgram& prog) {
  Touches t;
  if (s.kind == PlanStep::Kind::Launch) {
    for (size_t i = 0; i < s.buffers.size(); ++i)
      (kernel->buffers.at(i).role == kir::Role::In ? t.reads : t.writes).push_back(s.buffers[i]);
  } else if (s.kind == PlanStep::Kind::Extern || s.kind == PlanStep::Kind::Host) {
    const LoopKernel& k = prog.kernels.at(static_cast<size_t>(s.kernel));
    t.reads = k.extern_inputs;
    t.writes = k.extern_outputs;
  }
  return t;
}

double copy_us(int64_t bytes, const Roofline& a, const Roofline& b) {
  const double gbps = std::min({a.bandwidth_gbps, b.bandwidth_gbps, kHostLinkGbps});
  return kCopyCallUs + static_cast<double>(bytes) / (gbps * 1e3);
}

std::string duration_text(double us) {
  char text[32];
  if (us >= 1000)
    std::snprintf(text, sizeof text, "%.1f ms", us / 1000);
  else
    std::snprintf(text, sizeof text, "%.1f us", us);
  return text;
}

// Estimated cost of running a launch step on each target: the kernel at the target's
// roofline, the copies its buffers need there, and bringing the graph outputs it writes back
// to the serving device. Every target's roofline is known (place_kernels checks).
std::vector<double> step_costs(const LoopKernel& kernel, const Touches& t, const LoopProgram& prog,
                               const BufferResidence& residence,
                               const std::vector<Roofline>& rooflines) {
  std::vector<double> cost(rooflines.size());
  for (size_t d = 0; d < rooflines.size(); ++d) {
    const int at = static_cast<int>(d);
    cost[d] = kernel_cost(kernel, prog, rooflines[d]).est_us;
    for (const auto* list : {&t.reads, &t.writes}) {
      for (int b : *list) {
        if (auto from = residence.copy_source(b, at))
          cost[d] += copy_us(buffer_bytes(prog.buffers.at(static_cast<size_t>(b))),
                             rooflines[static_cast<size_t>(*from)], rooflines[d]);
      }
    }
    if (at == 0) continue;
    for (int b : t.writes) {
      if (std::find(prog.outputs.begin(), prog.outputs.end(), b) != prog.outputs.end())
        cost[d] += copy_us(buffer_bytes(prog.buffers.at(static_cast<size_t>(b))), rooflines[d],
                           rooflines[0]);
    }
  }
  return cost;
}

}  // namespace

Result<std::vector<int>> place_kernels(CompiledGraph::Parts& p,
                                       const std::vector<kir::Kernel>& batch,
                                       const std::vector<PlacementTarget>& helpers,
                                       PlacementPolicy policy, const DiskCache& cache,
                                       const Logging& logging) {
  std::vector<int> place(batch.size(), 0);
  if (helpers.empty()) return place;
  std::vector<PlacementTarget> targets{{p.plugin, p.device}};
  targets.insert(targets.end(), helpers.begin(), helpers.end());
  std::vector<Roofline> rooflines;
  for (const PlacementTarget& t : targets) rooflines.push_back(roofline_of(*t.plugin, t.device));
  auto log = logging.get("runtime");
  for (size_t i = 0; i < targets.size() && policy == PlacementPolicy::Cost; ++i) {
    if (rooflines[i].known()) continue;
    log->warn(
        "placing the kernels of '{}' by order, not cost: {} reports no bandwidth_gbps or "
        "peak_gflops_f32",
        p.graph.name, target_name(targets[i]));
    policy = PlacementPolicy::Order;
  }
  auto answers = serving_answers(targets[0], batch, cache);
  if (!answers)
    return std::move(answers).error().with_context("asking where the kernels of '" + p.graph.name +
                                                   "' run");
  const LoopProgram& prog = p.program;
  BufferResidence residence(prog);
  size_t k = 0;
  for (const PlanStep& s : p.plan) {
    const bool launch = s.kind == PlanStep::Kind::Launch;
    if (launch && k >= batch.size())
      return Error::internal("placement: the plan launches more kernels than were generated");
    const Touches t = touches(s, launch ? &batch[k] : nullptr, prog);
    int at = 0;  // allocations, frees, library calls and host steps stay on the serving device
    if (launch) {
      // Targets are asked in the order of their estimated cost (the config's order on ties or
      // with policy Order), until one takes the kernel.
      const std::vector<double> cost =
          policy == PlacementPolicy::Cost
              ? step_costs(prog.kernels.at(static_cast<size_t>(s.kernel)), t, prog, residence,
                           rooflines)
              : std::vector<double>{};
      std::vector<size_t> order(targets.size());
      std::iota(order.begin(), order.end(), 0);
      if (!cost.empty())
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return cost[a] < cost[b]; });
      const std::string text = query_text(batch[k]);
      std::string reasons;
      bool serving_declined = false;
      int chosen = -1;
      for (size_t i = 0; i < order.size() && chosen < 0; ++i) {
        const PlacementTarget& target = targets[order[i]];
        auto answer =
            order[i] == 0 ? Result<Answer>(answers->at(text)) : supports(target, text, cache);
        if (!answer)
          return std::move(answer).error().with_context("asking where kernel " + batch[k].name +
                                                        " of '" + p.graph.name + "' runs");
        if (answer->supported) {
          chosen = static_cast<int>(order[i]);
        } else {
          serving_declined = serving_declined || order[i] == 0;
          reasons += (reasons.empty() ? "" : "; ") + target.plugin->name() + ": " + answer->reason;
        }
      }
      if (chosen < 0)
        return Error::user("no configured device runs kernel " + batch[k].name + " of '" +
                           p.graph.name + "' (" + reasons + ")");
      place[k] = at = chosen;
      if (chosen != 0) {
        // Moved for its cost when the serving device was not asked or took it too.
        std::string why = reasons;
        if (!cost.empty() && !serving_declined)
          why = (why.empty() ? "" : why + "; ") +
                "cheaper: " + duration_text(cost[static_cast<size_t>(chosen)]) + " against " +
                duration_text(cost[0]) + " on " + target_name(targets[0]) + ", copies included";
        const std::string line = batch[k].name + " on " +
                                 target_name(targets[static_cast<size_t>(chosen)]) + " (" + why +
                                 ")";
        log->info("kernel {}", line);
        p.stats.placed.push_back(line);
      }
      ++k;
    }
    for (const auto* list : {&t.reads, &t.writes})
      for (int b : *list)
        if (residence.copy_source(b, at)) residence.copied(b, at);
    for (int b : t.writes) residence.written(b, at);
  }
  return place;
}

void plan_transfers(CompiledGraph::Parts& p, const std::vector<kir::Kernel>& batch,
                    const std::vector<int>& place) {
  if (std::all_of(place.begin(), place.end(), [](int d) { return d == 0; })) return;
  const LoopProgram& prog = p.program;
  BufferResidence residence(prog);
  std::vector<PlanStep> plan;
  const auto bring = [&](int b, int at) {
    const auto from = residence.copy_source(b, at);
    if (!from) return;
    PlanStep t;
    t.kind = PlanStep::Kind::Transfer;
    t.buffer = b;
    t.from = *from;
    t.place = at;
    t.name = prog.buffers[static_cast<size_t>(b)].name;
    plan.push_back(t);
    residence.copied(b, at);
    ++p.stats.transfers;
  };
  size_t launch = 0;
  for (PlanStep s : p.plan) {
    const kir::Kernel* kernel = nullptr;
    if (s.kind == PlanStep::Kind::Launch) {
      s.place = place.at(launch);
      kernel = &batch.at(launch++);
    }
    const Touches t = touches(s, kernel, prog);
    for (int b : t.reads) bring(b, s.place);
    for (int b : t.writes) bring(b, s.place);
    for (int b : t.writes) residence.written(b, s.place);
    plan.push_back(std::move(s));
  }
  for (int b : prog.outputs) bring(b, 0);
  p.plan = std::move(plan);
}

}  // namespace kiln
