#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>

#include "cli/cli_session.h"
#include "cli/commands.h"
#include "core/runtime/compile.h"

namespace kiln::cli {
namespace {

int run(const CommonFlags& flags, const std::string& action, bool keep) {
  auto session = open_session(flags.config);
  if (!session) return report(session.error());
  const DiskCache cache = open_cache(session->options, *session->logging);
  if (!cache.enabled()) {
    fmt::print("cache off{}\n", cache.refused().empty() ? "" : ": " + cache.refused());
    return cache.refused().empty() ? kExitOk : kExitUserError;
  }
  fmt::print("cache {}\n", cache.dir());
  if (action == "stats") {
    const CacheStats s = cache.stats();
    fmt::print("{:<10} {:>8} {:>12}\n", "kind", "entries", "MiB");
    for (const auto& k : s.kinds)
      fmt::print("{:<10} {:>8} {:>12.2f}\n", k.name, k.entries, k.bytes / 1048576.0);
    fmt::print("{:<10} {:>8} {:>12.2f} (cap {} MiB)\n", "total", s.entries, s.bytes / 1048576.0,
               session->options.cache.max_size_mb);
    return kExitOk;
  }
  if (action == "verify") {
    const auto problems = cache.verify(!keep);
    for (const CacheProblem& p : problems)
      fmt::print("bad entry {}: {}{}\n", p.path, p.why, keep ? "" : " (removed)");
    // Kept bad entries are still on disk, so the cache's own count already holds them.
    const int64_t removed = keep ? 0 : static_cast<int64_t>(problems.size());
    fmt::print("{} bad entries of {}\n", problems.size(), cache.stats().entries + removed);
    return problems.empty() ? kExitOk : kExitUserError;
  }
  fmt::print("removed {} entries\n", cache.clear());
  return kExitOk;
}

}  // namespace

void add_cache_command(CLI::App& app, const CommonFlags& flags, int& exit_code) {
  CLI::App* command = app.add_subcommand(
      "cache", "The on-disk cache: stats, verify (checksums; bad entries removed), clear");
  struct Args {
    std::string action;
    bool keep = false;
  };
  auto args = std::make_shared<Args>();
  command->add_option("action", args->action, "stats | verify | clear")
      ->required()
      ->check(CLI::IsMember({"stats", "verify", "clear"}));
  command->add_flag("--keep", args->keep, "verify: report bad entries without removing them");
  command->callback(
      [&flags, &exit_code, args] { exit_code = run(flags, args->action, args->keep); });
}

}  // namespace kiln::cli
