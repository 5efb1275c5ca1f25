// A compiled artifact (a shared object's bytes) loaded into this process: written to an
// anonymous memory file and opened with Boost.DLL, so nothing is left on disk.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace krt {
struct Status;
}

namespace kiln::cpu {

using KernelFn = void (*)(void* const* buffers, krt::Status* status);

class LoadedModule {
 public:
  // Throws std::runtime_error when the bytes are not a loadable shared object.
  explicit LoadedModule(const void* bytes, size_t size);
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  struct Kernel {
    KernelFn fn = nullptr;
    std::vector<int64_t> buffer_bytes;  // per buffer parameter
  };
  // Throws when the artifact has no such kernel.
  const Kernel& kernel(const std::string& name);

 private:
  struct Library;
  std::unique_ptr<Library> library_;
  int fd_ = -1;
  std::mutex mutex_;
  std::map<std::string, Kernel> kernels_;
};

}  // namespace kiln::cpu
