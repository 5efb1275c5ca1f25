#include "cli/cli_session.h"

#include <iostream>

#include "core/config/config_loader.h"
#include "core/config/environment.h"

namespace kiln::cli {

Result<Session> open_session(const std::optional<std::string>& config_file) {
  auto options = load_options(config_file, Environment::from_process());
  if (!options) return std::move(options).error();
  auto logging = std::make_unique<Logging>(options->log);
  return Session{std::move(*options), std::move(logging)};
}

int report(const Error& error) {
  std::cerr << "kiln: " << error.to_string() << "\n";
  return error.is_user() ? kExitUserError : kExitInternalError;
}

}  // namespace kiln::cli
