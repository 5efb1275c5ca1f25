#include "core/tune/library_choice.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "core/graph/builder.h"
#include "core/interp/random_tensor.h"
#include "core/lower/library_call_signature.h"
#include "core/runtime/compile.h"
#include "core/support/median.h"

namespace kiln {
namespace {

// The calls whose work the core can generate as well: a convolution and its two gradients.
bool weighed(const LoopKernel& k) {
  return k.kind == LoopKernelKind::Extern &&
         (k.extern_name == "conv2d" || k.extern_name == "conv2d_backward_input" ||
          k.extern_name == "conv2d_backward_weight");
}

// Node `node` of `graph` alone: each tensor it reads a graph input of the same type.
Result<Graph> node_alone(const Graph& graph, const Node& node) {
  GraphBuilder b(graph.registry, "library_choice");
  int next = 0;
  auto as_input = [&](ValueRef r) { return b.input("in" + std::to_string(next++), graph.type(r)); };
  std::vector<ArgValue> args;
  for (const ArgValue& a : node.args) {
    if (const auto* r = std::get_if<ValueRef>(&a)) {
      args.emplace_back(as_input(*r));
    } else if (const auto* list = std::get_if<TensorList>(&a)) {
      TensorList copy;
      for (const auto& item : list->items)
        copy.items.push_back(item ? std::optional<ValueRef>(as_input(*item)) : std::nullopt);
      args.emplace_back(std::move(copy));
    } else {
      args.push_back(a);
    }
  }
  auto outs = b.try_bound(op_name(node), args, node.name);
  if (!outs) return std::move(outs).error();
  for (ValueRef r : *outs) b.output(r);
  return b.finish();
}

// Median device ms of `g` per run, or the error that stopped it.
Result<double> time_alone(const Result<CompiledGraph>& g, const std::vector<HostTensor>& inputs,
                          const AutotuneOptions& autotune) {
  if (!g) return g.error();
  auto samples = g->time_runs(inputs, static_cast<int>(std::max<int64_t>(autotune.reps, 1)));
  if (!samples) return std::move(samples).error();
  return median(std::move(*samples));
}

struct Timed {
  std::string signature;
  std::string library, generated;  // "0.123" or why it did not run
  bool declined = false;
  bool cached = false;
};

// Times the node that made `call` alone with the library and without; declined when the
// generated kernels were faster.
Timed weigh(const Graph& graph, const LoopKernel& call, const std::string& signature,
            const std::shared_ptr<const OpRegistry>& registry,
            const std::shared_ptr<const Plugin>& plugin, uint32_t device, const DiskCache& cache,
            const Logging& logging, const ScheduleOptions& schedule,
            const AutotuneOptions& autotune) {
  Timed t{signature, "-", "-", false, false};
  const auto node = std::find_if(graph.nodes.begin(), graph.nodes.end(),
                                 [&](const Node& n) { return n.name == call.origin; });
  if (node == graph.nodes.end()) {
    t.library = "its node '" + call.origin + "' is not in the graph";
    return t;
  }
  auto alone = node_alone(graph, *node);
  if (!alone) {
    t.library = alone.error().message();
    return t;
  }
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < alone->inputs.size(); ++i)
    inputs.push_back(random_tensor(alone->type(alone->inputs[i]), 5151 + i));
  // The alone graphs tune their kernels as asked, but weigh no libraries again.
  AutotuneOptions inner = autotune;
  inner.libraries = false;
  ScheduleOptions with_library = schedule, generated = schedule;
  with_library.declined_library_calls.clear();
  generated.declined_library_calls = {signature};
  const auto compile_alone = [&](const ScheduleOptions& s) {
    return compile_for_device(*alone, registry, plugin, device, cache, logging, "", s, inner);
  };
  const Result<double> lib_ms = time_alone(compile_alone(with_library), inputs, autotune);
  const Result<double> gen_ms = time_alone(compile_alone(generated), inputs, autotune);
  auto text = [](const Result<double>& ms) {
    return ms ? fmt::format("{:.4f}", *ms) : "failed: " + ms.error().message();
  };
  t.library = text(lib_ms);
  t.generated = text(gen_ms);
  t.declined = lib_ms && gen_ms && *gen_ms < *lib_ms;
  return t;
}

}  // namespace

CacheKey library_choice_key(const std::string& signature, const Plugin& plugin, uint32_t device,
                            const AutotuneOptions& autotune) {
  std::string device_name = std::to_string(device);
  for (const DeviceInfo& d : plugin.devices())
    if (d.index == device) device_name += " " + d.name;
  return {"library",
          {{"call", signature},
           {"plugin", plugin.name() + " @" + plugin.attributes().compiler_fingerprint},
           {"device", device_name},
           {"protocol", fmt::format("alone device-time reps={}", autotune.reps)}}};
}

Result<std::vector<std::string>> declined_library_calls(
    const Graph& graph, const LoopProgram& program,
    const std::shared_ptr<const OpRegistry>& registry, const std::shared_ptr<const Plugin>& plugin,
    uint32_t device, const DiskCache& cache, const Logging& logging,
    const ScheduleOptions& schedule, const AutotuneOptions& autotune) {
  std::vector<Timed> table;
  std::set<std::string> seen;
  for (const LoopKernel& k : program.kernels) {
    if (!weighed(k)) continue;
    const std::string signature = library_call_signature(k);
    if (!seen.insert(signature).second) continue;
    const CacheKey key = library_choice_key(signature, *plugin, device, autotune);
    if (auto hit = cache.get(key)) {
      table.push_back({signature, "-", "-", *hit == "generated", true});
      continue;
    }
    table.push_back(
        weigh(graph, k, signature, registry, plugin, device, cache, logging, schedule, autotune));
    cache.put(key, table.back().declined ? "generated" : "library");
  }
  std::vector<std::string> declined;
  std::string lines;
  for (const Timed& t : table) {
    if (t.declined) declined.push_back(t.signature);
    lines +=
        fmt::format("\n  {}: library {} ms, generated {} ms -> {}{}", t.signature, t.library,
                    t.generated, t.declined ? "generated" : "library", t.cached ? " (cached)" : "");
  }
  if (!table.empty())
    logging.get("tune")->info("library calls of '{}' against generated kernels:{}", graph.name,
                              lines);
  return declined;
}

}  // namespace kiln
