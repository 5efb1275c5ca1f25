// The ptx plugin's externs: "mm" and "bmm" through cuBLAS (when it opened), for the dtypes
// cuBLAS has; the core generates kernels for the rest.
#include <kiln/plugin.hpp>

#include "plugins/kir_support/matmul_call.h"
#include "plugins/ptx/ptx_state.h"

namespace kiln::ptx {
namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

kiln_error* extern_names(kiln_plugin* p, kiln_blob** names) {
  return guard([&] {
    std::string text;
    std::lock_guard lock(p->cublas_mutex);
    for (const std::string& line : p->matmul_library().extern_lines()) text += line + "\n";
    *names = kiln::sdk::make_blob(std::move(text));
  });
}

kiln_error* extern_call(kiln_plugin* p, uint32_t device, const kiln_launch_args* args_in) {
  return guard([&] {
    const auto args = kiln::sdk::read_struct(args_in);
    const std::string name = args.kernel ? args.kernel : "";
    bool available = false;
    {
      std::lock_guard lock(p->cublas_mutex);
      available = p->matmul_library().available();
    }
    if ((name != "mm" && name != "bmm") || !available)
      throw Failure(KILN_STATUS_UNIMPLEMENTED, "no extern '" + name + "'");
    kir_support::MatmulCall call;
    try {
      call = kir_support::read_matmul_call(args);
    } catch (const std::invalid_argument& e) {
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, name + ": " + e.what());
    }
    const std::vector<int64_t> bytes = call.buffer_bytes();
    if (args.num_buffers != bytes.size())
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    name + " takes 3 buffers, got " + std::to_string(args.num_buffers));
    p->use(device);
    for (size_t i = 0; i < bytes.size(); ++i) {
      if (bytes[i] > 0 && !p->contains(device, args.buffers[i], static_cast<uint64_t>(bytes[i])))
        throw Failure(KILN_STATUS_INVALID_ARGUMENT, name + ": buffer " + std::to_string(i) +
                                                        " is not " + std::to_string(bytes[i]) +
                                                        " bytes inside one allocation");
    }
    if (call.k == 0) {  // an empty sum: zeros
      if (bytes[2] > 0)
        p->check(p->cuda.cuMemsetD8(args.buffers[2], 0, static_cast<size_t>(bytes[2])),
                 name + ": cuMemsetD8");
      return;
    }
    std::lock_guard lock(p->cublas_mutex);
    try {
      p->cublas.matmul(device, call, args.buffers[0], args.buffers[1], args.buffers[2]);
    } catch (const std::runtime_error& e) {
      throw Failure(KILN_STATUS_UNIMPLEMENTED, name + ": " + e.what());
    }
  });
}

}  // namespace

void add_extern_functions(kiln_plugin_api& api) {
  api.extern_names = extern_names;
  api.extern_call = extern_call;
}

}  // namespace kiln::ptx
