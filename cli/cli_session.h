// What every command starts from: the Options (config file + environment) and the
// Logging made from them; and how an Error becomes a message and an exit code.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/config/options.h"
#include "core/support/logging.h"
#include "core/support/result.h"

namespace kiln::cli {

// Exit codes: 0 success, 1 user error (bad input, failed check), 2 internal error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitUserError = 1;
inline constexpr int kExitInternalError = 2;

struct Session {
  Options options;
  std::unique_ptr<Logging> logging;
};

Result<Session> open_session(const std::optional<std::string>& config_file);

// Prints the error to stderr and returns its exit code.
int report(const Error& error);

}  // namespace kiln::cli
