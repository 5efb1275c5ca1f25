// Runs the configured C++ compiler on generated source and returns the shared object's
// bytes. Everything happens in a private temporary directory that is removed afterwards.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::cpu {

struct CompilerConfig {
  std::string compiler = "g++";
  std::vector<std::string> flags;  // from the config, e.g. -O3 -march=native -fopenmp
  // Holds the runtime header and its precompiled form (precompiled_header.h); searched
  // first when set.
  std::filesystem::path header_dir;
};

// The compiler could not be started at all: a setup error, not a bug in generated code.
struct CompilerMissing : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The compiler runs but cannot build even a trivial kernel with the configured flags (a
// broken toolchain, a flag it does not know, a missing library): a setup error too.
struct CompilerUnusable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The flags kiln always adds: position-independent shared object, wrapping signed
// arithmetic (integer kernels wrap like the reference), and Sleef when it is available.
std::vector<std::string> required_flags();
std::vector<std::string> link_libraries();

// What a plugin unpacked from a bundle ships beside itself: `-I` for <plugin>/../../include
// and `-L` plus an rpath for <plugin>/.. when those hold Sleef's header and library. Empty
// in a build tree or an install that relies on the system's copies.
std::vector<std::string> shipped_library_flags(const std::string& plugin_path);

// Throws CompilerMissing or CompilerUnusable for setup errors, std::runtime_error (kiln's
// generated code refused by a working compiler) otherwise; each with the command and the
// compiler's messages.
std::string compile_shared_object(const std::string& source, const CompilerConfig& config);

// The first line of `compiler --version`; throws std::runtime_error saying how to fix it
// when the compiler is not on PATH or does not run.
std::string compiler_version(const std::string& compiler);

}  // namespace kiln::cpu
