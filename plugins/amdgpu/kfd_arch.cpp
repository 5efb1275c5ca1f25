#include "plugins/amdgpu/kfd_arch.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace kiln::amdgpu {

std::string arch_from_target_version(long version) {
  if (version <= 0) return "";
  const long major = version / 10000, minor = version / 100 % 100, stepping = version % 100;
  if (minor > 15 || stepping > 15) return "";
  std::ostringstream name;
  name << "gfx" << major << std::hex << minor << stepping;
  return name.str();
}

std::vector<std::string> kfd_gpu_archs(const std::string& topology) {
  std::map<long, std::string> by_node;  // nodes in numeric order, not the folder's
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(topology, ec)) {
    const std::string node = entry.path().filename().string();
    if (node.empty() || node.size() > 9 ||
        node.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::ifstream properties(entry.path() / "properties");
    std::string key;
    long value = 0;
    while (properties >> key >> value) {
      if (key != "gfx_target_version") continue;
      if (const std::string arch = arch_from_target_version(value); !arch.empty())
        by_node[std::stol(node)] = arch;
      break;
    }
  }
  std::vector<std::string> archs;
  for (auto& [node, arch] : by_node) archs.push_back(arch);
  return archs;
}

}  // namespace kiln::amdgpu
