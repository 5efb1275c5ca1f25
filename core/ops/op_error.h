// Inside op code, errors are thrown as OpError and caught where the registry's functions
// are called (graph building, the interpreter), which turn them into Error values.
#pragma once

#include <string>

namespace kiln {

struct OpError {
  std::string message;
  bool internal = false;
};

[[noreturn]] inline void op_fail(std::string message) {
  throw OpError{std::move(message), false};
}
[[noreturn]] inline void op_bug(std::string message) {
  throw OpError{std::move(message), true};
}

inline void op_check(bool condition, const std::string& message) {
  if (!condition) op_fail(message);
}

}  // namespace kiln
