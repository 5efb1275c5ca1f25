// The ptx plugin's imports of memory other processes share (ABI 1.3): CUDA IPC handles,
// opened in the device's primary context and registered with the plugin's address checks,
// so launches and copies may name them like the plugin's own allocations.
#include <cstring>

#include "plugins/ptx/ptx_state.h"

namespace kiln::ptx {
namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

// CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS: harmless for memory of this same device.
constexpr unsigned kLazyPeerAccess = 1;

kiln_error* mem_import(kiln_plugin* p, uint32_t device, const kiln_mem_import_desc* desc,
                       uint64_t* address) {
  return guard([&] {
    p->use(device);
    kiln::sdk::check_import_desc(desc);
    if (desc->handle_type != KILN_MEM_HANDLE_CUDA_IPC || !p->cuda.cuIpcOpenMemHandle)
      throw Failure(KILN_STATUS_UNSUPPORTED,
                    "ptx imports KILN_MEM_HANDLE_CUDA_IPC only (with a driver that has IPC), "
                    "not handle type " +
                        std::to_string(desc->handle_type));
    CUipcMemHandle handle{};
    if (desc->handle == nullptr || desc->handle_size != sizeof handle.reserved)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "mem_import: a CUDA IPC handle is " + std::to_string(sizeof handle.reserved) +
                        " bytes; got " + std::to_string(desc->handle_size));
    std::memcpy(handle.reserved, desc->handle, sizeof handle.reserved);
    CUdeviceptr base = 0;
    if (const CUresult r = p->cuda.cuIpcOpenMemHandle(&base, handle, kLazyPeerAccess); r != 0)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "mem_import: cuIpcOpenMemHandle: " + cuda_error(p->cuda, r));
    // Closed again unless the import is recorded: no error leaves the handle open.
    try {
      CUdeviceptr start = 0;
      size_t size = 0;
      p->check(p->cuda.cuMemGetAddressRange(&start, &size, base), "cuMemGetAddressRange");
      const uint64_t end = desc->offset + desc->bytes;
      if (end > start + size - base)
        throw Failure(KILN_STATUS_INVALID_ARGUMENT, "mem_import: the shared allocation holds " +
                                                        std::to_string(start + size - base) +
                                                        " bytes; the import asks for bytes " +
                                                        std::to_string(desc->offset) + " to " +
                                                        std::to_string(end));
      const uint64_t at = base + desc->offset;
      std::lock_guard lock(p->import_mutex);
      if (p->imports.contains(at))
        throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                      "mem_import: this memory is already imported at the same address; release "
                      "that import first");
      p->memory.register_range(device, at, desc->bytes);
      p->imports[at] = IpcImport{device, base, desc->bytes};
      *address = at;
    } catch (...) {
      p->cuda.cuIpcCloseMemHandle(base);
      throw;
    }
  });
}

kiln_error* mem_release_import(kiln_plugin* p, uint32_t device, uint64_t address) {
  return guard([&] {
    p->use(device);
    IpcImport import;
    {
      std::lock_guard lock(p->import_mutex);
      const auto it = p->imports.find(address);
      if (it == p->imports.end() || it->second.device != device)
        throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                      "mem_release_import of an address mem_import did not return");
      import = it->second;
      p->imports.erase(it);
    }
    p->memory.unregister_range(device, address, import.bytes);
    // Work still queued may read or write it; the handle is closed even when that work failed.
    const CUresult waited = p->cuda.cuCtxSynchronize();
    const CUresult closed = p->cuda.cuIpcCloseMemHandle(import.base);
    p->check(waited, "waiting for the device");
    p->check(closed, "cuIpcCloseMemHandle");
  });
}

}  // namespace

void add_import_functions(kiln_plugin_api& api) {
  api.mem_import = mem_import;
  api.mem_release_import = mem_release_import;
}

void release_imports(kiln_plugin& p) {
  for (const auto& [address, import] : p.imports) {
    p.cuda.cuCtxSetCurrent(p.devices[import.device].context);
    p.cuda.cuIpcCloseMemHandle(import.base);
  }
  p.imports.clear();
}

}  // namespace kiln::ptx
