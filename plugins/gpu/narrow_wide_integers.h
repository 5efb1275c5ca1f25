// KIR computes integers in 64 bits; GPUs do 64-bit integer arithmetic as several 32-bit
// instructions (a 64-bit multiply as three or four). Where only the low 32 bits of a 64-bit
// operation are used, or its operands fit 32 bits, this rewrites it on 32-bit values:
//  - an add, sub, mul, and, or or xor whose users read only its low 32 bits (LLVM's demanded
//    bits) becomes the 32-bit operation on the operands' low words;
//  - a multiply of two values below 2^32 becomes one widening 32x32->64 multiply;
//  - and, or, xor, and a shift right by a constant, of values below 2^32, become the 32-bit
//    operation, zero-extended.
// The results are unchanged bit for bit. Counter-based random numbers (Philox on 32-bit
// words, written as masked 64-bit arithmetic) are the main beneficiary.
#pragma once

#include <llvm/IR/Module.h>

namespace kiln::gpu {

// Rewrites `m`'s defined functions; returns how many operations were narrowed.
int narrow_wide_integers(llvm::Module& m);

}  // namespace kiln::gpu
