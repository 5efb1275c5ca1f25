// Runs the configured C++ compiler on generated source and returns the shared object's
// bytes. Everything happens in a private temporary directory that is removed afterwards.
#pragma once

#include <string>
#include <vector>

namespace kiln::cpu {

struct CompilerConfig {
  std::string compiler = "g++";
  std::vector<std::string> flags;  // from the config, e.g. -O3 -march=native -fopenmp
};

// The flags kiln always adds: position-independent shared object, wrapping signed
// arithmetic (integer kernels wrap like the reference), and Sleef when it is available.
std::vector<std::string> required_flags();
std::vector<std::string> link_libraries();

// Throws std::runtime_error with the command and the compiler's messages on failure.
std::string compile_shared_object(const std::string& source, const CompilerConfig& config);

// "<first line of `compiler --version`>", or "unknown <compiler>" when it does not run.
std::string compiler_version(const std::string& compiler);

}  // namespace kiln::cpu
