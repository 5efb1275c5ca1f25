#include "core/support/error.h"

namespace kiln {

std::string Error::to_string() const {
  std::string text = kind_ == ErrorKind::User ? "error: " : "internal error: ";
  for (auto it = context_.rbegin(); it != context_.rend(); ++it) text += *it + ": ";
  text += message_;
  return text;
}

}  // namespace kiln
