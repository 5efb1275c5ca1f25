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
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // per lifetime, in bytes from the arena start
  int64_t arena_bytes = 0;       // planned peak
  int64_t naive_bytes = 0;       // every buffer its own allocation
};

inline constexpr int64_t kArenaAlignment = 64;

MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers);

// An independent check of a plan: every buffer lies inside the arena, is aligned, and no two
// buffers that are live at the same step share a byte. Returns "" or the first violation.
std::string verify_memory_plan(const std::vector<BufferLifetime>& buffers, const MemoryPlan& plan);

}  // namespace kiln
