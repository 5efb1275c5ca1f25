// A reduction's running state in registers (sum: one value; argmax: value, index, seen;
// welford: mean, m2, count), how one element folds in, how two states combine, and how a
// whole block combines its threads' states through warp shuffles and shared memory.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <vector>

#include "kiln/kir.hpp"
#include "plugins/gpu/gpu_target.h"

namespace kiln::gpu {

// The kernel emitter's own kind, not a KIR one: a softmax row's max and sum of exp(x - max)
// in one walk (the sum rescaled whenever the max grows). Its result is the max; component 1
// the sum. Needs the target's `exp`.
inline constexpr const char* kOnlineSoftmax = "online_softmax";

// Fields of a `kind`'s state (sum: 1; kOnlineSoftmax: 2; argmax, welford: 3): what a
// ReduceState of that kind holds, and what shared scratch must hold per thread it combines.
size_t state_fields(const std::string& kind);

// A Welford state (mean, m2, count) of `values` held in registers, found in two passes: their
// mean, then the sum of squared deviations from it (pairwise sums: short chains, rounding
// that grows with log n). Cheaper than an update per value (a division each, and a Chan
// merge per run lane) and no less accurate. Values from `masked_from` on count only where
// `masked` holds (when not null); none gives the empty state.
std::vector<llvm::Value*> welford_of(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& values,
                                     llvm::Value* masked, size_t masked_from, llvm::Type* t);

class ReduceState {
 public:
  // `kind`: sum prod max min any argmax argmin welford, or kOnlineSoftmax with `exp`;
  // `operand`: the dtype it reduces.
  // `exp2`: the target's fast_exp2, for accumulate_run (f32 online softmax only).
  ReduceState(llvm::IRBuilder<>& b, const std::string& kind, kir::DType operand, llvm::Type* type,
              llvm::FunctionCallee exp = {}, llvm::FunctionCallee exp2 = {});

  std::vector<llvm::Value*> identity() const;
  std::vector<llvm::Value*> accumulate(const std::vector<llvm::Value*>& s, llvm::Value* x,
                                       llvm::Value* position) const;
  // Whether accumulate_run folds several elements into one state (kOnlineSoftmax on f32).
  bool takes_runs() const;
  // `xs` folded into `s` at once (takes_runs): the max grows once per run, so the sum is
  // rescaled once, and each element's exp is a hardware exp2 (as accurate as the f32 sum
  // needs: a few ulps per term).
  std::vector<llvm::Value*> accumulate_run(const std::vector<llvm::Value*>& s,
                                           const std::vector<llvm::Value*>& xs) const;
  std::vector<llvm::Value*> combine(const std::vector<llvm::Value*>& a,
                                    const std::vector<llvm::Value*>& c) const;
  // The reduce's value (argmax: the index; welford: the mean) and a component (extract).
  llvm::Value* result(const std::vector<llvm::Value*>& s) const;
  llvm::Value* component(const std::vector<llvm::Value*>& s, int64_t k) const;
  size_t fields() const { return types_.size(); }
  const std::vector<llvm::Type*>& types() const { return types_; }

 private:
  llvm::Value* fast_div(llvm::Value* a, llvm::Value* d) const;
  // exp(d) for d <= 0 as the target's fast exp2 of d * log2 e.
  llvm::Value* fast_exp(llvm::Value* d) const;
  // exp(a - m) where m is the larger: 1 when they are equal (both -inf included; a state
  // whose max is +inf holds a NaN sum, which stays NaN).
  llvm::Value* scale(llvm::Value* a, llvm::Value* m) const;

  llvm::IRBuilder<>& b_;
  std::string kind_;
  bool float_ = false;
  bool unsigned_ = false;
  std::vector<llvm::Type*> types_;
  llvm::FunctionCallee exp_;
  llvm::FunctionCallee exp2_;
  bool has_exp2_ = false;
};

// Every thread's state combined over the block; every thread gets the result. `scratch` is a
// shared-memory array of at least fields * 32 i64 words; `warps` = block size / warp width.
std::vector<llvm::Value*> block_reduce(llvm::IRBuilder<>& b, const GpuTarget& t,
                                       const ReduceState& r, std::vector<llvm::Value*> state,
                                       llvm::Value* scratch, llvm::Type* scratch_type,
                                       unsigned warps);

// Inclusive scan across a warp in lane order: lane i gets lanes 0..i combined (`lane`: i32).
std::vector<llvm::Value*> warp_scan(llvm::IRBuilder<>& b, const GpuTarget& t, const ReduceState& r,
                                    std::vector<llvm::Value*> state, llvm::Value* lane);
// The previous lane's `inclusive` scan (the identity in lane 0): lanes before this one.
std::vector<llvm::Value*> warp_exclusive(llvm::IRBuilder<>& b, const GpuTarget& t,
                                         const ReduceState& r,
                                         const std::vector<llvm::Value*>& inclusive,
                                         llvm::Value* lane);
// Lane `from`'s state (`from`: i32) in every lane.
std::vector<llvm::Value*> warp_broadcast(llvm::IRBuilder<>& b, const GpuTarget& t,
                                         std::vector<llvm::Value*> state, llvm::Value* from);

// A scan across a block's `warps` warps: given each lane's warp-inclusive scan `upto`, the
// warps before this thread's `warp` combined (the identity in warp 0) and the whole block's
// combination, in every thread. `lane`, `warp`: i32. `scratch` is a shared-memory array of at
// least fields * 32 i64 words; every thread of the block must call it (it has barriers).
struct BlockScan {
  std::vector<llvm::Value*> before, total;
};
BlockScan block_scan(llvm::IRBuilder<>& b, const GpuTarget& t, const ReduceState& r,
                     const std::vector<llvm::Value*>& upto, llvm::Value* lane, llvm::Value* warp,
                     llvm::Value* scratch, llvm::Type* scratch_type, unsigned warps);

// Column mode (launch_shape.h: column_rows): thread t holds part t / warp of row t % warp, a
// row's `parts` parts lie a warp apart; each thread gets its row's parts combined in order.
// `scratch` is a shared-memory array of at least fields * `block` i64 words.
std::vector<llvm::Value*> column_reduce(llvm::IRBuilder<>& b, const GpuTarget& t,
                                        const ReduceState& r,
                                        const std::vector<llvm::Value*>& state,
                                        llvm::Value* scratch, llvm::Type* scratch_type,
                                        unsigned parts, unsigned block);

}  // namespace kiln::gpu
