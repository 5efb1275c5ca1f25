// The kernels' runtime header compiled once per compiler, flags and lane count (GCC's
// precompiled headers) and kept under a directory of the user's: parsing the header text is
// about 1 s of every kernel compile, reading its precompiled form about 0.1 s.
#pragma once

#include <filesystem>
#include <string>

#include "compiler.h"

namespace kiln::cpu {

// The directory to search first for kiln_cpu_runtime.h when compiling kernels for `config`
// (whose compiler reports `compiler_version`) whose source defines KRT_LANES as `lanes`: it holds
// the header and its precompiled form, made under `root` on first use and checked against its
// checksum on every later one. An empty path and `why` when none can be used; kernels then compile
// from the header text.
std::filesystem::path precompiled_header_dir(const std::filesystem::path& root,
                                             const CompilerConfig& config,
                                             const std::string& compiler_version, int lanes,
                                             std::string& why);

// $XDG_CACHE_HOME/kiln/cpp_openmp-headers, else $HOME/.cache/kiln/cpp_openmp-headers; empty
// when neither variable is set.
std::filesystem::path default_header_cache();

}  // namespace kiln::cpu
