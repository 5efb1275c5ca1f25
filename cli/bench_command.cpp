// `kiln bench SUITE.yaml [--out DIR] [--shard K/N]` and `kiln bench merge FILE.json...`:
// a suite's matrix of graphs x targets, each cell checked and timed, written as CSV and JSON
// (bench/suite); shards of the matrix run apart and merged (docs/bench.md).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "bench/suite/bench_graphs.h"
#include "bench/suite/html_report.h"
#include "bench/suite/progress.h"
#include "bench/suite/reference_cell.h"
#include "bench/suite/results.h"
#include "bench/suite/run_cell.h"
#include "bench/suite/shard.h"
#include "cli/cli_session.h"
#include "cli/commands.h"
#include "core/config/config_loader.h"
#include "core/ops/op_registry.h"

namespace kiln::cli {
namespace {

using bench::Results;

struct BenchFlags {
  std::string suite;
  std::string out;
  std::string shard;
  std::vector<std::string> merge_inputs;
  std::string merge_out = "kiln-bench-merged";
  bool partial = false;
  bool html = true;
};

std::string machine_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string cpu;
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    cpu = line.substr(line.find(':') + 2);
    break;
  }
  return std::string(host) + (cpu.empty() ? "" : " (" + cpu + ")");
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

Result<Options> target_options(const bench::SuiteTarget& t, const Environment& env) {
  if (!t.config_file.empty()) return load_options(t.config_file, env);
  if (!t.config_text.empty())
    return parse_options(t.config_text, "suite target '" + t.name + "'", "", env);
  return parse_options(builtin_default_config(), "<built-in default>", "", env);
}

Status write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) return Error::user("cannot write " + path.string());
  return Ok{};
}

// results.json and .csv under `dir`, and (with `html`) report.html drawn from the JSON.
Status write_results(const Results& r, const std::filesystem::path& dir, const std::string& stem,
                     bool html) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error::user("cannot make " + dir.string() + ": " + ec.message());
  if (auto s = write_file(dir / (stem + ".json"), bench::to_json(r)); !s) return s;
  if (auto s = write_file(dir / (stem + ".csv"), bench::to_csv(r)); !s) return s;
  fmt::print("kiln bench: wrote {} and {}\n", (dir / (stem + ".json")).string(),
             (dir / (stem + ".csv")).string());
  if (!html) return Ok{};
  const std::string page = stem == "results" ? "report" : "report" + stem.substr(7);
  const std::string why = bench::write_html_report(dir / (stem + ".json"), dir / (page + ".html"),
                                                   dir / (page + ".log"));
  if (why.empty()) {
    std::filesystem::remove(dir / (page + ".log"), ec);
  } else {
    fmt::print(stderr, "kiln bench: no HTML report: {}\n", why);
  }
  return Ok{};
}

std::string summary(const bench::ResultRow& r) {
  if (!r.error.empty()) return fmt::format("{} on {}: error: {}", r.graph, r.target, r.error);
  if (!r.skipped.empty()) return fmt::format("{} on {}: skipped: {}", r.graph, r.target, r.skipped);
  const std::string fraction =
      r.device_gbps > 0 ? fmt::format(" ({:.0f}% of the device's)", 100 * r.bandwidth_fraction)
                        : "";
  return fmt::format("{} on {} ({}): {:.4g} ms, {:.3g} GB/s{}, check {}", r.graph, r.target,
                     r.device, r.median_ms, r.gbps, fraction, r.check);
}

int run_suite(const BenchFlags& flags) {
  auto suite = bench::load_suite(flags.suite);
  if (!suite) return report(suite.error());
  bench::Shard shard;
  if (!flags.shard.empty()) {
    auto s = bench::parse_shard(flags.shard);
    if (!s) return report(s.error());
    shard = *s;
  }
  auto registry = OpRegistry::create();
  if (!registry) return report(registry.error());
  const std::filesystem::path out = flags.out.empty() ? "kiln-bench-" + suite->name : flags.out;
  const std::string stem = flags.shard.empty()
                               ? "results"
                               : fmt::format("results.shard-{}-of-{}", shard.index, shard.count);
  // Shards may share `out` (a fleet's shared directory): each its own scratch.
  const std::filesystem::path scratch = out / (".scratch-" + stem);
  auto graphs = bench::load_suite_graphs(*suite, *registry, scratch / "models");
  if (!graphs) {
    std::error_code ignored;
    std::filesystem::remove_all(scratch, ignored);
    return report(graphs.error());
  }
  const Environment env = Environment::from_process();
  std::vector<bench::CellTarget> targets;
  for (const bench::SuiteTarget& t : suite->targets) {
    if (!t.torch.empty()) {  // a PyTorch reference: no kiln config
      targets.push_back({&t, Options{}});
      continue;
    }
    auto options = target_options(t, env);
    if (!options)
      return report(std::move(options).error().with_context("suite target '" + t.name + "'"));
    targets.push_back({&t, std::move(*options)});
  }
  // Warnings and errors only, since each cell's line says what it did; KILN_LOG sets levels
  // as for every command.
  LogLevels warnings;
  warnings.default_level = LogLevel::Warn;
  const auto kiln_target = std::find_if(targets.begin(), targets.end(),
                                        [](const auto& t) { return t.target->torch.empty(); });
  Logging logging(env.log && kiln_target != targets.end() ? kiln_target->options.log : warnings);
  Results results;
  results.suite = suite->name;
  results.cells = static_cast<int64_t>(graphs->size() * targets.size());
  results.shard = flags.shard.empty() ? "" : shard.text();
  results.machine = machine_name();
  results.date = utc_now();
  int64_t mine = 0;
  for (int64_t c = 0; c < results.cells; ++c) mine += shard.contains(c);
  bench::Progress progress(static_cast<size_t>(mine), stderr);
  size_t done = 0;
  std::string cell_name;
  // A cell's long compile shows on the bar: "graph on target: compiling 3/10".
  std::mutex drawing;
  logging.set_progress([&](std::string_view stage, size_t units, size_t total) {
    std::lock_guard lock(drawing);
    progress.starting(done, fmt::format("{}: {} {}/{}", cell_name, stage, units, total));
  });
  bool all_ok = true;
  for (size_t g = 0; g < graphs->size(); ++g) {
    bench::GraphReference reference((*graphs)[g]);
    for (size_t t = 0; t < targets.size(); ++t) {
      const auto cell = static_cast<int64_t>(g * targets.size() + t);
      if (!shard.contains(cell)) continue;
      cell_name = (*graphs)[g].name + " on " + targets[t].target->name;
      progress.starting(done, cell_name);
      bench::ResultRow row = targets[t].target->torch.empty()
                                 ? bench::run_cell(cell, (*graphs)[g], reference, targets[t],
                                                   *suite, *registry, logging, scratch)
                                 : bench::run_reference_cell(cell, (*graphs)[g], reference,
                                                             *targets[t].target, *suite, scratch);
      all_ok =
          all_ok && row.error.empty() && (row.check == "ok" || row.check.starts_with("skipped"));
      progress.finished(++done, summary(row));
      results.rows.push_back(std::move(row));
    }
  }
  progress.close();
  std::error_code ignored;
  std::filesystem::remove_all(scratch, ignored);
  if (auto s = write_results(results, out, stem, flags.html); !s) return report(s.error());
  return all_ok ? kExitOk : kExitUserError;
}

int merge(const BenchFlags& flags) {
  std::vector<Results> parts;
  for (const std::string& path : flags.merge_inputs) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return report(Error::user("kiln bench merge: cannot read " + path));
    std::stringstream text;
    text << f.rdbuf();
    auto r = bench::from_json(text.str(), path);
    if (!r) return report(r.error());
    parts.push_back(std::move(*r));
  }
  auto merged = bench::merge_results(parts, flags.partial);
  if (!merged) return report(merged.error());
  if (auto s = write_results(*merged, flags.merge_out, "results", flags.html); !s)
    return report(s.error());
  return kExitOk;
}

}  // namespace

void add_bench_command(CLI::App& app, const CommonFlags&, int& exit_code) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* command = app.add_subcommand(
      "bench", "time a suite's graphs on its targets (SUITE.yaml), or merge shards' results");
  command->add_option("suite", flags->suite, "the suite file (bench/suites/*.yaml)");
  command->add_option("--out", flags->out,
                      "directory for results.csv and results.json (default: kiln-bench-SUITE)");
  command->add_option("--shard", flags->shard,
                      "run only shard K of N of the matrix (K/N), for a fleet");
  command->add_flag("!--no-html", flags->html, "write no report.html (CSV and JSON only)");
  CLI::App* merge_command =
      command->add_subcommand("merge", "join shards' results.*.json into one result");
  merge_command->add_option("files", flags->merge_inputs, "result files of the shards")
      ->required()
      ->check(CLI::ExistingFile);
  merge_command->add_option("--out", flags->merge_out, "directory for the merged results");
  merge_command->add_flag("--partial", flags->partial, "merge even when cells are missing");
  merge_command->add_flag("!--no-html", flags->html, "write no report.html");
  command->callback([flags, merge_command, &exit_code] {
    if (merge_command->parsed()) return;
    if (flags->suite.empty()) throw CLI::RequiredError("suite (or `kiln bench merge`)");
    exit_code = run_suite(*flags);
  });
  merge_command->callback([flags, &exit_code] { exit_code = merge(*flags); });
}

}  // namespace kiln::cli
