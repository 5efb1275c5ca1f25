#include "plugins/cpp_openmp/loaded_module.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <boost/dll/shared_library.hpp>
#include <stdexcept>

#include "plugins/cpp_openmp/codegen.h"

namespace kiln::cpu {
namespace {

// An OpenMP runtime pulled in by an artifact parks its worker threads inside
// its own code; unmapping it when the last artifact closes would pull the
// code from under those threads. Pin whichever runtime is loaded.
void pin_openmp_runtime() {
  for (const char* name : {"libgomp.so.1", "libomp.so", "libomp.so.5", "libiomp5.so"}) {
    if (void* h = dlopen(name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) dlclose(h);
  }
}

}  // namespace

struct LoadedModule::Library {
  boost::dll::shared_library lib;
};

LoadedModule::LoadedModule(const void* bytes, size_t size) {
  fd_ = memfd_create("kiln-kernels", MFD_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error("memfd_create failed");
  const auto* p = static_cast<const char*>(bytes);
  size_t written = 0;
  while (written < size) {
    const ssize_t n = write(fd_, p + written, size - written);
    if (n <= 0) {
      close(fd_);
      throw std::runtime_error("cannot write the artifact to memory");
    }
    written += static_cast<size_t>(n);
  }
  library_ = std::make_unique<Library>();
  boost::dll::fs::error_code ec;
  library_->lib.load("/proc/self/fd/" + std::to_string(fd_),
                     boost::dll::load_mode::rtld_local | boost::dll::load_mode::rtld_now, ec);
  if (ec) {
    close(fd_);
    throw std::runtime_error("the artifact is not a loadable shared object: " + ec.message());
  }
  pin_openmp_runtime();
}

LoadedModule::~LoadedModule() {
  library_.reset();
  if (fd_ >= 0) close(fd_);
}

const LoadedModule::Kernel& LoadedModule::kernel(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (auto it = kernels_.find(name); it != kernels_.end()) return it->second;
  const std::string symbol = kernel_symbol(name);
  const std::string sizes = "kiln_bytes_" + name;
  if (!library_->lib.has(symbol) || !library_->lib.has(sizes))
    throw std::runtime_error("the artifact has no kernel '" + name + "'");
  Kernel k;
  k.fn = library_->lib.get<void(void* const*, krt::Status*)>(symbol);
  const int64_t* bytes = &library_->lib.get<const int64_t>(sizes);
  for (size_t i = 0; bytes[i] >= 0 && i < 4096; ++i) k.buffer_bytes.push_back(bytes[i]);
  return kernels_[name] = std::move(k);
}

}  // namespace kiln::cpu
