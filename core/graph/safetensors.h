// The safetensors format: an 8-byte little-endian header length, a JSON header naming each
// tensor's dtype, shape and byte range, then the bytes. Every field of a file is checked
// before it is trusted; errors name the file and the tensor.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/host_tensor.h"

namespace kiln {

Result<std::map<std::string, HostTensor>> read_safetensors(const std::string& path);
Result<std::map<std::string, HostTensor>> parse_safetensors(const std::vector<std::byte>& bytes,
                                                            const std::string& source);

// Writes atomically (a temporary file renamed into place); tensors in the given order.
Status write_safetensors(const std::string& path,
                         const std::vector<std::pair<std::string, HostTensor>>& tensors);
std::vector<std::byte> serialize_safetensors(
    const std::vector<std::pair<std::string, HostTensor>>& tensors);

}  // namespace kiln
