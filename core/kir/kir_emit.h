// LoopIR kernels to KIR (sdk/include/kiln/kir.hpp): buffers become kernel parameters named
// in0.. (read) and out0.. (written), index expressions and constants their canonical text.
#pragma once

#include <string>
#include <vector>

#include "core/lower/loop_ir.h"
#include "kiln/kir.hpp"

namespace kiln {

kir::DType to_kir(DType d);
kir::Expr to_kir(const Expr& e);

// The KIR of one non-extern (or extern) kernel, and the program buffer behind each of its
// parameters, in parameter order.
struct EmittedKernel {
  kir::Kernel kernel;
  std::vector<int> buffers;
};
EmittedKernel emit_kir(const LoopKernel& k, const LoopProgram& program);

// The KIR of every generated (non-extern) kernel of `program`, in order.
std::vector<kir::Kernel> emit_kir_kernels(const LoopProgram& program);

// "%.17g"-style text that parses back to the same double ("inf", "-inf", "nan" included).
std::string number_text(double v, DType dtype);

}  // namespace kiln
