#include "plugins/kir_support/dynamic_library.h"

#include <dlfcn.h>

#include <utility>

namespace kiln::kir_support {

DynamicLibrary DynamicLibrary::open(const std::vector<std::string>& names,
                                    const std::function<bool(const DynamicLibrary&)>& bind,
                                    std::string& why) {
  for (const std::string& name : names) {
    DynamicLibrary lib;
    lib.handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib.handle_) {
      why = dlerror();
      continue;
    }
    lib.path_ = name;
    if (bind(lib)) return lib;
    why = name + " lacks a function kiln calls";
  }
  return {};
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  std::swap(handle_, other.handle_);
  std::swap(path_, other.path_);
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_) dlclose(handle_);
}

void* DynamicLibrary::address(const char* name) const {
  return handle_ ? dlsym(handle_, name) : nullptr;
}

}  // namespace kiln::kir_support
