#include "plugins/cpp_openmp/compiler.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "kiln_cpu_runtime_text.h"

extern char** environ;

namespace kiln::cpu {
namespace {

namespace fs = std::filesystem;

// A directory of our own under the system temp dir, removed when this goes away.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kiln-cpp-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary directory");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs argv with stdout and stderr going to `log`; returns the exit status.
int run(const std::vector<std::string>& argv, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string joined(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

}  // namespace

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

std::vector<std::string> compile_command(const CompilerConfig& config, const fs::path& dir) {
  std::vector<std::string> argv{config.compiler};
  argv.insert(argv.end(), config.flags.begin(), config.flags.end());
  for (const auto& f : required_flags()) argv.push_back(f);
  argv.push_back("-I" + dir.string());
  argv.push_back((dir / "kernels.cpp").string());
  argv.push_back("-o");
  argv.push_back((dir / "kernels.so").string());
  for (const auto& l : link_libraries()) argv.push_back(l);
  return argv;
}

// Whether the configured command builds a trivial shared object with the runtime header:
// when it does not, a failure on generated code is the setup's, not kiln's.
bool builds_trivial_kernel(const CompilerConfig& config) {
  TempDir dir;
  write_file(dir.path() / "kiln_cpu_runtime.h", kiln_cpu_runtime_text);
  write_file(dir.path() / "kernels.cpp",
             "#include \"kiln_cpu_runtime.h\"\nextern \"C\" int kiln_probe() { return 0; }\n");
  return run(compile_command(config, dir.path()), dir.path() / "compiler.log") == 0;
}

}  // namespace

std::string compile_shared_object(const std::string& source, const CompilerConfig& config) {
  TempDir dir;
  write_file(dir.path() / "kiln_cpu_runtime.h", kiln_cpu_runtime_text);
  write_file(dir.path() / "kernels.cpp", source);
  const std::vector<std::string> argv = compile_command(config, dir.path());
  const fs::path log = dir.path() / "compiler.log";
  const int rc = run(argv, log);
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
  const int rc = run({compiler, "--version"}, log);
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
