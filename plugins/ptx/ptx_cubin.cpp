#include "plugins/ptx/ptx_cubin.h"

#include <cstdint>
#include <vector>

namespace kiln::ptx {
namespace {

// CUjit_option and CUjitInputType values.
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferBytes = 6;
constexpr int kJitInputPtx = 1;

}  // namespace

std::string assemble_cubin(const CudaDriver& cuda, const std::string& ptx, std::string& why) {
  if (!cuda.cuLinkCreate) {
    why = "the CUDA driver has no cuLink entry points";
    return "";
  }
  std::vector<char> log(16 * 1024, '\0');
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferBytes};
  void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(log.size() - 1))};
  CUlinkState state = nullptr;
  if (const CUresult r = cuda.cuLinkCreate(2, options, values, &state); r != 0) {
    why = "cuLinkCreate: " + cuda_error(cuda, r);
    return "";
  }
  std::string cubin;
  CUresult r = cuda.cuLinkAddData(state, kJitInputPtx, const_cast<char*>(ptx.c_str()),
                                  ptx.size() + 1, "kiln", 0, nullptr, nullptr);
  void* image = nullptr;
  size_t bytes = 0;
  if (r == 0) r = cuda.cuLinkComplete(state, &image, &bytes);
  if (r == 0 && image && bytes > 0) {
    cubin.assign(static_cast<const char*>(image), bytes);  // the state owns `image`
  } else {
    why = "assembling the PTX: " + (r != 0 ? cuda_error(cuda, r) : std::string("no image")) +
          (log[0] ? std::string(": ") + log.data() : "");
  }
  cuda.cuLinkDestroy(state);
  return cubin;
}

}  // namespace kiln::ptx
