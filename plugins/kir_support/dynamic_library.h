// A vendor library a plugin opens at run time (cuBLAS, cuDNN, oneDNN): the first candidate
// name that opens and has every symbol the caller binds. Kept mapped (RTLD_NODELETE): these
// libraries keep process-wide state, as LLVM does in the plugin itself.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace kiln::kir_support {

class DynamicLibrary {
 public:
  // `bind(library)` binds the caller's symbols and says whether all were there; `why` says
  // what went wrong with the last candidate when none served.
  static DynamicLibrary open(const std::vector<std::string>& names,
                             const std::function<bool(const DynamicLibrary&)>& bind,
                             std::string& why);
  DynamicLibrary() = default;
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary();

  bool loaded() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }
  // Sets `fn` to symbol `name`; false when the library has none.
  template <class F>
  bool symbol(const char* name, F& fn) const {
    fn = reinterpret_cast<F>(address(name));
    return fn != nullptr;
  }

 private:
  void* address(const char* name) const;
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace kiln::kir_support
