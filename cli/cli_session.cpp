#include "cli/cli_session.h"

#include <unistd.h>

#include <iostream>

#include "core/config/config_loader.h"
#include "core/config/environment.h"
#include "core/support/progress_line.h"

namespace kiln::cli {

Result<Session> open_session(const std::optional<std::string>& config_file) {
  auto options = load_options(config_file, Environment::from_process());
  if (!options) return std::move(options).error();
  auto logging = std::make_unique<Logging>(options->log);
  // A long compile shows how far it is on stderr (a bar on a terminal, lines in a log).
  auto progress = std::make_shared<CompileProgress>(stderr, isatty(STDERR_FILENO) == 1);
  logging->set_progress([progress](std::string_view stage, size_t done, size_t total) {
    progress->report(stage, done, total);
  });
  return Session{std::move(*options), std::move(logging)};
}

int report(const Error& error) {
  std::cerr << "kiln: " << error.to_string() << "\n";
  return error.is_user() ? kExitUserError : kExitInternalError;
}

}  // namespace kiln::cli
