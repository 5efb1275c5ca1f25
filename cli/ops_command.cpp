// `kiln ops`: how every op of the schema tables runs on each loaded plugin, and the counts.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <map>

#include "cli/cli_session.h"
#include "cli/commands.h"
#include "core/lower/op_coverage.h"
#include "core/ops/op_registry.h"
#include "core/runtime/compile.h"
#include "core/runtime/plugin_loader.h"

namespace kiln::cli {
namespace {

int run(const CommonFlags& flags) {
  auto session = open_session(flags.config);
  if (!session) return report(session.error());
  auto registry = OpRegistry::create();
  if (!registry) return report(registry.error());
  const LoadedPlugins loaded = load_plugins(session->options, *session->logging);
  if (loaded.plugins.empty()) return report(Error::user("no plugin loaded; see `kiln plugins`"));
  std::vector<std::vector<OpCoverage>> tables;
  for (const auto& plugin : loaded.plugins)
    tables.push_back(op_coverage(**registry, extern_names(*plugin)));
  std::string header = fmt::format("{:<48} {:<12} {:<6}", "op", "category", "set");
  for (const auto& plugin : loaded.plugins) header += fmt::format(" {:<12}", plugin->name());
  fmt::print("{}\n", header);
  for (size_t i = 0; i < tables[0].size(); ++i) {
    const OpCoverage& row = tables[0][i];
    std::string line =
        fmt::format("{:<48} {:<12} {:<6}", row.op, row.category, row.core_aten ? "core" : "extra");
    std::string notes;
    for (const auto& table : tables) {
      line += fmt::format(" {:<12}", support_name(table[i].support));
      if (!table[i].note.empty() && notes.find(table[i].note) == std::string::npos)
        notes += (notes.empty() ? "  # " : "; ") + table[i].note;
    }
    fmt::print("{}{}\n", line, notes);
  }
  for (size_t p = 0; p < loaded.plugins.size(); ++p)
    for (const bool core : {true, false}) {
      std::map<OpSupport, int> counts;
      int total = 0, by_nature = 0;
      for (const OpCoverage& row : tables[p])
        if (row.core_aten == core) {
          ++counts[row.support];
          ++total;
          by_nature += row.by_nature ? 1 : 0;
        }
      fmt::print(
          "{} {} ops ({}): kernel {}, library {}, decomposed {}, host {}, unsupported {} ({} by "
          "nature)\n",
          loaded.plugins[p]->name(), core ? "Core ATen" : "extra", total, counts[OpSupport::Kernel],
          counts[OpSupport::Library], counts[OpSupport::Decomposed], counts[OpSupport::Host],
          counts[OpSupport::Unsupported], by_nature);
    }
  return kExitOk;
}

}  // namespace

void add_ops_command(CLI::App& app, const CommonFlags& flags, int& exit_code) {
  CLI::App* command = app.add_subcommand(
      "ops",
      "How every ATen op runs on each loaded plugin: kernel, library, decomposed, host "
      "(the reference interpreter inside a compiled graph) or unsupported");
  command->callback([&flags, &exit_code] { exit_code = run(flags); });
}

}  // namespace kiln::cli
