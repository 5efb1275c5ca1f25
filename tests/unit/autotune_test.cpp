// Autotuning: per kernel over a plugin's tuning space, and across plugins. The timing test
// plugin's launches sleep a known time per config, so the right answers are known.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <filesystem>
#include <sstream>

#include "core/graph/builder.h"
#include "core/interp/oracle.h"
#include "core/interp/random_tensor.h"
#include "core/ops/op_registry.h"
#include "core/runtime/compile.h"
#include "core/runtime/plugin_loader.h"
#include "core/tune/kernel_tuner.h"
#include "core/tune/tuning_inputs.h"
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

  // The sine kernel tuned on a timing plugin whose tuning space is `space` (';'-separated
  // lines), with `o` (exhaustive, one warm-up, `reps` timed launches): the winner.
  std::string winner_over(const std::string& space, int64_t reps, int64_t budget_ms = 3000) {
    PluginConfig config = timing_plugin("timing_test", 2000);
    config.options.push_back({"space", {space}, false});
    auto plugin = load_plugin(config, kTimingPlugin, logging_);
    EXPECT_TRUE(plugin) << plugin.error().to_string();
    if (!plugin) return "";
    AutotuneOptions o;
    o.kernels = KernelTuning::Exhaustive;
    o.warmup = 1;
    o.reps = reps;
    o.budget_ms = budget_ms;
    auto configs = tune_kernels(*plugin, 0, {kernel()}, o, cache(), logging_);
    EXPECT_TRUE(configs) << configs.error().to_string();
    return configs ? configs->at(0) : "";
  }

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

TEST_F(AutotuneTest, ACandidateThatComputesSomethingElseIsNeverTheWinner) {
  EXPECT_EQ(
      winner_over("delay_us=2000;delay_us=500;delay_us=50 wrong=1;delay_us=60 wrong=1 exact=0", 5),
      "delay_us=500");
  EXPECT_THAT(logged_.str(), HasSubstr("wrong  delay_us=50 wrong=1  (out0 differs from the "
                                       "default config's bits)"));
  EXPECT_THAT(logged_.str(), HasSubstr("wrong  delay_us=60 wrong=1  (out0[0] is"));
}

TEST_F(AutotuneTest, ACandidateWithinNoiseOfTheDefaultDoesNotReplaceIt) {
  // 1% faster on paper: closer than the 3% a winner must gain.
  EXPECT_EQ(winner_over("delay_us=4000;delay_us=3960", 9), "delay_us=4000");
}

TEST_F(AutotuneTest, CandidatesPastTheBudgetAreNotTimed) {
  // The default takes ~70 ms (a check and 6 timed launches of 10 ms), the next ~63 ms more:
  // a budget of 100 ms ends after it.
  EXPECT_EQ(
      winner_over("delay_us=10000;delay_us=9000;delay_us=1000;delay_us=500;delay_us=100", 5, 100),
      "delay_us=9000");
  EXPECT_THAT(logged_.str(), HasSubstr("(2 timed)"));
  EXPECT_THAT(logged_.str(), HasSubstr("3 more configs past the budget of 100 ms"));
}

TEST_F(AutotuneTest, GatherPositionsSpreadOverTheirWholeRange) {
  const auto parsed = kir::parse(
      "kir/1\nkernel k0_gather pointwise\n  buffer in0 f32 1000 in\n  buffer in1 i64 4096 in\n"
      "  buffer in2 i32 64 in\n  buffer out0 f32 4096 out\n  ranges 4096\n"
      "  %0 = load i64 in1[x0]\n  %1 = check_index i64 %0 1000\n  %2 = load f32 in0[t1]\n"
      "  %3 = load i32 in2[x0 mod 64]\n  %4 = cast f32 %3\n  %5 = add f32 %2, %4\n"
      "  store out0[x0] %5\nend\n");
  ASSERT_EQ(parsed.error, "");
  const kir::Kernel& k = parsed.kernels.at(0);
  EXPECT_EQ(index_bounds(k), (std::vector<int64_t>{0, 1000, 0, 0}));
  const std::vector<HostTensor> inputs = tuning_inputs(k, 11);
  ASSERT_EQ(inputs.size(), 4u);
  int64_t lo = 1 << 30, hi = -1;
  for (int64_t i = 0; i < inputs[1].numel(); ++i) {
    lo = std::min(lo, inputs[1].get_int(i));
    hi = std::max(hi, inputs[1].get_int(i));
  }
  EXPECT_GE(lo, 0);
  EXPECT_LT(hi, 1000);
  EXPECT_GT(hi - lo, 900);  // spread, not all one row
  for (int64_t i = 0; i < inputs[2].numel(); ++i) {
    EXPECT_GE(inputs[2].get_int(i), 1);  // no zero divisors
    EXPECT_LE(inputs[2].get_int(i), 64);
  }
  EXPECT_EQ(inputs[3].numel(), 0);  // outputs are not uploaded
}

TEST_F(AutotuneTest, CpuExhaustiveTuningKeepsTheResults) {
  auto registry = OpRegistry::create();
  ASSERT_TRUE(registry);
  GraphBuilder b(*registry, "tuned_on_the_cpu");
  const ValueRef x = b.input("x", TensorType::contiguous(DType::F32, {67, 301}));
  const ValueRef y = b.input("y", TensorType::contiguous(DType::F32, {301, 67}));
  const ValueRef w = b.input("w", TensorType::contiguous(DType::F32, {301, 67}));
  const ValueRef yt = b.op("aten.permute.default", {y, std::vector<int64_t>{1, 0}});
  const ValueRef sum = b.op("aten.add.Tensor", {x, yt});
  b.output(b.op("aten.sin.default", {sum}));
  b.output(b.op("aten.sum.dim_IntList", {w, std::vector<int64_t>{0}, false}));
  auto g = b.finish();
  ASSERT_TRUE(g) << g.error().to_string();
  Options o = options({{"cpp_openmp", "", {}}}, {{"cpu", 0}});
  o.autotune.kernels = KernelTuning::Exhaustive;
  o.autotune.libraries = false;
  auto compiled = compile(*g, *registry, o, logging_);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  EXPECT_THAT(logged_.str(), HasSubstr("tuned k1_sin"));
  EXPECT_THAT(logged_.str(), HasSubstr("tuned k2_sum"));
  EXPECT_THAT(logged_.str(), HasSubstr("tile=16x64"));
  EXPECT_THAT(logged_.str(), HasSubstr("column_block=8"));
  EXPECT_THAT(logged_.str(), ::testing::Not(HasSubstr("wrong ")));
  const std::vector<HostTensor> inputs = {
      random_tensor(TensorType::contiguous(DType::F32, {67, 301}), 5),
      random_tensor(TensorType::contiguous(DType::F32, {301, 67}), 6),
      random_tensor(TensorType::contiguous(DType::F32, {301, 67}), 7)};
  auto outputs = compiled->run(inputs);
  ASSERT_TRUE(outputs) << outputs.error().to_string();
  auto expected = run_oracle(*g, inputs);
  ASSERT_TRUE(expected) << expected.error().to_string();
  ASSERT_EQ(outputs->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const Comparison c = expected->compare(i, outputs->at(i));
    EXPECT_TRUE(c.ok()) << "output " << i << ": max abs " << c.max_abs;
  }
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
