// A plugin's extern list (extern_names): one line per library call, "NAME" for every dtype (not
// `tf32`: TF32 products go only to a call that lists them) or
// "NAME DTYPE..." for those only ("mm f32 f16 bf16 f64"; `tf32` for f32 calls allowed TF32
// products, kir::kExternTf32), then any features of the call ("conv2d f32 strides": it also
// takes the weight's and the output's strides).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph/dtype.h"
#include "core/lower/loop_ir.h"

namespace kiln {

// Whether `available` covers extern call `call` (its name and dtype parameter).
bool extern_available(const std::vector<std::string>& available, const LoopKernel& call);
// The same for extern `name` on `dtype`, before any call is made; `dtype_code` may also be
// kir::kExternTf32.
bool extern_available(const std::vector<std::string>& available, const std::string& name,
                      DType dtype);
bool extern_available(const std::vector<std::string>& available, const std::string& name,
                      int64_t dtype_code);
// Whether a line of `available` for `name` lists `feature`.
bool extern_has_feature(const std::vector<std::string>& available, const std::string& name,
                        const std::string& feature);

}  // namespace kiln
