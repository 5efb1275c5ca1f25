#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/config/config_loader.h"
#include "tests/unit/test_paths.h"

namespace kiln {
namespace {

using test::data_dir;

using ::testing::HasSubstr;

Environment home_env() {
  Environment env;
  env.home = "/home/tester";
  return env;
}

Result<Options> parse(const std::string& yaml, const Environment& env = home_env()) {
  return parse_options(yaml, "test.yaml", "/etc/kiln", env);
}

std::string error_of(const std::string& yaml) {
  auto options = parse(yaml);
  EXPECT_FALSE(options) << "expected an error for:\n" << yaml;
  if (options) return {};
  EXPECT_TRUE(options.error().is_user());
  return options.error().to_string();
}

TEST(Config, ReadsEveryKey) {
  auto options = parse(R"(
plugins:
  - name: cpp_openmp
    options: { compiler: g++, flags: [-O3, -fopenmp], threads: 4 }
  - name: ptx
    path: plugins/kiln_ptx.so
devices: [cuda:0, cpu:0]
selection: ptx
placement: order
autotune: { kernels: exhaustive, warmup: 1, reps: 5 }
cache: { dir: ~/kc, max_size_mb: 10, enabled: false }
schedule: { fusion: false, max_readers: 2, max_inline_ops: 9, deterministic: true,
            conv_tf32: true, matmul_tf32: true }
run: { asynchronous: true, cuda_graphs: true, huge_pages: false }
log: { level: warn, components: { sched: debug } }
debug_dir: dumps
plugin_path: [/opt/kiln/plugins, extra]
)");
  ASSERT_TRUE(options) << options.error().to_string();
  ASSERT_EQ(options->plugins.size(), 2u);
  const PluginConfig& cpu = options->plugins[0];
  EXPECT_EQ(cpu.name, "cpp_openmp");
  EXPECT_TRUE(cpu.path.empty());
  ASSERT_EQ(cpu.options.size(), 3u);
  EXPECT_EQ(cpu.options[0], (PluginOption{"compiler", {"g++"}, false}));
  EXPECT_EQ(cpu.options[1], (PluginOption{"flags", {"-O3", "-fopenmp"}, true}));
  EXPECT_EQ(cpu.options[2], (PluginOption{"threads", {"4"}, false}));
  EXPECT_EQ(options->plugins[1].path, "/etc/kiln/plugins/kiln_ptx.so");
  EXPECT_EQ(options->devices, (std::vector<DeviceRef>{{"cuda", 0}, {"cpu", 0}}));
  EXPECT_EQ(options->selection, (Selection{SelectionMode::Plugin, "ptx"}));
  EXPECT_EQ(options->placement, PlacementPolicy::Order);
  EXPECT_EQ(options->autotune, (AutotuneOptions{KernelTuning::Exhaustive, 1, 5}));
  EXPECT_EQ(options->cache, (CacheOptions{false, "/home/tester/kc", 10}));
  ScheduleOptions schedule{false, 2, 9};
  schedule.deterministic = true;
  schedule.conv_tf32 = schedule.matmul_tf32 = true;
  EXPECT_EQ(options->schedule, schedule);
  EXPECT_TRUE(options->run.asynchronous);
  EXPECT_TRUE(options->run.cuda_graphs);
  EXPECT_FALSE(options->run.huge_pages);
  EXPECT_EQ(options->log.default_level, LogLevel::Warn);
  EXPECT_EQ(options->log.for_component("sched"), LogLevel::Debug);
  EXPECT_EQ(options->debug_dir, "/etc/kiln/dumps");
  EXPECT_EQ(options->plugin_path,
            (std::vector<std::string>{"/opt/kiln/plugins", "/etc/kiln/extra"}));
}

TEST(Config, EmptyFileMeansDefaults) {
  auto options = parse("");
  ASSERT_TRUE(options);
  EXPECT_TRUE(options->plugins.empty());
  EXPECT_EQ(options->cache.dir, "/home/tester/.cache/kiln");
  EXPECT_EQ(options->selection.mode, SelectionMode::Autotune);
  EXPECT_EQ(options->placement, PlacementPolicy::Cost);
  EXPECT_FALSE(options->run.asynchronous) << "runs wait unless the config says otherwise";
  EXPECT_FALSE(options->run.cuda_graphs) << "plans are replayed only when asked for";
  EXPECT_TRUE(options->run.huge_pages) << "fresh host outputs ask for huge pages by default";
}

TEST(Config, UnknownTopLevelKeyNamesLineColumnAndKey) {
  EXPECT_THAT(error_of("devices: [cpu:0]\nplugin: []\n"),
              HasSubstr("test.yaml:2:1: unknown key 'plugin' (expected one of:"));
}

TEST(Config, UnknownNestedKey) {
  EXPECT_THAT(error_of("plugins:\n  - name: ptx\n    option: {}\n"),
              HasSubstr("test.yaml:3:5: unknown key 'plugins[0].option'"));
  EXPECT_THAT(error_of("cache:\n  size: 3\n"),
              HasSubstr("test.yaml:2:3: unknown key 'cache.size'"));
}

TEST(Config, WrongTypes) {
  EXPECT_THAT(error_of("autotune: { reps: many }\n"),
              HasSubstr("test.yaml:1:19: 'autotune.reps' must be an integer"));
  EXPECT_THAT(error_of("plugins: cpp_openmp\n"),
              HasSubstr("test.yaml:1:10: 'plugins' must be a list"));
  EXPECT_THAT(error_of("schedule: { fusion: 2 }\n"),
              HasSubstr("test.yaml:1:21: 'schedule.fusion' must be true or false"));
  EXPECT_THAT(error_of("schedule: { fuse: true }\n"), HasSubstr("unknown key 'schedule.fuse'"));
  EXPECT_THAT(error_of("run: { asynchronous: 1 }\n"),
              HasSubstr("test.yaml:1:22: 'run.asynchronous' must be true or false"));
  EXPECT_THAT(error_of("run: { async: true }\n"), HasSubstr("unknown key 'run.async'"));
  EXPECT_THAT(error_of("run: { cuda_graphs: yes please }\n"),
              HasSubstr("'run.cuda_graphs' must be true or false"));
  EXPECT_THAT(error_of("run: { huge_pages: 2 }\n"),
              HasSubstr("'run.huge_pages' must be true or false"));
  EXPECT_THAT(error_of("cache: { enabled: maybe }\n"),
              HasSubstr("test.yaml:1:19: 'cache.enabled' must be true or false"));
  EXPECT_THAT(error_of("devices: [gpu]\n"),
              HasSubstr("test.yaml:1:11: 'devices[0]' must look like kind:index"));
  EXPECT_THAT(error_of("autotune: { reps: 0 }\n"), HasSubstr("'autotune.reps' must be at least 1"));
  EXPECT_THAT(error_of("log: { level: loud }\n"),
              HasSubstr("test.yaml:1:15: 'log.level': unknown log level 'loud'"));
  EXPECT_THAT(error_of("plugins:\n  - path: x.so\n"),
              HasSubstr("test.yaml:2:5: 'plugins[0]' needs a 'name'"));
}

TEST(Config, SemanticErrors) {
  EXPECT_THAT(error_of("plugins: [{name: a}, {name: a}]\n"),
              HasSubstr("plugin 'a' is listed twice"));
  EXPECT_THAT(error_of("plugins: [{name: a}]\nselection: b\n"),
              HasSubstr("test.yaml:2:12: 'selection' names plugin 'b', which is not in 'plugins'"));
  EXPECT_THAT(error_of("placement: fastest\n"),
              HasSubstr("test.yaml:1:12: 'placement' must be cost or order; got 'fastest'"));
  EXPECT_THAT(error_of("log: {level: info, level: warn}\n"),
              HasSubstr("duplicate key 'log.level'"));
}

// The split of reductions over few rows: the device's threshold by default, a number, or off.
TEST(Config, SplitRowsBelowIsAutoOrARowCount) {
  auto defaults = parse("");
  ASSERT_TRUE(defaults) << defaults.error().to_string();
  EXPECT_EQ(defaults->schedule.split_rows_below, -1);
  for (const auto& [text, rows] :
       std::vector<std::pair<std::string, int64_t>>{{"auto", -1}, {"0", 0}, {"4096", 4096}}) {
    auto options = parse("schedule: { split_rows_below: " + text + " }\n");
    ASSERT_TRUE(options) << options.error().to_string();
    EXPECT_EQ(options->schedule.split_rows_below, rows) << text;
  }
  for (const char* bad : {"-1", "many", "[1]"}) {
    EXPECT_THAT(error_of(std::string("schedule: { split_rows_below: ") + bad + " }\n"),
                HasSubstr("test.yaml:1:31: 'schedule.split_rows_below' must be auto or an "
                          "integer >= 0"))
        << bad;
  }
}

TEST(Config, MalformedYamlNamesLineColumn) {
  EXPECT_THAT(error_of("plugins:\n  - name: [unclosed\n"),
              HasSubstr("test.yaml:3:1: malformed YAML"));
  EXPECT_THAT(error_of("a: b: c\n"), HasSubstr("test.yaml:1:5: malformed YAML"));
}

TEST(Config, EnvironmentOverridesTheFile) {
  Environment env = home_env();
  env.cache_dir = "/tmp/env-cache";
  env.debug_dir = "/tmp/env-debug";
  env.log = "error,sched=trace";
  env.plugin_path = "/env/a::/env/b";
  auto options =
      parse("cache: {dir: /file/cache}\nlog: {level: debug}\nplugin_path: [/file/p]\n", env);
  ASSERT_TRUE(options) << options.error().to_string();
  EXPECT_EQ(options->cache.dir, "/tmp/env-cache");
  EXPECT_EQ(options->debug_dir, "/tmp/env-debug");
  EXPECT_EQ(options->log.default_level, LogLevel::Error);
  EXPECT_EQ(options->log.for_component("sched"), LogLevel::Trace);
  EXPECT_EQ(options->plugin_path, (std::vector<std::string>{"/env/a", "/env/b", "/file/p"}));
}

TEST(Config, BadEnvironmentValueIsNamed) {
  Environment env = home_env();
  env.log = "chatty";
  auto options = parse("", env);
  ASSERT_FALSE(options);
  EXPECT_THAT(options.error().to_string(), HasSubstr("in KILN_LOG"));
}

TEST(Config, XdgCacheHomeIsTheDefaultCacheRoot) {
  Environment env = home_env();
  env.xdg_cache_home = "/xdg";
  auto options = parse("", env);
  ASSERT_TRUE(options);
  EXPECT_EQ(options->cache.dir, "/xdg/kiln");
}

TEST(Config, KilnConfigNamesTheFileAndExplicitFileWins) {
  Environment env = home_env();
  env.config = data_dir() + "/configs/nvidia.yaml";
  auto from_env = load_options(std::nullopt, env);
  ASSERT_TRUE(from_env) << from_env.error().to_string();
  EXPECT_EQ(from_env->plugins.front().name, "ptx");
  auto explicit_file = load_options(data_dir() + "/configs/amd.yaml", env);
  ASSERT_TRUE(explicit_file) << explicit_file.error().to_string();
  EXPECT_EQ(explicit_file->plugins.front().name, "amdgpu");
}

TEST(Config, MissingFileIsAUserError) {
  auto options = load_options(std::string("/nonexistent/kiln.yaml"), home_env());
  ASSERT_FALSE(options);
  EXPECT_TRUE(options.error().is_user());
  EXPECT_THAT(options.error().to_string(),
              HasSubstr("cannot read config file '/nonexistent/kiln.yaml'"));
}

TEST(Config, BuiltInDefaultIsConfigsDefaultYaml) {
  std::ifstream in(data_dir() + "/configs/default.yaml");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(builtin_default_config(), text.str());
  auto options = load_options(std::nullopt, home_env());
  ASSERT_TRUE(options) << options.error().to_string();
  EXPECT_EQ(options->source, "<built-in default>");
  ASSERT_EQ(options->plugins.size(), 1u);
  EXPECT_EQ(options->plugins[0].name, "cpp_openmp");
  EXPECT_EQ(options->devices, (std::vector<DeviceRef>{{"cpu", 0}}));
}

TEST(Config, EveryShippedConfigLoads) {
  for (const char* name : {"default", "nvidia", "amd", "multi-device"}) {
    auto options = load_options(data_dir() + "/configs/" + name + ".yaml", home_env());
    EXPECT_TRUE(options) << name << ": " << options.error().to_string();
  }
}

}  // namespace
}  // namespace kiln
