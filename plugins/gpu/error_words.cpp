#include "plugins/gpu/error_words.h"

namespace kiln::gpu {

std::string error_word_text(int32_t status) {
  return status == 1   ? std::string("an index is out of range")
         : status == 2 ? std::string("integer division by zero")
                       : "error code " + std::to_string(status);
}

}  // namespace kiln::gpu
