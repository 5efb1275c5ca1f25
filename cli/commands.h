// The kiln subcommands. Each registers its options on the CLI11 app and runs when chosen.
#pragma once

#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace kiln::cli {

struct CommonFlags {
  std::optional<std::string> config;
};

// `kiln plugins`: each configured plugin, its status, and its devices with properties.
void add_plugins_command(CLI::App& app, const CommonFlags& flags, int& exit_code);

// `kiln check GRAPH` and `kiln run GRAPH`.
void add_graph_commands(CLI::App& app, const CommonFlags& flags, int& exit_code);

// `kiln cache stats|verify|clear`: the on-disk cache the config names.
void add_cache_command(CLI::App& app, const CommonFlags& flags, int& exit_code);

// `kiln smoke`: a memory round trip through every device of every loaded plugin.
void add_smoke_command(CLI::App& app, const CommonFlags& flags, int& exit_code);

// `kiln ops`
void add_ops_command(CLI::App& app, const CommonFlags& flags, int& exit_code);

// `kiln bench SUITE.yaml` and `kiln bench merge`: suites of graphs x targets, timed.
void add_bench_command(CLI::App& app, const CommonFlags& flags, int& exit_code);

}  // namespace kiln::cli
