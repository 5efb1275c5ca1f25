#include "plugins/gpu/narrow_wide_integers.h"

#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/DemandedBits.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Support/KnownBits.h>
#include <llvm/Transforms/Utils/Local.h>

#include <algorithm>
#include <vector>

namespace kiln::gpu {
namespace {

constexpr uint64_t kLow32 = 0xFFFFFFFFull;

bool fits_32_bits(llvm::Value* v, const llvm::DataLayout& dl) {
  return llvm::computeKnownBits(v, dl).countMinLeadingZeros() >= 32;
}

// Whether the low 32 bits of `op`'s result depend only on the low 32 bits of its operands.
bool low_bits_from_low_bits(unsigned opcode) {
  switch (opcode) {
    case llvm::Instruction::Add:
    case llvm::Instruction::Sub:
    case llvm::Instruction::Mul:
    case llvm::Instruction::And:
    case llvm::Instruction::Or:
    case llvm::Instruction::Xor:
      return true;
    default:
      return false;
  }
}

bool from_32_bits(llvm::Value* v) {
  auto* z = llvm::dyn_cast<llvm::ZExtInst>(v);
  return z && z->getSrcTy()->isIntegerTy(32);
}

// Already the form this pass gives a multiply (so a second round leaves it).
bool is_widening_multiply(const llvm::BinaryOperator& inst) {
  return inst.hasNoUnsignedWrap() && from_32_bits(inst.getOperand(0)) &&
         from_32_bits(inst.getOperand(1));
}

// A narrowed value's upper bits are now zero where they were not demanded: flags on its users
// that assumed the old bits (nsw on a trunc, say) could make them poison. As LLVM's BDCE
// does, they go, through phis and selects that pass the value on.
void drop_poison_flags_of_users(llvm::Value* v) {
  std::vector<llvm::Value*> work{v};
  std::vector<llvm::Value*> seen;
  while (!work.empty()) {
    llvm::Value* next = work.back();
    work.pop_back();
    for (llvm::User* u : next->users()) {
      auto* user = llvm::dyn_cast<llvm::Instruction>(u);
      if (!user || std::find(seen.begin(), seen.end(), user) != seen.end()) continue;
      seen.push_back(user);
      user->dropPoisonGeneratingFlags();
      if (llvm::isa<llvm::PHINode>(user) || llvm::isa<llvm::SelectInst>(user)) work.push_back(user);
    }
  }
}

// The value `v` as i32 (its low bits): the source of a zero extension, else a truncation.
llvm::Value* low_word(llvm::IRBuilder<>& ir, llvm::Value* v) {
  if (from_32_bits(v)) return llvm::cast<llvm::ZExtInst>(v)->getOperand(0);
  return ir.CreateTrunc(v, ir.getInt32Ty());
}

// The 32-bit form of a 64-bit binary operation, or null: where only its low 32 bits are used
// (`demanded`), or where its operands fit 32 bits (a widening multiply; and, or, xor and
// right shifts by a constant, zero-extended).
llvm::Value* narrowed(llvm::BinaryOperator& inst, const llvm::APInt& demanded,
                      const llvm::DataLayout& dl) {
  llvm::Value* a = inst.getOperand(0);
  llvm::Value* b = inst.getOperand(1);
  const unsigned opcode = inst.getOpcode();
  llvm::IRBuilder<> ir(&inst);
  llvm::Type* i64 = ir.getInt64Ty();
  if ((demanded.getZExtValue() & ~kLow32) == 0 && low_bits_from_low_bits(opcode))
    return ir.CreateZExt(ir.CreateBinOp(static_cast<llvm::Instruction::BinaryOps>(opcode),
                                        low_word(ir, a), low_word(ir, b)),
                         i64);
  if (!fits_32_bits(a, dl)) return nullptr;
  switch (opcode) {
    case llvm::Instruction::Mul:
      // Both below 2^32: the product fits 64 bits unsigned, and NVPTX selects mul.wide.u32.
      if (!fits_32_bits(b, dl) || is_widening_multiply(inst)) return nullptr;
      return ir.CreateMul(ir.CreateZExt(low_word(ir, a), i64), ir.CreateZExt(low_word(ir, b), i64),
                          "", /*HasNUW=*/true);
    case llvm::Instruction::And:
    case llvm::Instruction::Or:
    case llvm::Instruction::Xor:
      if (!fits_32_bits(b, dl)) return nullptr;
      return ir.CreateZExt(ir.CreateBinOp(static_cast<llvm::Instruction::BinaryOps>(opcode),
                                          low_word(ir, a), low_word(ir, b)),
                           i64);
    case llvm::Instruction::LShr:
    case llvm::Instruction::AShr:  // of a value below 2^32: the same as a logical shift
      if (auto* shift = llvm::dyn_cast<llvm::ConstantInt>(b); shift && shift->getZExtValue() < 32)
        return ir.CreateZExt(ir.CreateLShr(low_word(ir, a), shift->getZExtValue()), i64);
      return nullptr;
    default:
      return nullptr;
  }
}

int narrow_function(llvm::Function& f) {
  const llvm::DataLayout& dl = f.getParent()->getDataLayout();
  llvm::AssumptionCache assumptions(f);
  llvm::DominatorTree dominators(f);
  llvm::DemandedBits demanded(f, assumptions, dominators);
  std::vector<std::pair<llvm::BinaryOperator*, llvm::APInt>> candidates;
  for (llvm::BasicBlock& block : f)
    for (llvm::Instruction& inst : block)
      if (auto* op = llvm::dyn_cast<llvm::BinaryOperator>(&inst);
          op && op->getType()->isIntegerTy(64))
        candidates.emplace_back(op, demanded.getDemandedBits(op));
  int count = 0;
  for (auto& [op, bits] : candidates) {
    if (llvm::Value* narrow = narrowed(*op, bits, dl)) {
      op->replaceAllUsesWith(narrow);
      op->eraseFromParent();
      drop_poison_flags_of_users(narrow);
      ++count;
    }
  }
  // What nothing uses any more (the truncations of narrowed operands' old forms).
  for (llvm::BasicBlock& block : f)
    for (llvm::Instruction& inst : llvm::make_early_inc_range(llvm::reverse(block)))
      if (llvm::isInstructionTriviallyDead(&inst)) inst.eraseFromParent();
  return count;
}

}  // namespace

int narrow_wide_integers(llvm::Module& m) {
  int count = 0;
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    // Each round's narrowed operations leave fewer bits demanded of their operands.
    for (int round = 0; round < 4; ++round) {
      const int narrowed_now = narrow_function(f);
      count += narrowed_now;
      if (narrowed_now == 0) break;
    }
  }
  return count;
}

}  // namespace kiln::gpu
