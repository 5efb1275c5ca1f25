// The ptx plugin's externs: "mm" and "bmm" through cuBLAS, "conv2d" and its backward calls
// through cuDNN (each when its library opened), for the dtypes the library has; the core
// generates kernels for the rest. Both libraries run on the stream a call is given (so a
// capture records them); a call that must allocate (cuDNN's workspace growing) is not captured.
#include <kiln/plugin.hpp>

#include "plugins/kir_support/conv_call.h"
#include "plugins/kir_support/matmul_call.h"
#include "plugins/ptx/ptx_state.h"

namespace kiln::ptx {
namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

kiln_error* extern_names(kiln_plugin* p, kiln_blob** names) {
  return guard([&] {
    std::string text;
    {
      std::lock_guard lock(p->cublas_mutex);
      for (const std::string& line : p->matmul_library().extern_lines()) text += line + "\n";
    }
    {
      std::lock_guard lock(p->cudnn_mutex);
      for (const std::string& line : p->conv_library().extern_lines()) text += line + "\n";
    }
    *names = kiln::sdk::make_blob(std::move(text));
  });
}

void matmul_call(kiln_plugin* p, uint32_t device, const kiln_launch_args& args,
                 const std::string& name) {
  {
    std::lock_guard lock(p->cublas_mutex);
    if (!p->matmul_library().available())
      throw Failure(KILN_STATUS_UNIMPLEMENTED, "no extern '" + name + "'");
  }
  const kir_support::MatmulCall call = p->memory.checked_matmul_call(device, args, name);
  const std::vector<int64_t> bytes = call.buffer_bytes();
  p->use(device);
  if (call.k == 0 || !p->cublas.takes_streams())
    refuse_in_capture(args.stream, "extern " + name + " (on the legacy default stream)");
  if (call.k == 0) {  // an empty sum: zeros
    if (bytes[2] > 0)
      p->check(p->cuda.cuMemsetD8(args.buffers[2], 0, static_cast<size_t>(bytes[2])),
               name + ": cuMemsetD8");
    return;
  }
  std::lock_guard lock(p->cublas_mutex);
  try {
    p->cublas.matmul(device, call, args.buffers[0], args.buffers[1], args.buffers[2],
                     driver_stream(*p, args.stream));
  } catch (const std::runtime_error& e) {
    throw Failure(KILN_STATUS_UNIMPLEMENTED, name + ": " + e.what());
  }
}

void conv_call(kiln_plugin* p, uint32_t device, const kiln_launch_args& args,
               kir_support::ConvDirection direction, const std::string& name) {
  std::lock_guard lock(p->cudnn_mutex);
  if (!p->conv_library().available())
    throw Failure(KILN_STATUS_UNIMPLEMENTED, "no extern '" + name + "'");
  if (!p->cudnn.takes_streams())
    refuse_in_capture(args.stream, "extern " + name + " (on the legacy default stream)");
  kir_support::ConvCall call;
  try {
    call = kir_support::read_conv_call(args);
  } catch (const std::invalid_argument& e) {
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, name + ": " + e.what());
  }
  p->memory.check_buffers(device, args.buffers, args.num_buffers, call.buffer_bytes(direction),
                          name);
  p->use(device);
  // The device's workspace, grown when a convolution needs more (cuMemFree waits for the work
  // queued on the old one). A recording names the workspace it was made with, so while any
  // recording lives an outgrown workspace is kept until the plugin goes.
  auto workspace = [&](size_t bytes) {
    if (p->cudnn_workspace.size() <= device) p->cudnn_workspace.resize(device + 1, {0, 0});
    auto& [address, size] = p->cudnn_workspace[device];
    if (size < bytes) {
      // An allocation cannot be recorded: the first plain run grows the workspace.
      refuse_in_capture(args.stream, "extern " + name + " growing its workspace");
      if (address && p->graphs_alive > 0)
        p->retired_workspaces.emplace_back(device, address);
      else if (address)
        p->check(p->cuda.cuMemFree(address), name + ": freeing the workspace");
      address = 0;
      size = 0;
      p->check(p->cuda.cuMemAlloc(&address, bytes), name + ": allocating the workspace");
      size = bytes;
    }
    return address;
  };
  try {
    p->cudnn.run(direction, device, call, args.buffers[0], args.buffers[1], args.buffers[2],
                 workspace, driver_stream(*p, args.stream));
  } catch (const std::runtime_error& e) {
    throw Failure(KILN_STATUS_UNIMPLEMENTED, name + ": " + e.what());
  }
}

kiln_error* extern_call(kiln_plugin* p, uint32_t device, const kiln_launch_args* args_in) {
  return guard([&] {
    const auto args = kiln::sdk::read_struct(args_in);
    const std::string name = args.kernel ? args.kernel : "";
    if (name == "mm" || name == "bmm") return matmul_call(p, device, args, name);
    if (const auto direction = kir_support::conv_direction(name))
      return conv_call(p, device, args, *direction, name);
    throw Failure(KILN_STATUS_UNIMPLEMENTED, "no extern '" + name + "'");
  });
}

}  // namespace

void add_extern_functions(kiln_plugin_api& api) {
  api.extern_names = extern_names;
  api.extern_call = extern_call;
}

}  // namespace kiln::ptx
