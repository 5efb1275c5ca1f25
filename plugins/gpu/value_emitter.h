// One KIR op at a time into LLVM IR: types, constants, conversions, math, index expressions,
// masked loads and stores, index checks. The kernel skeleton (kernel_emitter.cpp) decides
// loops and where each op runs; this class decides what the op becomes.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <map>
#include <string>
#include <vector>

#include "kiln/kir.hpp"
#include "plugins/gpu/gpu_target.h"

namespace kiln::gpu {

// KIR values by id, and index variables (x0, r0) by name, visible at one point of the kernel.
struct Scope {
  std::map<int, llvm::Value*> values;
  std::map<std::string, llvm::Value*> vars;  // of the emitter's index type
  // When `aligned_var` is a multiple of `aligned_multiple` here, a load or store whose index
  // steps by 1 along it (and by multiples elsewhere) starts a run of that many elements and
  // gets the matching alignment, so the backend may join the run into one vector access.
  std::string aligned_var;
  int64_t aligned_multiple = 1;
  // Element `lane` of such a run: `aligned_var` is lane_base + lane. Linear addresses are
  // formed as (address at lane_base) + lane * stride, which shows the backend the run.
  int64_t lane = 0;
  llvm::Value* lane_base = nullptr;
};

class ValueEmitter {
 public:
  // `index_type`: i32 when every extent of the kernel fits (cheaper address arithmetic on a
  // GPU), else i64; loop variables and index expressions use it.
  ValueEmitter(llvm::IRBuilder<>& b, llvm::Module& m, const GpuTarget& target, const kir::Kernel& k,
               std::map<std::string, llvm::Value*> buffers, llvm::Value* status,
               llvm::IntegerType* index_type);
  llvm::IntegerType* index_type() const { return index_type_; }

  llvm::Type* storage_type(kir::DType d) const;   // in memory (bool: i8)
  llvm::Type* register_type(kir::DType d) const;  // in registers (bool: i1)
  llvm::Value* convert(llvm::Value* v, kir::DType from, kir::DType to);
  llvm::Value* constant(kir::DType d, double value);
  llvm::Value* index(const kir::Expr& e, const Scope& s);  // of index_type()
  // Emits `op` (not reduce/extract) and records its value in `s`.
  void emit(const kir::Op& op, Scope& s);
  kir::DType dtype_of(int id) const;
  // The coefficient of `var` in a linear index (0 when absent); -1 when not linear.
  static int64_t coefficient(const kir::Expr& e, const std::string& var);

  llvm::IRBuilder<>& builder() { return b_; }
  llvm::Function* function() { return b_.GetInsertBlock()->getParent(); }
  // A stack slot in the entry block (promoted to a register by the optimizer).
  llvm::AllocaInst* slot(llvm::Type* t, const std::string& name);

 private:
  unsigned alignment(const kir::Op& op, const Scope& s, kir::DType d) const;
  llvm::Value* address(const kir::Op& op, const Scope& s, llvm::Type* element, llvm::Value* base);
  llvm::Value* load(const kir::Op& op, Scope& s);
  void store(const kir::Op& op, Scope& s);
  void scatter(const kir::Op& op, Scope& s);  // scatter_emitter.cpp
  llvm::Value* combined(const std::string& combine, llvm::Value* old, llvm::Value* v, kir::DType d);
  llvm::Value* math(const kir::Op& op, Scope& s);
  llvm::Value* unary(const std::string& name, llvm::Value* a, kir::DType d);
  llvm::Value* binary(const std::string& name, llvm::Value* a, llvm::Value* b, kir::DType d);
  llvm::Value* check_index(llvm::Value* i, int64_t size);
  llvm::Value* integer_division(const std::string& name, llvm::Value* a, llvm::Value* b,
                                bool is_unsigned);
  llvm::Value* integer_pow(llvm::Value* base, llvm::Value* exponent);
  llvm::Value* call(const std::string& fn, std::vector<llvm::Value*> args, llvm::Type* t);
  void fail(int code);
  llvm::Value* floor_div(llvm::Value* a, llvm::Value* b);  // Python semantics
  llvm::Value* floor_mod(llvm::Value* a, llvm::Value* b);

  llvm::IRBuilder<>& b_;
  llvm::Module& m_;
  const GpuTarget& target_;
  const kir::Kernel& k_;
  std::map<std::string, llvm::Value*> buffers_;
  llvm::Value* status_;
  llvm::IntegerType* index_type_;
};

}  // namespace kiln::gpu
