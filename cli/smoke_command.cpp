#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/cli_session.h"
#include "cli/commands.h"
#include "core/runtime/plugin_loader.h"
#include "core/runtime/smoke_test.h"

namespace kiln::cli {
namespace {

struct SmokeFlags {
  uint64_t bytes = 1 << 20;
  uint64_t seed = 0x6b696c6e;
};

int run(const CommonFlags& flags, const SmokeFlags& smoke) {
  auto session = open_session(flags.config);
  if (!session) return report(session.error());
  const LoadedPlugins loaded = load_plugins(session->options, *session->logging);
  for (const auto& failure : loaded.failures) {
    fmt::print("plugin {}: skipped, not loaded ({})\n", failure.name, failure.error.message());
  }
  int devices = 0;
  int failed = 0;
  for (const auto& plugin : loaded.plugins) {
    for (const auto& device : plugin->devices()) {
      const SmokeReport report = smoke_test(plugin, device.index, smoke.bytes, smoke.seed);
      ++devices;
      failed += report.passed() ? 0 : 1;
      fmt::print("smoke {} {}: {}\n", report.plugin, report.device,
                 report.passed() ? "PASS" : "FAIL");
      for (const auto& step : report.steps) {
        fmt::print("  {:<4} {:<13} {}\n", step.passed ? "ok" : "FAIL", step.name, step.detail);
      }
    }
  }
  if (devices == 0) {
    fmt::print("smoke: no device to test (no plugin loaded, or none reports a device)\n");
    return kExitUserError;
  }
  fmt::print("smoke: {} of {} devices passed\n", devices - failed, devices);
  return failed == 0 ? kExitOk : kExitUserError;
}

}  // namespace

void add_smoke_command(CLI::App& app, const CommonFlags& flags, int& exit_code) {
  auto smoke = std::make_shared<SmokeFlags>();
  CLI::App* command = app.add_subcommand(
      "smoke", "Round-trip random data through every device of every loaded plugin");
  command->add_option("--bytes", smoke->bytes, "bytes per buffer")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
  command->add_option("--seed", smoke->seed, "seed of the random data");
  command->callback([&flags, &exit_code, smoke] { exit_code = run(flags, *smoke); });
}

}  // namespace kiln::cli
