// Errors as values. A user error (bad file, bad config, unsupported request) and an
// internal error (a bug in kiln or a plugin) are different kinds and read differently.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kiln {

enum class ErrorKind { User, Internal };

class Error {
 public:
  static Error user(std::string message) { return Error(ErrorKind::User, std::move(message)); }
  static Error internal(std::string message) {
    return Error(ErrorKind::Internal, std::move(message));
  }

  ErrorKind kind() const { return kind_; }
  bool is_user() const { return kind_ == ErrorKind::User; }
  const std::string& message() const { return message_; }

  // Adds what the caller was doing ("while loading plugin 'ptx'"); outermost last.
  Error&& with_context(std::string context) && {
    context_.push_back(std::move(context));
    return std::move(*this);
  }
  const std::vector<std::string>& context() const { return context_; }

  // "error: <message>" for user errors, "internal error: <message>" otherwise, followed by
  // the context, outermost first.
  std::string to_string() const;

 private:
  Error(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {}

  ErrorKind kind_;
  std::string message_;
  std::vector<std::string> context_;
};

}  // namespace kiln
