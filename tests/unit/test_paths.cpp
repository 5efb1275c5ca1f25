#include "tests/unit/test_paths.h"

#include <cstdlib>
#include <filesystem>

namespace kiln::test {
namespace {

namespace fs = std::filesystem;

fs::path binary_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

std::string env_or(const char* name, const fs::path& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::string(value) : fallback.lexically_normal().string();
}

}  // namespace

std::string plugin_dir() {
  return env_or("KILN_TEST_PLUGIN_DIR", binary_dir() / ".." / "lib" / "kiln");
}

std::string test_plugin_dir() {
  return (binary_dir() / ".." / "lib" / "kiln-test").lexically_normal().string();
}

std::string data_dir() {
  if (const char* value = std::getenv("KILN_TEST_DATA_DIR"); value && *value) return value;
  std::error_code ec;
  fs::path dir = binary_dir();
  for (int up = 0; up < 6 && !dir.empty(); ++up, dir = dir.parent_path()) {
    if (fs::exists(dir / "examples" / "mlp.json", ec) &&
        fs::exists(dir / "configs" / "default.yaml", ec))
      return dir.string();
    if (dir == dir.parent_path()) break;
  }
  return "(no examples/ and configs/ above " + binary_dir().string() + "; set KILN_TEST_DATA_DIR)";
}

std::string cache_dir() {
  return env_or("KILN_TEST_CACHE_DIR", binary_dir() / ".." / "test-kernel-cache");
}

std::string header_cache_dir() {
  return env_or("KILN_TEST_HEADER_CACHE_DIR", binary_dir() / ".." / "test-header-cache");
}

}  // namespace kiln::test
