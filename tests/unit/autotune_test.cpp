// Autotuning: per kernel over a plugin's tuning space, and across plugins. The timing test
// plugin's launches sleep a known time per config, so the right answers are known.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <filesystem>
#include <sstream>

#include "core/graph/builder.h"
#include "core/ops/op_registry.h"
#include "core/runtime/compile.h"
#include "core/runtime/plugin_loader.h"
#include "core/tune/kernel_tuner.h"
#include "tests/unit/test_paths.h"

namespace kiln {
namespace {

using test::plugin_dir;
using test::test_plugin_dir;

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kTimingPlugin = test_plugin_dir() + "/kiln_timing_test.so";

PluginConfig timing_plugin(const std::string& name, int64_t delay_us) {
  return {name,
          kTimingPlugin,
          {{"name", {name}, false}, {"delay_us", {std::to_string(delay_us)}, false}}};
}

class AutotuneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kiln_autotune_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Everything logged, for the tuning tables and cache messages.
  std::ostringstream logged_;
  Logging logging_{LogLevels{}, std::make_shared<spdlog::sinks::ostream_sink_mt>(logged_)};
  fs::path dir_;

  DiskCache cache() const { return DiskCache(dir_.string(), 1 << 20, logging_.get("cache")); }

  static kir::Kernel kernel() {
    const auto parsed = kir::parse(
        "kir/1\nkernel k0_sin pointwise\n  buffer in0 f32 7 in\n  buffer out0 f32 7 out\n"
        "  ranges 7\n  %0 = load f32 in0[x0]\n  %1 = sin f32 %0\n  store out0[x0] %1\nend\n");
    EXPECT_EQ(parsed.error, "");
    return parsed.kernels.at(0);
  }

  static Graph small_graph(const std::shared_ptr<const OpRegistry>& registry) {
    GraphBuilder b(registry, "sin_of_x");
    const ValueRef x = b.input("x", TensorType::contiguous(DType::F32, {33}));
    b.output(b.op("aten.sin.default", {x}));
    auto g = b.finish();
    EXPECT_TRUE(g);
    return std::move(*g);
  }

  Options options(std::vector<PluginConfig> plugins, std::vector<DeviceRef> devices) const {
    Options o;
    o.plugins = std::move(plugins);
    o.devices = std::move(devices);
    o.selection.mode = SelectionMode::Autotune;
    o.autotune.warmup = 1;
    o.autotune.reps = 5;
    o.cache.dir = dir_.string();
    o.plugin_path = {plugin_dir()};
    return o;
  }
};

TEST_F(AutotuneTest, TheTunerPicksTheFastConfigAndCachesIt) {
  auto plugin = load_plugin(timing_plugin("timing_test", 2000), kTimingPlugin, logging_);
  ASSERT_TRUE(plugin) << plugin.error().to_string();
  AutotuneOptions o;
  o.kernels = KernelTuning::Exhaustive;
  o.warmup = 1;
  o.reps = 5;
  // The default (2000 us) is slowest; 100 us is fastest but may change numerics.
  auto configs = tune_kernels(*plugin, 0, {kernel()}, o, cache(), logging_);
  ASSERT_TRUE(configs) << configs.error().to_string();
  EXPECT_EQ(configs->at(0), "delay_us=100");
  EXPECT_THAT(logged_.str(), HasSubstr("tuned k0_sin: all of 4 configs"));
  // Deterministic: only configs that keep the default's numerics.
  o.deterministic = true;
  configs = tune_kernels(*plugin, 0, {kernel()}, o, cache(), logging_);
  ASSERT_TRUE(configs) << configs.error().to_string();
  EXPECT_EQ(configs->at(0), "delay_us=500");
  EXPECT_THAT(logged_.str(), HasSubstr("tuned k0_sin: exact of 3 configs"));
  // Asked again: the winner comes from the cache, nothing is timed.
  logged_.str("");
  configs = tune_kernels(*plugin, 0, {kernel()}, o, cache(), logging_);
  ASSERT_TRUE(configs);
  EXPECT_EQ(configs->at(0), "delay_us=500");
  EXPECT_THAT(logged_.str(), ::testing::Not(HasSubstr("tuned k0_sin")));
}

TEST_F(AutotuneTest, ExhaustiveCompileUsesTheTunedConfig) {
  auto registry = OpRegistry::create();
  ASSERT_TRUE(registry);
  Options o = options({timing_plugin("timing_test", 2000)}, {{"timing", 0}});
  o.autotune.kernels = KernelTuning::Exhaustive;
  auto compiled = compile(small_graph(*registry), *registry, o, logging_);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  EXPECT_GT(compiled->stats().tune_ms, 0);
  EXPECT_THAT(logged_.str(), HasSubstr("winner: delay_us=100"));
}

TEST_F(AutotuneTest, SelectionPicksTheFasterPluginWhateverTheOrder) {
  auto registry = OpRegistry::create();
  ASSERT_TRUE(registry);
  const Graph g = small_graph(*registry);
  for (bool quick_first : {false, true, true}) {
    std::vector<PluginConfig> plugins = {timing_plugin("slow", 5000), timing_plugin("quick", 0)};
    if (quick_first) std::swap(plugins[0], plugins[1]);
    auto compiled = compile(g, *registry, options(plugins, {{"timing", 0}}), logging_);
    ASSERT_TRUE(compiled) << compiled.error().to_string();
    EXPECT_EQ(compiled->stats().target, "quick:0");
  }
  EXPECT_THAT(logged_.str(), HasSubstr("chosen: quick timing:0"));
  // The third time (same config as the second) the choice came from the cache.
  EXPECT_THAT(logged_.str(), HasSubstr("runs on quick timing:0 (chosen earlier, from the cache)"));
}

TEST_F(AutotuneTest, SelectionAcrossDevicesPicksTheCpuOverASlowDevice) {
  auto registry = OpRegistry::create();
  ASSERT_TRUE(registry);
  Options o =
      options({timing_plugin("slow", 20000), {"cpp_openmp", "", {}}}, {{"timing", 0}, {"cpu", 0}});
  auto compiled = compile(small_graph(*registry), *registry, o, logging_);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  EXPECT_EQ(compiled->stats().target, "cpp_openmp:0");
  EXPECT_THAT(logged_.str(), HasSubstr("slow timing:0"));
  EXPECT_THAT(logged_.str(), HasSubstr("chosen: cpp_openmp cpu:0"));
  // first-available takes the first device the config names, untimed.
  o.selection.mode = SelectionMode::FirstAvailable;
  compiled = compile(small_graph(*registry), *registry, o, logging_);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  EXPECT_EQ(compiled->stats().target, "slow:0");
}

}  // namespace
}  // namespace kiln
