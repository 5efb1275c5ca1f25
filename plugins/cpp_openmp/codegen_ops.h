// C++ text for KIR pieces: types, index expressions, and one body op. The kernel skeleton
// (codegen.cpp) decides loops; this file decides what each op becomes.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "kiln/kir.hpp"
#include "plugins/kir_support/row_plan.h"

namespace kiln::cpu {

const char* c_type(kir::DType d);  // storage type: f16/bf16 travel as uint16_t bits
const char* c_kind(kir::DType d);  // krt::kBool, kInt, kFloat, kF16, kBF16

// How index variables print in one place of the kernel.
struct ExprContext {
  std::string inner;         // the vectorized variable ("" when none)
  bool per_lane = false;     // inside a per-lane lambda: inner is (inner + i), t<N> is lane(vN, i)
  std::string prefix = "v";  // values are named prefix<id>: "v" in loop bodies, "s" per row
  bool first_lane = false;   // t<N> is lane(vN, 0): a value every lane holds
  // Values computed once per row before the loop (as s<N>): t<N> of these prints as s<N>.
  const std::set<int>* row_scalars = nullptr;
};

std::string expr_c(const kir::Expr& e, const ExprContext& ctx);

// Coefficient of `var` if `e` is linear in it (0 when absent); nullopt when not linear.
std::optional<int64_t> coefficient(const kir::Expr& e, const std::string& var);

// Whether a pointwise kernel of two or more dims (several rows) reads an operand across
// memory along its innermost dim (a transpose): such kernels walk rows x columns in tiles.
bool reads_transposed(const kir::Kernel& k);

// The loads of a tiled kernel (reads_transposed) that walk memory along its inner dim with a
// stride and contiguously along its row dim, unmasked, direct, of a type a vector load reads
// as it is (f32 f64 i32 i64): a block of vector-width rows reads them as one square of
// contiguous row vectors transposed in registers. Empty when some strided load is not such.
std::vector<const kir::Op*> block_transposed_loads(const kir::Kernel& k);
bool mentions_indirect(const kir::Expr& e);

// Whether every indirect value `e` names (t<N>) is the same in every lane along `inner`: built
// from constants, positions and unmasked loads whose address does not move along it (an
// embedding's row number).
bool indirects_uniform(const kir::Kernel& k, const kir::Expr& e, const std::string& inner,
                       int depth = 0);

// The ops of a pointwise body whose values do not vary along `inner` (nor does anything they
// read): loads at addresses fixed along it (an embedding's row number), their bounds checks,
// and the math over those. Stores, scatters, reductions and scans are never among them.
std::set<int> invariant_along(const kir::Kernel& k, const std::string& inner);

// `const auto v<id> = krt::splat<L, T>(s<id>);`: a value computed once per row (s<id>) as
// the lanes of a loop body.
std::string splat_row_value(const kir::Kernel& k, int id);

// One op as a C++ statement (declaring v<id>, or a store). `reduce_acc` is how reduce ops
// feed their accumulator, which the skeleton declares.
std::string op_c(const kir::Kernel& k, const kir::Op& op, const ExprContext& ctx);

// The accumulator a reduce op declares: AccPair (scalar + vector lanes) when vectorized.
std::string accumulator_type(const kir::Kernel& k, const kir::Op& op, bool vectorized);

// A literal of dtype `d` from KIR text ("0.5", "-inf", "3").
std::string literal_c(const std::string& text, kir::DType d);

}  // namespace kiln::cpu
