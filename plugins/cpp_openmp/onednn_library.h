// oneDNN 2.x (Debian's libdnnl2), opened at run time when present: the cpp_openmp plugin's
// "conv2d" extern and its two backward calls (kir_support/conv_call.h). f32 always (strict f32
// math: the reference's precision); bf16 and f16 only where this CPU has a non-reference
// implementation for them (a probe at open). Without the library the plugin lists no conv2d and the
// core generates kernels.
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
  // "conv2d f32 ...", one line per direction offered (with its dtypes), or nothing.
  std::vector<std::string> extern_lines() const;
  // The call's product in `direction` from its buffers in the call's order (a, b -> out);
  // the buffer x or dx points at its start (the call's offset is applied here). Safe from
  // several threads. Throws std::runtime_error.
  void run(kir_support::ConvDirection direction, const kir_support::ConvCall& call, const void* a,
           const void* b, void* out);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kiln::cpu
