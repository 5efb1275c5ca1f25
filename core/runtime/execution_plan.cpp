#include "core/runtime/execution_plan.h"

#include "core/kir/kir_emit.h"
#include "core/lower/matmul_kernel.h"
#include "core/memory/memory_plan.h"

namespace kiln {
namespace {

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

}  // namespace

Status build_plan(CompiledGraph::Parts& p, const std::vector<std::string>& externs,
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
      // A library call that stands for part of a node (a convolution's product before its
      // bias) has no node to run instead: the plugin must offer it.
      if (k.node < 0)
        return Error::internal("library call '" + k.extern_name + "' of '" + k.origin +
                               "': plugin '" + p.plugin->name() + "' does not offer it");
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
  return Ok{};
}

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

}  // namespace kiln
