#include "plugins/amdgpu/hsaco_linker.h"

#include <lld/Common/Driver.h>
#include <llvm/Support/raw_ostream.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

LLD_HAS_DRIVER(elf)

namespace kiln::amdgpu {
namespace {

// A folder of its own for one link, removed when the link is done.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln-hsaco-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error("cannot make a temporary folder for the HSACO link");
    path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  std::string file(const char* name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace

std::string link_hsaco(const std::string& object) {
  // lld keeps process-wide state while it links: one link at a time in this process.
  static std::mutex one_link;
  const TempFolder folder;
  const std::string in = folder.file("kernels.o"), out = folder.file("kernels.hsaco");
  {
    std::ofstream f(in, std::ios::binary);
    f.write(object.data(), static_cast<std::streamsize>(object.size()));
    if (!f) throw std::runtime_error("cannot write " + in);
  }
  std::string messages;
  llvm::raw_string_ostream errors(messages);
  llvm::raw_null_ostream quiet;
  const char* args[] = {"ld.lld", "-shared", "--no-undefined", in.c_str(), "-o", out.c_str()};
  lld::Result result{};
  {
    std::lock_guard lock(one_link);
    result = lld::lldMain(args, quiet, errors, {{lld::Gnu, &lld::elf::link}});
  }
  if (result.retCode != 0) throw std::runtime_error("lld: " + messages);
  std::ifstream f(out, std::ios::binary);
  std::ostringstream bytes;
  bytes << f.rdbuf();
  if (!f) throw std::runtime_error("lld wrote no code object");
  return bytes.str();
}

}  // namespace kiln::amdgpu
