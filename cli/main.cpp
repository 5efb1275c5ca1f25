// The kiln command line.
#include <kiln/plugin.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/cli_session.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kiln: a tensor compiler and runtime with backend plugins"};
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION + " (plugin ABI " +
                                        std::to_string(KILN_ABI_MAJOR) + "." +
                                        std::to_string(KILN_ABI_MINOR) + ")");
  app.require_subcommand(1);
  app.fallthrough();  // --config may come after the subcommand
  kiln::cli::CommonFlags flags;
  app.add_option("--config", flags.config,
                 "YAML config (default: $KILN_CONFIG, else the built-in configs/default.yaml)");
  int exit_code = kiln::cli::kExitOk;
  kiln::cli::add_plugins_command(app, flags, exit_code);
  kiln::cli::add_smoke_command(app, flags, exit_code);
  kiln::cli::add_ops_command(app, flags, exit_code);
  kiln::cli::add_cache_command(app, flags, exit_code);
  kiln::cli::add_graph_commands(app, flags, exit_code);
  kiln::cli::add_bench_command(app, flags, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::bad_alloc&) {
    std::cerr << "kiln: error: out of memory\n";
    return kiln::cli::kExitUserError;
  } catch (const std::exception& e) {
    // Modules return errors as values; anything thrown this far is a bug, reported, not a crash.
    std::cerr << "kiln: internal error: " << e.what() << "\n";
    return kiln::cli::kExitInternalError;
  }
  return exit_code;
}
