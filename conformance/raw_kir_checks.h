// KIR given to the plugin through the raw ABI, each check in its own process: malformed KIR
// must be refused with an error, and where the plugin claims thread safety, compiles and
// launches from several threads at once must all succeed and compute the right values.
#pragma once

#include <string>
#include <vector>

#include "conformance/context.h"

namespace kiln::conformance {

Finding bad_kir(const Context& c);
Finding concurrent_compiles(const Context& c);
Finding concurrent_launches(const Context& c);

// y = x + `add` over n f32 elements, as kir/1 text: kernel `name`, buffers (x, y).
std::string add_kernel(const std::string& name, int64_t n, int add);
// Compiles `kir`; the artifact, or the error's text in `error`.
std::string compile(RawPlugin& p, uint32_t device, const std::string& kir, std::string& error);

// The kit's graph files in `dir` (*.json), sorted.
std::vector<std::string> kit_graphs(const std::string& dir);

}  // namespace kiln::conformance
