#include "core/sched/fuse_kernels.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>

#include "core/sched/program_bytes.h"

namespace kiln {
namespace {

bool contains(const std::vector<int>& list, int b) {
  return std::find(list.begin(), list.end(), b) != list.end();
}

bool shares(const std::vector<int>& a, const std::vector<int>& b) {
  return std::any_of(a.begin(), a.end(), [&](int x) { return contains(b, x); });
}

using Access = ProgramAccess;  // made once per round of fusion

// Whether a kernel other than `except` reads buffer `b`.
bool read_elsewhere(const Access& access, int b, size_t except) {
  const auto& readers = access.readers[static_cast<size_t>(b)];
  return std::any_of(readers.begin(), readers.end(), [&](size_t k) { return k != except; });
}

bool read_elsewhere(const LoopProgram& prog, int b, size_t except) {
  for (size_t k = 0; k < prog.kernels.size(); ++k)
    if (k != except && contains(kernel_reads(prog.kernels[k]), b)) return true;
  return false;
}

// A merge tried: its outcome, and the merged kernel's estimated time.
struct Tried {
  MergeOutcome outcome;
  double est_us = 0;
};

struct Candidate {
  size_t first = 0, second = 0;
  size_t at = 0;                       // where the merged kernel goes: first or second
  const LoopKernel* merged = nullptr;  // kept by the FusionMemo
  int64_t saved = 0;                   // bytes
  double saved_us = 0;                 // estimated time, when the roofline is known
  bool better_than(const Candidate& other) const {
    return saved_us != other.saved_us ? saved_us > other.saved_us : saved > other.saved;
  }
};

// Merges already tried, by the two kernels' identities and the stores left out, and each
// kernel's estimated time. merge_kernels is a pure function and fusion keeps the program's
// buffers, so a round after a merge computes again only what involves the merged kernel:
// without this, every round re-merges every related pair (most of a transformer's compile).
class FusionMemo {
 public:
  FusionMemo(size_t kernels, const FuseOptions& options) : ids_(kernels), options_(options) {
    std::iota(ids_.begin(), ids_.end(), uint64_t{0});
    next_ = kernels;
  }

  const Tried& merge(const LoopProgram& prog, size_t first, size_t second,
                     const std::set<int>& dropped) {
    auto key = std::make_tuple(ids_[first], ids_[second], dropped);
    auto it = merges_.find(key);
    if (it == merges_.end()) {
      Tried t{merge_kernels(prog.kernels[first], prog.kernels[second], dropped, options_.merge)};
      if (t.outcome.kernel)
        t.est_us = kernel_cost(*t.outcome.kernel, prog, options_.roofline).est_us;
      it = merges_.emplace(std::move(key), std::move(t)).first;
    }
    return it->second;
  }

  double est_us(const LoopProgram& prog, size_t k) {
    auto it = est_us_.find(ids_[k]);
    if (it == est_us_.end())
      it = est_us_.emplace(ids_[k], kernel_cost(prog.kernels[k], prog, options_.roofline).est_us)
               .first;
    return it->second;
  }

  // The program's kernels after apply_merge: the merged one is new, the pair's are gone.
  void merged(const Candidate& c) {
    std::vector<uint64_t> ids;
    for (size_t k = 0; k < ids_.size(); ++k) {
      if (k == c.at)
        ids.push_back(next_++);
      else if (k != c.first && k != c.second)
        ids.push_back(ids_[k]);
    }
    ids_ = std::move(ids);
  }

 private:
  std::vector<uint64_t> ids_;  // one per kernel of the program, in its order
  uint64_t next_ = 0;
  const FuseOptions& options_;
  std::map<std::tuple<uint64_t, uint64_t, std::set<int>>, Tried> merges_;
  std::map<uint64_t, double> est_us_;
};

struct Attempt {
  std::optional<Candidate> candidate;
  FusionFailure failure;
};

// Buffers `first` writes that only `second` reads afterwards: the merge need not store them.
std::set<int> droppable(const LoopProgram& prog, const Access& access, size_t first,
                        size_t second) {
  std::set<int> out;
  for (int b : access.writes[first]) {
    if (prog.buffers[static_cast<size_t>(b)].kind != BufferKind::Temp) continue;
    if (!contains(prog.outputs, b) && !read_elsewhere(access, b, second)) out.insert(b);
  }
  return out;
}

// Where the merged kernel can run without breaking a dependency on a kernel in between.
std::optional<size_t> placement(const Access& access, size_t first, size_t second) {
  const auto& first_writes = access.writes[first];
  const auto& second_reads = access.reads[second];
  bool at_first = true, at_second = true;
  for (size_t k = first + 1; k < second; ++k) {
    at_first = at_first && !shares(access.writes[k], second_reads);
    at_second = at_second && !shares(access.reads[k], first_writes);
  }
  if (at_first) return first;
  if (at_second) return second;
  return std::nullopt;
}

// The merged kernel in the pair's place `c.at`, the other of the pair gone, in place (a copy
// of the program per merge was most of a transformer's fusion time).
void apply_merge(LoopProgram& prog, const Candidate& c) {
  prog.kernels[c.at] = *c.merged;
  const size_t other = c.at == c.first ? c.second : c.first;
  prog.kernels.erase(prog.kernels.begin() + static_cast<std::ptrdiff_t>(other));
}

// Whether running `c`'s merge raises the peak of live buffers by more than fusion allows;
// the failure says by how much. `peak`: live_peak_bytes(prog).
bool raises_peak(const LoopProgram& prog, const Access& access, const Candidate& c, int64_t peak,
                 const FuseOptions& o, FusionFailure& failure) {
  // apply_merge's kernels, weighed without copying the program
  const std::vector<int> merged_reads = kernel_reads(*c.merged);
  const std::vector<int> merged_writes = kernel_writes(*c.merged);
  std::vector<KernelBuffers> order;
  order.reserve(prog.kernels.size());
  for (size_t k = 0; k < prog.kernels.size(); ++k) {
    if (k == c.at)
      order.push_back({&merged_reads, &merged_writes});
    else if (k != c.first && k != c.second)
      order.push_back(access.of(k));
  }
  const int64_t after = live_peak_bytes(prog, order);
  if (after <= peak + o.max_peak_growth_bytes) return false;
  failure.category = FusionCategory::WouldRaiseMemory;
  failure.detail =
      "peak of live buffers " + std::to_string(peak) + " -> " + std::to_string(after) + " bytes";
  return true;
}

// `peak`: live_peak_bytes(prog), the same for every pair of a round; none leaves the peak to
// the caller (raises_peak), which weighs it only for a candidate better than its best.
Attempt attempt(const LoopProgram& prog, const Access& access, size_t first, size_t second,
                std::optional<int64_t> peak, const FuseOptions& o, FusionMemo& memo) {
  Attempt a;
  const LoopKernel& p = prog.kernels[first];
  const LoopKernel& c = prog.kernels[second];
  a.failure.producer = p.name;
  a.failure.consumer = c.name;
  const auto at = placement(access, first, second);
  if (!at) {
    a.failure.category = FusionCategory::Dependency;
    a.failure.detail = "a kernel between them reads one and writes what the other reads";
    return a;
  }
  const Tried& tried = memo.merge(prog, first, second, droppable(prog, access, first, second));
  const MergeOutcome& m = tried.outcome;
  if (!m.kernel) {
    a.failure.category = m.why;
    a.failure.detail = m.detail;
    return a;
  }
  Candidate cand{first, second, *at, &*m.kernel, 0, 0};
  cand.saved = kernel_bytes(p, prog) + kernel_bytes(c, prog) - kernel_bytes(*cand.merged, prog);
  cand.saved_us = memo.est_us(prog, first) + memo.est_us(prog, second) - tried.est_us;
  if (peak && raises_peak(prog, access, cand, *peak, o, a.failure)) return a;
  if (cand.saved <= 0) {
    a.failure.category = FusionCategory::Unknown;
    a.failure.detail = "saves no bytes";
    return a;
  }
  a.candidate = std::move(cand);
  return a;
}

// Pairs that touch a common buffer: one reads what the other writes, or both read it.
std::vector<std::pair<size_t, size_t>> related_pairs(const LoopProgram& prog,
                                                     const Access& access) {
  std::vector<std::pair<size_t, size_t>> pairs;
  std::vector<size_t> partners;
  for (size_t i = 0; i < prog.kernels.size(); ++i) {
    if (prog.kernels[i].kind == LoopKernelKind::Extern) continue;
    partners.clear();
    for (const auto* buffers : {&access.writes[i], &access.reads[i]}) {
      for (int b : *buffers) {
        for (size_t j : access.readers[static_cast<size_t>(b)])
          if (j > i && prog.kernels[j].kind != LoopKernelKind::Extern) partners.push_back(j);
      }
    }
    std::sort(partners.begin(), partners.end());
    partners.erase(std::unique(partners.begin(), partners.end()), partners.end());
    for (size_t j : partners) pairs.emplace_back(i, j);
  }
  return pairs;
}

}  // namespace

FuseReport fuse_kernels(LoopProgram& prog, const FuseOptions& options) {
  FuseReport report;
  remove_dead_kernels(prog);
  FusionMemo memo(prog.kernels.size(), options);
  for (;;) {
    std::optional<Candidate> best;
    const int64_t peak = live_peak_bytes(prog);
    const Access access(prog);
    for (const auto& [i, j] : related_pairs(prog, access)) {
      Attempt a = attempt(prog, access, i, j, std::nullopt, options, memo);
      if (a.candidate && (!best || a.candidate->better_than(*best)) &&
          !raises_peak(prog, access, *a.candidate, peak, options, a.failure))
        best = std::move(a.candidate);
    }
    if (!best) break;
    apply_merge(prog, *best);
    memo.merged(*best);
    ++report.fused;
  }
  const int64_t peak = live_peak_bytes(prog);
  const Access access(prog);
  for (const auto& [i, j] : related_pairs(prog, access)) {
    Attempt a = attempt(prog, access, i, j, peak, options, memo);
    if (!a.candidate) report.failures.push_back(std::move(a.failure));
  }
  prune_buffers(prog);
  return report;
}

void remove_dead_kernels(LoopProgram& prog) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = prog.kernels.size(); k-- > 0;) {
      const LoopKernel& kernel = prog.kernels[k];
      if (kernel.kind == LoopKernelKind::Extern) continue;
      const bool checks = std::any_of(kernel.body.begin(), kernel.body.end(), [](const LoopOp& op) {
        return op.kind == LoopOpKind::CheckIndex;
      });
      const auto writes = kernel_writes(kernel);
      bool needed = checks || writes.empty();
      for (int b : writes) {
        needed = needed || prog.buffers[static_cast<size_t>(b)].kind != BufferKind::Temp ||
                 contains(prog.outputs, b) || read_elsewhere(prog, b, k);
      }
      if (!needed) {
        prog.kernels.erase(prog.kernels.begin() + static_cast<std::ptrdiff_t>(k));
        changed = true;
      }
    }
  }
}

void prune_buffers(LoopProgram& prog) {
  std::vector<bool> used(prog.buffers.size(), false);
  for (const LoopKernel& k : prog.kernels) {
    for (int b : kernel_reads(k)) used[static_cast<size_t>(b)] = true;
    for (int b : kernel_writes(k)) used[static_cast<size_t>(b)] = true;
  }
  for (int b : prog.outputs) used[static_cast<size_t>(b)] = true;
  std::vector<int> renumber(prog.buffers.size(), -1);
  std::vector<LoopBuffer> kept;
  for (size_t b = 0; b < prog.buffers.size(); ++b) {
    if (!used[b] && prog.buffers[b].kind == BufferKind::Temp) continue;
    renumber[b] = static_cast<int>(kept.size());
    kept.push_back(prog.buffers[b]);
  }
  auto map = [&](int& b) { b = renumber.at(static_cast<size_t>(b)); };
  for (LoopKernel& k : prog.kernels) {
    for (int& b : k.extern_inputs) map(b);
    for (int& b : k.extern_outputs) map(b);
    for (LoopOp& op : k.body)
      if (accesses_buffer(op)) map(op.buffer);
  }
  for (int& b : prog.outputs) map(b);
  prog.buffers = std::move(kept);
}

}  // namespace kiln
