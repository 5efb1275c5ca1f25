// A plugin without a matmul library still runs mm/bmm on its device: the Extern call becomes
// a generated reduction kernel ([batch, m, n] over [k], operands read through the call's
// offsets and strides, products summed in the compute dtype). Slower than a library, but
// correct and on the device, instead of a trip to the host oracle.
#pragma once

#include <string>
#include <vector>

#include "core/lower/loop_ir.h"

namespace kiln {

// Whether the plugin's extern list (`available`: lines "NAME" for every dtype, or "NAME DTYPE..."
// for those dtypes only, e.g. "mm f32 f16 bf16 f64") covers extern call `call`.
bool extern_available(const std::vector<std::string>& available, const LoopKernel& call);
// The same for extern `name` on `dtype`, before any call is made; `dtype_code` may also be
// kir::kExternTf32 (listed as "tf32").
bool extern_available(const std::vector<std::string>& available, const std::string& name,
                      DType dtype);
bool extern_available(const std::vector<std::string>& available, const std::string& name,
                      int64_t dtype_code);

// Whether both operands of mm/bmm call `call` have a BLAS layout: a unit stride, and the other
// stride at least the extent along it. Libraries take nothing else.
bool library_layout(const LoopKernel& call);

// Replaces every mm/bmm Extern that `available` (the plugin's externs) does not cover, or
// whose operands no library takes (library_layout).
// Returns how many it replaced.
int generate_missing_matmuls(LoopProgram& program, const std::vector<std::string>& available);

}  // namespace kiln
