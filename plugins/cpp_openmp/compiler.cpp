#include "plugins/cpp_openmp/compiler.h"

#include <filesystem>
#include <stdexcept>

#include "kiln_cpu_runtime_text.h"
#include "run_command.h"
#include "temp_dir.h"

namespace kiln::cpu {

namespace fs = std::filesystem;

std::vector<std::string> required_flags() {
  std::vector<std::string> flags = {"-std=c++17", "-shared",         "-fPIC",
                                    "-fwrapv",    "-fno-math-errno", "-w"};
#ifdef KILN_HAVE_SLEEF
  flags.push_back("-DKRT_SLEEF");
#endif
  return flags;
}

std::vector<std::string> link_libraries() {
#ifdef KILN_HAVE_SLEEF
  return {"-lsleef"};
#else
  return {};
#endif
}

namespace {

// The runtime header lies in <dir>/runtime, not beside kernels.cpp: GCC looks beside the
// including file first, and the precompiled header's directory must come before the text.
std::vector<std::string> compile_command(const CompilerConfig& config, const fs::path& dir,
                                         bool precompiled) {
  std::vector<std::string> argv{config.compiler};
  argv.insert(argv.end(), config.flags.begin(), config.flags.end());
  for (const auto& f : required_flags()) argv.push_back(f);
  if (precompiled && !config.header_dir.empty()) argv.push_back("-I" + config.header_dir.string());
  argv.push_back("-I" + (dir / "runtime").string());
  argv.push_back((dir / "kernels.cpp").string());
  argv.push_back("-o");
  argv.push_back((dir / "kernels.so").string());
  for (const auto& l : link_libraries()) argv.push_back(l);
  return argv;
}

// Whether the configured command builds a trivial shared object with the runtime header:
// when it does not, a failure on generated code is the setup's, not kiln's.
void write_sources(const fs::path& dir, const std::string& source) {
  fs::create_directory(dir / "runtime");
  write_file(dir / "runtime" / "kiln_cpu_runtime.h", kiln_cpu_runtime_text);
  write_file(dir / "kernels.cpp", source);
}

bool builds_trivial_kernel(const CompilerConfig& config) {
  TempDir dir;
  write_sources(dir.path(),
                "#include \"kiln_cpu_runtime.h\"\nextern \"C\" int kiln_probe() { return 0; }\n");
  return run_command(compile_command(config, dir.path(), false), dir.path() / "compiler.log") == 0;
}

}  // namespace

std::string compile_shared_object(const std::string& source, const CompilerConfig& config) {
  TempDir dir;
  write_sources(dir.path(), source);
  const fs::path log = dir.path() / "compiler.log";
  std::vector<std::string> argv = compile_command(config, dir.path(), true);
  int rc = run_command(argv, log);
  if (rc > 0 && !config.header_dir.empty()) {
    // Whatever went wrong, the header text decides: a precompiled header that another
    // process removed or damaged meanwhile must not fail the compile.
    argv = compile_command(config, dir.path(), false);
    rc = run_command(argv, log);
  }
  if (rc < 0) {
    throw CompilerMissing("compiler '" + config.compiler +
                          "' not found on PATH; set plugins[].options.compiler");
  }
  if (rc != 0) {
    std::string messages = read_file(log);
    if (messages.size() > 4000) messages = messages.substr(0, 4000) + "\n...";
    const std::string what = "(exit " + std::to_string(rc) + "): " + joined(argv) + "\n" + messages;
    if (!builds_trivial_kernel(config))
      throw CompilerUnusable("compiler '" + config.compiler +
                             "' cannot build even an empty kernel with these flags; check "
                             "plugins[].options.compiler and flags " +
                             what);
    throw std::runtime_error("the compiler refused generated code " + what);
  }
  return read_file(dir.path() / "kernels.so");
}

std::vector<std::string> shipped_library_flags(const std::string& plugin_path) {
  if (plugin_path.empty()) return {};
  const fs::path plugin_dir = fs::path(plugin_path).parent_path();
  const fs::path include = plugin_dir / ".." / ".." / "include";
  const fs::path lib = plugin_dir / "..";
  std::error_code ec;
  std::vector<std::string> flags;
  if (fs::exists(include / "sleef.h", ec))
    flags.push_back("-I" + fs::weakly_canonical(include, ec).string());
  if (fs::exists(lib / "libsleef.so", ec)) {
    const std::string dir = fs::weakly_canonical(lib, ec).string();
    flags.push_back("-L" + dir);
    flags.push_back("-Wl,-rpath," + dir);
  }
  return flags;
}

std::string compiler_version(const std::string& compiler) {
  TempDir dir;
  const fs::path log = dir.path() / "version.txt";
  const int rc = run_command({compiler, "--version"}, log);
  if (rc < 0) {
    throw std::runtime_error("compiler '" + compiler +
                             "' not found on PATH; set plugins[].options.compiler");
  }
  if (rc != 0) {
    throw std::runtime_error("compiler '" + compiler + "' --version exits " + std::to_string(rc) +
                             "; set plugins[].options.compiler to a working C++ compiler");
  }
  std::string text = read_file(log);
  return text.substr(0, text.find('\n'));
}

}  // namespace kiln::cpu
