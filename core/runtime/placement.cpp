#include "core/runtime/placement.h"

#include <spdlog/spdlog.h>

#include <set>

#include "core/kir/kir_hash.h"
#include "core/runtime/compile_units.h"

namespace kiln {
namespace {

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

std::string target_name(const PlacementTarget& t) {
  return t.plugin->name() + ":" + std::to_string(t.device);
}

}  // namespace

Result<std::vector<int>> place_kernels(CompiledGraph::Parts& p,
                                       const std::vector<kir::Kernel>& batch,
                                       const std::vector<PlacementTarget>& helpers,
                                       const DiskCache& cache, const Logging& logging) {
  std::vector<int> place(batch.size(), 0);
  if (helpers.empty()) return place;
  std::vector<PlacementTarget> targets{{p.plugin, p.device}};
  targets.insert(targets.end(), helpers.begin(), helpers.end());
  auto log = logging.get("runtime");
  for (size_t k = 0; k < batch.size(); ++k) {
    const std::string text = kir::print({batch[k]});
    std::string reasons;
    int chosen = -1;
    for (size_t t = 0; t < targets.size() && chosen < 0; ++t) {
      auto answer = supports(targets[t], text, cache);
      if (!answer)
        return std::move(answer).error().with_context("asking where kernel " + batch[k].name +
                                                      " of '" + p.graph.name + "' runs");
      if (answer->supported) {
        chosen = static_cast<int>(t);
      } else {
        reasons +=
            (reasons.empty() ? "" : "; ") + targets[t].plugin->name() + ": " + answer->reason;
      }
    }
    if (chosen < 0)
      return Error::user("no configured device runs kernel " + batch[k].name + " of '" +
                         p.graph.name + "' (" + reasons + ")");
    place[k] = chosen;
    if (chosen == 0) continue;
    const std::string line = batch[k].name + " on " +
                             target_name(targets[static_cast<size_t>(chosen)]) + " (" + reasons +
                             ")";
    log->info("kernel {}", line);
    p.stats.placed.push_back(line);
  }
  return place;
}

void plan_transfers(CompiledGraph::Parts& p, const std::vector<kir::Kernel>& batch,
                    const std::vector<int>& place) {
  if (std::all_of(place.begin(), place.end(), [](int d) { return d == 0; })) return;
  const LoopProgram& prog = p.program;
  // Where each buffer's current bytes are: the devices holding them (none: not yet written).
  std::vector<std::set<int>> valid(prog.buffers.size());
  for (size_t b = 0; b < prog.buffers.size(); ++b) {
    const BufferKind kind = prog.buffers[b].kind;
    if (kind == BufferKind::Input || kind == BufferKind::Param || kind == BufferKind::RandomState)
      valid[b] = {0};
  }
  std::vector<PlanStep> plan;
  // Before a step on `at` touches `b`, its bytes come to `at` when they are elsewhere: also for
  // writes, since kernels may write parts of one buffer (a concatenation) on two devices.
  const auto bring = [&](int b, int at) {
    std::set<int>& where = valid[static_cast<size_t>(b)];
    if (where.empty() || where.contains(at)) return;
    PlanStep t;
    t.kind = PlanStep::Kind::Transfer;
    t.buffer = b;
    t.from = where.contains(0) ? 0 : *where.begin();
    t.place = at;
    t.name = prog.buffers[static_cast<size_t>(b)].name;
    plan.push_back(t);
    where.insert(at);
    ++p.stats.transfers;
  };
  size_t launch = 0;
  for (PlanStep s : p.plan) {
    std::vector<int> reads, writes;
    if (s.kind == PlanStep::Kind::Launch) {
      s.place = place.at(launch);
      const kir::Kernel& k = batch.at(launch++);
      for (size_t i = 0; i < s.buffers.size(); ++i) {
        (k.buffers.at(i).role == kir::Role::In ? reads : writes).push_back(s.buffers[i]);
      }
    } else if (s.kind == PlanStep::Kind::Extern || s.kind == PlanStep::Kind::Host) {
      const LoopKernel& k = prog.kernels.at(static_cast<size_t>(s.kernel));
      reads = k.extern_inputs;
      writes = k.extern_outputs;
    }
    for (int b : reads) bring(b, s.place);
    for (int b : writes) bring(b, s.place);
    for (int b : writes) valid[static_cast<size_t>(b)] = {s.place};
    plan.push_back(std::move(s));
  }
  for (int b : prog.outputs) bring(b, 0);
  p.plan = std::move(plan);
}

}  // namespace kiln
