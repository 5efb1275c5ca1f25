// The ISA names ("gfx90a") of the machine's AMD GPUs, from the kernel driver's topology
// (/sys/class/kfd/kfd/topology/nodes/*/properties, `gfx_target_version`), in the order the
// HIP runtime numbers them when no *_VISIBLE_DEVICES setting reorders them. HIP's device
// properties carry the name too, but in a struct whose layout changed between ROCm releases.
#pragma once

#include <string>
#include <vector>

namespace kiln::amdgpu {

// One name per GPU node; empty when the topology is not there.
std::vector<std::string> kfd_gpu_archs(
    const std::string& topology = "/sys/class/kfd/kfd/topology/nodes");

// "gfx90a" for gfx_target_version 90010 (major * 10000 + minor * 100 + stepping); "" for 0.
std::string arch_from_target_version(long version);

}  // namespace kiln::amdgpu
