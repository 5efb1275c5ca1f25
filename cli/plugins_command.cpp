#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <map>

#include "cli/cli_session.h"
#include "cli/commands.h"
#include "core/runtime/plugin_loader.h"

namespace kiln::cli {
namespace {

void print_plugin(const Plugin& plugin) {
  const auto& a = plugin.attributes();
  fmt::print("plugin {}: ok\n", plugin.name());
  fmt::print("  version   {} ({})\n", a.version, a.vendor);
  fmt::print("  path      {}\n", plugin.path());
  fmt::print("  abi       {} (negotiated {})\n", plugin.plugin_abi().to_string(),
             plugin.negotiated_abi().to_string());
  fmt::print("  kir       {}\n", a.kir_versions);
  fmt::print("  artifact  {}\n", a.artifact_format);
  fmt::print("  devices   {}\n", plugin.devices().size());
  for (const auto& device : plugin.devices()) {
    fmt::print("  device {}:{}  {}\n", device.kind, device.index, device.name);
    for (const auto& property : device.properties) {
      fmt::print("    {:<18} {}\n", property.key, property.value_text());
    }
    // ABI 1.2's to 1.4's capability flags, by name (none: work in one order, plain copies).
    std::string capabilities;
    for (const auto& [flag, name] :
         {std::pair{KILN_CAPABILITY_STREAMS, "streams"},
          std::pair{KILN_CAPABILITY_ASYNC_COPY, "async-copies"},
          std::pair{KILN_CAPABILITY_PINNED_HOST, "page-locked-host-memory"},
          std::pair{KILN_CAPABILITY_IMPORT_POSIX_FD, "imports-posix-fd"},
          std::pair{KILN_CAPABILITY_IMPORT_CUDA_IPC, "imports-cuda-ipc"},
          std::pair{KILN_CAPABILITY_CAPTURE, "capture"}})
      if (device.capabilities & flag)
        capabilities += (capabilities.empty() ? "" : ",") + std::string(name);
    fmt::print("    {:<18} {}\n", "capabilities", capabilities.empty() ? "none" : capabilities);
  }
}

int run(const CommonFlags& flags) {
  auto session = open_session(flags.config);
  if (!session) return report(session.error());
  fmt::print("config {}\n", session->options.source);
  const LoadedPlugins loaded = load_plugins(session->options, *session->logging);
  // Print in config order, loaded or not.
  for (const auto& config : session->options.plugins) {
    for (const auto& plugin : loaded.plugins) {
      if (plugin->name() == config.name) print_plugin(*plugin);
    }
    for (const auto& failure : loaded.failures) {
      if (failure.name != config.name) continue;
      fmt::print("plugin {}: not loaded\n", failure.name);
      if (!failure.path.empty()) fmt::print("  path      {}\n", failure.path);
      fmt::print("  {}\n", failure.error.to_string());
    }
  }
  fmt::print("{} of {} plugins loaded\n", loaded.plugins.size(), session->options.plugins.size());
  return kExitOk;
}

}  // namespace

void add_plugins_command(CLI::App& app, const CommonFlags& flags, int& exit_code) {
  CLI::App* command =
      app.add_subcommand("plugins", "List the configured plugins and their devices");
  command->callback([&flags, &exit_code] { exit_code = run(flags); });
}

}  // namespace kiln::cli
