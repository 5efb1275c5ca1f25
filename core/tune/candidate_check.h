// Before a tuning candidate is timed, its output is checked against the default config's on
// the same inputs: a config the plugin marks exact must give the same bits, any other must
// agree within the dtype's tolerance and the rounding a reordered reduction may add. A
// candidate that computes something else is never a winner, however fast.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/graph/host_tensor.h"
#include "core/runtime/device_buffer.h"
#include "kiln/kir.hpp"

namespace kiln {

// Uploads `inputs` (tuning_inputs.h) into `buffers`, fills each `Out` buffer with 0xff bytes
// (NaN for floats, an invalid bool), launches kernel `k` of `exe` once and returns every
// buffer the kernel writes (Out and InOut), in buffer order.
Result<std::vector<HostTensor>> launch_outputs(const Plugin& plugin, kiln_executable* exe,
                                               const kir::Kernel& k,
                                               const std::vector<DeviceBuffer>& buffers,
                                               const std::vector<HostTensor>& inputs);

// `inputs` with every float made non-negative: the default config run on them gives the
// sums of magnitudes a reduction's rounding bound scales with.
std::vector<HostTensor> magnitudes_of(const std::vector<HostTensor>& inputs);

// "" when `actual` may stand for `expected`; otherwise which output differs and how.
// `magnitude` (the default's outputs on magnitudes_of the inputs) is used only when !exact.
std::string output_mismatch(const kir::Kernel& k, const std::vector<HostTensor>& actual,
                            const std::vector<HostTensor>& expected,
                            const std::vector<HostTensor>& magnitude, bool exact);

}  // namespace kiln
