// Small pieces of generated C++ that both kernel skeletons (pointwise, reduction) use.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "plugins/cpp_openmp/codegen_ops.h"

namespace kiln::cpu {

int64_t product(const std::vector<int64_t>& v, size_t from, size_t to);
std::string num(int64_t v);  // "12LL"

// `const int64_t <prefix>i = (flat / div) % size;` for dims [0, count) of `sizes`, whose
// row-major flattening over dims [0, count) is `flat`.
std::string unflatten(const std::vector<int64_t>& sizes, size_t count, const std::string& prefix,
                      const std::string& flat);

// One line per op, each indented.
std::string body_lines(const kir::Kernel& k, const std::vector<const kir::Op*>& ops,
                       const ExprContext& ctx, const std::string& indent);

// Bodies run over kGroup consecutive vectors op by op across them, so a chain of opaque
// calls (Sleef) in one vector does not serialize the loop; long bodies are left single.
inline constexpr int kGroup = 4;
inline constexpr size_t kMaxGroupedOps = 32;

// `auto NAME = [&](PARAMS) { using L = krt::LV; PREAMBLE ... };`: the body `lines` for
// kGroup consecutive vectors, line by line across them (group_copy with `moved`).
std::string group_lambda(const std::string& indent, const std::string& name,
                         const std::string& params, const std::string& preamble,
                         const std::vector<std::string>& lines, const std::set<std::string>& moved);

// The loops of `var` up to `hi`: groups of kGroup vectors through `group` (when not ""),
// single vectors through `body` (when `vectorized`), then a scalar tail; `lead` are the
// arguments before `var` in each call.
std::string vector_loops(const std::string& indent, const std::string& var, const std::string& hi,
                         const std::string& group, const std::string& body, const std::string& lead,
                         bool vectorized);

// `#pragma omp parallel for ...` with `threads` threads over a loop of `work` elements, or
// nothing (a serial loop) when `work` is below `threshold` or there is one thread.
std::string parallel_for(int threads, int64_t work, int64_t threshold);

}  // namespace kiln::cpu
