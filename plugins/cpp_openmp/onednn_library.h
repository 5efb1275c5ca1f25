// oneDNN 2.x (Debian's libdnnl2), opened at run time when present: the cpp_openmp plugin's
// "conv2d" extern. f32 always (strict f32 math: the reference's precision); bf16 and f16 only
// where this CPU has a non-reference implementation for them (a probe at open). Without the
// library the plugin lists no conv2d and the core generates kernels.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugins/kir_support/conv_call.h"

namespace kiln::cpu {

class OnednnLibrary {
 public:
  // Tries `path` ("" for libdnnl.so.2 on the loader's path; "off" to go without). `why` says
  // what happened when it did not open.
  static OnednnLibrary open(const std::string& path, std::string& why);
  OnednnLibrary();
  OnednnLibrary(OnednnLibrary&& other) noexcept;
  OnednnLibrary& operator=(OnednnLibrary&& other) noexcept;
  OnednnLibrary(const OnednnLibrary&) = delete;
  OnednnLibrary& operator=(const OnednnLibrary&) = delete;
  ~OnednnLibrary();

  bool available() const;
  const std::string& path() const;
  // "conv2d f32 ..." (the dtypes offered), or nothing.
  std::vector<std::string> extern_lines() const;
  // y = conv2d(x, w) for the call's parameters; x points at the buffer's start (the call's
  // offset is applied here). Safe from several threads. Throws std::runtime_error.
  void conv2d(const kir_support::ConvCall& call, const void* x, const void* w, void* y);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kiln::cpu
