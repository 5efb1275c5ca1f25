// The amdgpu plugin's externs: "mm" and "bmm" through rocBLAS when it opened, for the dtypes
// it has; the core generates kernels for the rest (and for every convolution).
#include <kiln/plugin.hpp>

#include "plugins/amdgpu/amdgpu_state.h"
#include "plugins/kir_support/matmul_call.h"

namespace kiln::amdgpu {
namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

kiln_error* extern_names(kiln_plugin* p, kiln_blob** names) {
  return guard([&] {
    std::string text;
    std::lock_guard lock(p->rocblas_mutex);
    for (const std::string& line : p->matmul_library().extern_lines()) text += line + "\n";
    *names = kiln::sdk::make_blob(std::move(text));
  });
}

void matmul_call(kiln_plugin* p, uint32_t device, const kiln_launch_args& args,
                 const std::string& name) {
  std::lock_guard lock(p->rocblas_mutex);
  if (!p->matmul_library().available())
    throw Failure(KILN_STATUS_UNIMPLEMENTED, "no extern '" + name + "'");
  const kir_support::MatmulCall call = p->memory.checked_matmul_call(device, args, name);
  const std::vector<int64_t> bytes = call.buffer_bytes();
  p->use(device);
  if (call.k == 0) {  // an empty sum: zeros
    if (bytes[2] > 0)
      p->check(p->hip.hipMemset(reinterpret_cast<void*>(args.buffers[2]), 0,
                                static_cast<size_t>(bytes[2])),
               name + ": hipMemset");
    return;
  }
  try {
    p->rocblas.matmul(device, call, args.buffers[0], args.buffers[1], args.buffers[2]);
  } catch (const std::runtime_error& e) {
    throw Failure(KILN_STATUS_UNIMPLEMENTED, name + ": " + e.what());
  }
}

kiln_error* extern_call(kiln_plugin* p, uint32_t device, const kiln_launch_args* args_in) {
  return guard([&] {
    const auto args = kiln::sdk::read_struct(args_in);
    const std::string name = args.kernel ? args.kernel : "";
    if (name == "mm" || name == "bmm") return matmul_call(p, device, args, name);
    throw Failure(KILN_STATUS_UNIMPLEMENTED, "no extern '" + name + "'");
  });
}

}  // namespace

void add_extern_functions(kiln_plugin_api& api) {
  api.extern_names = extern_names;
  api.extern_call = extern_call;
}

}  // namespace kiln::amdgpu
