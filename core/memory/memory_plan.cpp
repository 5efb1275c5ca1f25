#include "core/memory/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace kiln {
namespace {

int64_t aligned(int64_t bytes) {
  return (std::max<int64_t>(bytes, 1) + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

struct Placed {
  int64_t offset;
  int64_t size;
  int last;
  size_t index;
};

bool in_place_pair(const std::vector<BufferLifetime>& buffers, size_t later, size_t earlier) {
  const BufferLifetime& b = buffers[later];
  return b.may_reuse == static_cast<int>(earlier) && buffers[earlier].last == b.first &&
         aligned(buffers[earlier].bytes) == aligned(b.bytes);
}

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  // In allocation order; at one step the larger first, so they take the low offsets.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].first != buffers[b].first) return buffers[a].first < buffers[b].first;
    return buffers[a].bytes > buffers[b].bytes;
  });
  std::vector<Placed> live;  // sorted by offset
  for (size_t i : order) {
    const BufferLifetime& b = buffers[i];
    const int64_t size = aligned(b.bytes);
    plan.naive_bytes += size;
    std::erase_if(live, [&](const Placed& p) { return p.last < b.first; });
    auto dying = std::find_if(live.begin(), live.end(), [&](const Placed& p) {
      return b.may_reuse >= 0 && p.index == static_cast<size_t>(b.may_reuse) &&
             in_place_pair(buffers, i, p.index);
    });
    if (dying != live.end()) {
      plan.offsets[i] = dying->offset;
      *dying = {dying->offset, size, b.last, i};
      ++plan.in_place;
      continue;
    }
    // Best fit: the smallest gap between live blocks that holds it, else the end.
    int64_t best = -1, best_gap = 0, cursor = 0;
    for (const Placed& p : live) {
      const int64_t gap = p.offset - cursor;
      if (gap >= size && (best < 0 || gap < best_gap)) {
        best = cursor;
        best_gap = gap;
      }
      cursor = std::max(cursor, p.offset + p.size);
    }
    if (best < 0) best = cursor;
    plan.offsets[i] = best;
    plan.arena_bytes = std::max(plan.arena_bytes, best + size);
    live.push_back({best, size, b.last, i});
    std::sort(live.begin(), live.end(),
              [](const Placed& x, const Placed& y) { return x.offset < y.offset; });
  }
  return plan;
}

std::string verify_memory_plan(const std::vector<BufferLifetime>& buffers, const MemoryPlan& plan) {
  if (plan.offsets.size() != buffers.size()) return "the plan has a different buffer count";
  for (size_t i = 0; i < buffers.size(); ++i) {
    const int64_t lo = plan.offsets[i], hi = lo + std::max<int64_t>(buffers[i].bytes, 1);
    if (lo < 0 || hi > plan.arena_bytes || lo % kArenaAlignment != 0)
      return "buffer " + std::to_string(i) + " lies outside the arena or is misaligned";
    for (size_t j = 0; j < i; ++j) {
      const bool overlap_in_time =
          buffers[i].first <= buffers[j].last && buffers[j].first <= buffers[i].last;
      const int64_t lo2 = plan.offsets[j], hi2 = lo2 + std::max<int64_t>(buffers[j].bytes, 1);
      const bool in_place = (in_place_pair(buffers, i, j) || in_place_pair(buffers, j, i)) &&
                            lo == lo2 && buffers[i].first != buffers[j].first;
      if (overlap_in_time && lo < hi2 && lo2 < hi && !in_place)
        return "buffers " + std::to_string(j) + " and " + std::to_string(i) +
               " are live together and share bytes";
    }
  }
  return "";
}

}  // namespace kiln
