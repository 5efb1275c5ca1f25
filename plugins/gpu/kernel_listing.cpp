#include "plugins/gpu/kernel_listing.h"

#include <sstream>
#include <stdexcept>

namespace kiln::gpu {

std::string kernel_lines(const std::vector<kir::Kernel>& kernels, const TuningConfig& tuning,
                         unsigned warp_width) {
  std::string text;
  for (const kir::Kernel& k : kernels) {
    if (k.kind == "extern") continue;
    const LaunchShape shape = launch_shape(k, tuning, warp_width);
    text +=
        "kernel " + k.name + " " + std::to_string(shape.block) + " " + std::to_string(shape.grid);
    for (const kir::Buffer& b : k.buffers)
      text += " " + std::to_string(b.elements * kir::dtype_size(b.dtype));
    text += "\n";
  }
  return text;
}

std::vector<ListedKernel> read_kernel_lines(std::istream& in, const std::string& end) {
  std::vector<ListedKernel> listed;
  std::string line;
  while (std::getline(in, line) && line != end) {
    std::istringstream fields(line);
    std::string word;
    ListedKernel k;
    if (!(fields >> word >> k.name >> k.shape.block >> k.shape.grid) || word != "kernel")
      throw std::invalid_argument("malformed artifact line: " + line);
    for (int64_t b; fields >> b;) k.buffer_bytes.push_back(b);
    listed.push_back(std::move(k));
  }
  if (line != end) throw std::invalid_argument("artifact without its '" + end + "' section");
  return listed;
}

}  // namespace kiln::gpu
