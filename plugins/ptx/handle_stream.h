// A library handle (cuBLAS, cuDNN) on the stream of one call: set when the guard is made, put
// back on the default stream when it goes, since the stream given may be destroyed first.
#pragma once

#include "plugins/ptx/cuda_driver.h"

namespace kiln::ptx {

template <class Handle>
class HandleOnStream {
 public:
  using SetStream = int (*)(Handle, CUstream);
  // `set` NULL: the library takes no streams and the handle stays as it is.
  HandleOnStream(SetStream set, Handle handle, CUstream stream)
      : set_(set), handle_(handle), reset_(set && stream) {
    status_ = set ? set(handle, stream) : 0;
  }
  ~HandleOnStream() {
    if (reset_) set_(handle_, nullptr);
  }
  HandleOnStream(const HandleOnStream&) = delete;
  HandleOnStream& operator=(const HandleOnStream&) = delete;
  int status() const { return status_; }  // the library's answer to setting the stream

 private:
  SetStream set_;
  Handle handle_;
  bool reset_;
  int status_ = 0;
};

}  // namespace kiln::ptx
