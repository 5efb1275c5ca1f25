// Memory planning: every temporary buffer gets an offset in one arena per graph, so that
// buffers whose lifetimes do not overlap share bytes. Lifetimes are step intervals over the
// execution plan; placement is best fit among the gaps left by buffers already dead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

struct BufferLifetime {
  int64_t bytes = 0;
  int first = 0;  // first step that needs it (its allocation)
  int last = 0;   // last step that uses it (inclusive)
  // In place: the index of a buffer of the same size whose last step is this one's first,
  // read only where this one is written (an elementwise kernel's dying input): this buffer
  // may take its bytes. -1: none.
  int may_reuse = -1;
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // per lifetime, in bytes from the arena start
  int64_t arena_bytes = 0;       // planned peak
  int64_t naive_bytes = 0;       // every buffer its own allocation
  int in_place = 0;              // buffers that took their dying input's bytes
};

inline constexpr int64_t kArenaAlignment = 64;

MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers);

// An independent check of a plan: every buffer lies inside the arena, is aligned, and no two
// buffers that are live at the same step share a byte, except an in-place pair at the one
// step where the first dies and the second is born, at the same offset. Returns "" or the
// first violation.
std::string verify_memory_plan(const std::vector<BufferLifetime>& buffers, const MemoryPlan& plan);

}  // namespace kiln
