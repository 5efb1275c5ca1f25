// Progress of long runs: the bar's text, a compile's progress on a terminal (a bar redrawn in
// place, cleared at the end) and in a log (plain lines, only for a long compile), and the
// compile pipeline telling Logging each compile unit done.
#include "core/support/progress_line.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>

#include <cstdio>
#include <mutex>

#include "core/graph/graph_json.h"
#include "core/ops/op_registry.h"
#include "core/runtime/compile.h"
#include "core/runtime/plugin_loader.h"
#include "tests/unit/test_paths.h"

namespace kiln {
namespace {

// What was written to `f`.
std::string written(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  return text;
}

TEST(ProgressLine, BarShowsTheFractionDone) {
  EXPECT_EQ(progress_bar(6, 24, "softmax on cpu"),
            "[######..................] 6/24 softmax on cpu");
  EXPECT_EQ(progress_bar(0, 0, "x"), "[........................] 0/0 x");
  EXPECT_EQ(progress_bar(3, 2, "").substr(0, 26), "[########################]");
  EXPECT_EQ(progress_bar(1, 2, std::string(200, 'a')).size(), 100u);
}

TEST(ProgressLine, LogGetsPlainLinesOnlyForALongCompile) {
  std::FILE* quick = std::tmpfile();
  CompileProgress short_compile(quick, false, 1.0, 1e9);
  for (size_t done = 1; done <= 3; ++done) short_compile.report("compiling", done, 3);
  EXPECT_EQ(written(quick), "");
  std::fclose(quick);

  std::FILE* slow = std::tmpfile();
  CompileProgress long_compile(slow, false, 1.0, 0.0);
  for (size_t done = 1; done <= 2; ++done) long_compile.report("compiling", done, 2);
  const std::string text = written(slow);
  EXPECT_NE(text.find("kiln: compiling: 1 of 2 done ("), std::string::npos) << text;
  EXPECT_NE(text.find("kiln: compiling: 2 of 2 done ("), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  std::fclose(slow);
}

TEST(ProgressLine, TerminalGetsOneBarClearedAtTheEnd) {
  std::FILE* tty = std::tmpfile();
  CompileProgress bar(tty, true, 0.0, 0.0);
  bar.report("compiling", 1, 4);
  bar.report("compiling", 2, 4);
  bar.report("compiling", 4, 4);
  const std::string text = written(tty);
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  EXPECT_NE(text.find("\r[######..................] 1/4 compiling"), std::string::npos) << text;
  EXPECT_NE(text.find("\r[############............] 2/4 compiling"), std::string::npos) << text;
  // Cleared: blanks over the bar, the cursor back at the line's start.
  const std::string blank = "\r" + std::string(progress_bar(2, 4, "compiling").size(), ' ') + "\r";
  EXPECT_EQ(text.substr(text.size() - blank.size()), blank) << text;
  std::fclose(tty);
}

TEST(ProgressLine, CompileReportsEachUnitDone) {
  auto registry = OpRegistry::create();
  ASSERT_TRUE(registry);
  auto graph = parse_graph(R"({"format": "kiln.graph/1", "name": "two_kernels",
      "inputs": [{"name": "x", "dtype": "f32", "shape": [7, 33]}],
      "nodes": [{"name": "s", "op": "aten.sum.dim_IntList", "args": ["%x", [0], false]},
                {"name": "t", "op": "aten.cumsum.default", "args": ["%x", 1]}],
      "outputs": ["%s", "%t"]})",
                           "progress", *registry);
  ASSERT_TRUE(graph) << graph.error().to_string();
  Logging logging(LogLevels{}, std::make_shared<spdlog::sinks::null_sink_mt>());
  std::mutex mutex;
  std::vector<std::pair<size_t, size_t>> reports;
  logging.set_progress([&](std::string_view stage, size_t done, size_t total) {
    std::lock_guard lock(mutex);
    EXPECT_EQ(stage, "compiling");
    reports.emplace_back(done, total);
  });
  auto plugin = load_plugin(PluginConfig{"kir_interpreter", "", {}},
                            test::plugin_dir() + "/kiln_kir_interpreter.so", logging);
  ASSERT_TRUE(plugin) << plugin.error().to_string();
  const DiskCache no_cache("", 0, logging.get("cache"));
  auto compiled = compile_for_device(*graph, *registry, *plugin, 0, no_cache, logging);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  ASSERT_FALSE(reports.empty());
  const size_t total = reports.front().second;
  ASSERT_EQ(reports.size(), total);
  for (size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].first, i + 1);  // each unit once, counted up to the total
    EXPECT_EQ(reports[i].second, total);
  }
}

}  // namespace
}  // namespace kiln
