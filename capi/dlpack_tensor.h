// DLPack tensors as the core sees them: dtype codes both ways, and a DLTensor described as a
// TensorRef relative to a compiled graph's device.
#pragma once

#include <kiln/runtime.h>

#include <optional>
#include <string_view>

#include "core/graph/dtype.h"
#include "core/runtime/tensor_ref.h"
#include "core/support/result.h"

namespace kiln::capi {

std::optional<DType> from_dl_dtype(DLDataType t);
DLDataType to_dl_dtype(DType d);

// `t` as a TensorRef: on the graph's device when its DLDevice is `device`; on the host when
// it is kDLCPU (or kDLCUDAHost); an error naming "`kind` `index`" (input 0) for any other
// device, lanes != 1, a dtype kiln lacks, or a negative rank. The name is built only for an
// error: this runs for every tensor of every call.
Result<TensorRef> tensor_ref(const DLTensor& t, DLDevice device, std::string_view kind,
                             size_t index);

}  // namespace kiln::capi
