// Placement across plugins: the KIR interpreter, told to decline a kind of kernel, serves the
// graph; cpp_openmp runs what it declines (by order) or what is cheaper there (by cost).
// Outputs match the reference with every buffer poisoned, on fresh and warm runs, including a
// concatenation whose two halves are written on two devices; a kernel no device takes is an
// error naming it and each plugin's reason.
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>

#include <chrono>

#include "core/graph/graph_json.h"
#include "core/interp/oracle.h"
#include "core/interp/random_tensor.h"
#include "core/ops/op_registry.h"
#include "core/runtime/compile.h"
#include "core/runtime/plugin_loader.h"
#include "tests/unit/test_paths.h"

namespace kiln {
namespace {

// A row sum and a relu concatenated (a reduction and a pointwise kernel writing parts of one
// buffer), a softmax over the result, and a scatter_add into it.
constexpr const char* kGraph = R"({"format": "kiln.graph/1", "name": "split",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [5, 37]},
             {"name": "y", "dtype": "f32", "shape": [5, 20]},
             {"name": "i", "dtype": "i64", "shape": [3, 21], "range": [0, 5]},
             {"name": "v", "dtype": "f32", "shape": [3, 21]}],
  "nodes": [{"name": "s", "op": "aten.sum.dim_IntList", "args": ["%x", [1], true]},
            {"name": "r", "op": "aten.relu.default", "args": ["%y"]},
            {"name": "c", "op": "aten.cat.default", "args": [["%s", "%r"], 1]},
            {"name": "m", "op": "aten._softmax.default", "args": ["%c", 1, false]},
            {"name": "a", "op": "aten.scatter_add.default", "args": ["%m", 0, "%i", "%v"]}],
  "outputs": ["%c", "%m", "%a"]})";

class Placement : public ::testing::TestWithParam<const char*> {
 protected:
  std::shared_ptr<const Plugin> load(const std::string& name, std::vector<PluginOption> options) {
    auto plugin = load_plugin(PluginConfig{name, "", std::move(options)},
                              test::plugin_dir() + "/kiln_" + name + ".so", logging_);
    EXPECT_TRUE(plugin) << plugin.error().to_string();
    return plugin ? *plugin : nullptr;
  }
  std::shared_ptr<const Plugin> interpreter(const std::string& declined) {
    return load("kir_interpreter", {PluginOption{"decline", {declined}, true}});
  }
  std::shared_ptr<const Plugin> cpu() {
    return load("cpp_openmp", {PluginOption{"header_cache", {test::header_cache_dir()}, false}});
  }
  Result<CompiledGraph> compile(std::shared_ptr<const Plugin> primary,
                                std::shared_ptr<const Plugin> helper, PlacementPolicy policy,
                                bool fusion) {
    ScheduleOptions schedule;
    schedule.fusion = fusion;
    return compile_for_device(graph(), registry_, std::move(primary), 0, cache_, logging_, "",
                              schedule, {}, {{std::move(helper), 0}}, policy);
  }
  // Fresh random inputs; the outputs of a poisoned run (fresh buffers on every device), then
  // of two runs on the buffers kept between runs, against the reference.
  void expect_reference_outputs(CompiledGraph& compiled) {
    const Graph g = graph();
    const auto seed =
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    std::vector<HostTensor> inputs;
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      const Value& v = g.value(g.inputs[k]);
      inputs.push_back(random_tensor(v.type, seed + k, v.random_range));
    }
    auto oracle = run_oracle(g, inputs);
    ASSERT_TRUE(oracle) << oracle.error().to_string();
    for (const bool poison : {true, false, false}) {
      RunOptions options;
      options.poison = poison;
      auto got = compiled.run(inputs, options);
      ASSERT_TRUE(got) << got.error().to_string();
      ASSERT_EQ(got->size(), oracle->expected.size());
      for (size_t o = 0; o < got->size(); ++o) {
        const Comparison c = oracle->compare(o, (*got)[o]);
        EXPECT_TRUE(c.ok()) << "output " << o << ": " << c.mismatches << " mismatches (seed "
                            << seed << ")";
      }
    }
  }
  Graph graph() {
    auto g = parse_graph(kGraph, "split", registry_);
    EXPECT_TRUE(g) << g.error().to_string();
    return g ? std::move(*g) : Graph{};
  }

  Logging logging_{LogLevels{}, std::make_shared<spdlog::sinks::null_sink_mt>()};
  std::shared_ptr<const OpRegistry> registry_ = OpRegistry::create().value();
  DiskCache cache_{"", 0, logging_.get("cache")};
};

TEST_P(Placement, SplitGraphMatchesTheReference) {
  auto primary = interpreter(GetParam());
  auto helper = cpu();
  ASSERT_TRUE(primary && helper);
  for (const bool fusion : {true, false}) {
    SCOPED_TRACE(fusion ? "fused" : "unfused");
    auto compiled = compile(primary, helper, PlacementPolicy::Order, fusion);
    ASSERT_TRUE(compiled) << compiled.error().to_string();
    const CompileStats& st = compiled->stats();
    ASSERT_FALSE(st.placed.empty());
    EXPECT_LT(st.placed.size(), st.kernels) << "every kernel left the graph's device";
    EXPECT_GT(st.transfers, 0u);
    EXPECT_NE(st.placed[0].find("on cpp_openmp:0 (kir_interpreter: "), std::string::npos)
        << st.placed[0];
    expect_reference_outputs(*compiled);
  }
}

INSTANTIATE_TEST_SUITE_P(Declined, Placement,
                         ::testing::Values("reduction", "pointwise", "scatter"),
                         [](const auto& test) { return std::string(test.param); });

TEST_F(Placement, CostMovesKernelsToTheFasterDevice) {
  // The interpreter (0.05 GB/s) serves; cpp_openmp is estimated far cheaper, copies included.
  auto primary = load("kir_interpreter", {});
  auto helper = cpu();
  ASSERT_TRUE(primary && helper);
  auto compiled = compile(primary, helper, PlacementPolicy::Cost, true);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const CompileStats& st = compiled->stats();
  // Most kernels move; the first ones, reading the graph's tiny inputs, may stay: a copy's
  // fixed cost is more than the interpreter needs for a few hundred bytes.
  EXPECT_GE(2 * st.placed.size(), st.kernels);
  for (const std::string& line : st.placed) {
    EXPECT_NE(line.find("on cpp_openmp:0 (cheaper: "), std::string::npos) << line;
    EXPECT_NE(line.find(" on kir_interpreter:0, copies included)"), std::string::npos) << line;
  }
  expect_reference_outputs(*compiled);
}

TEST_F(Placement, CostKeepsKernelsWhereTheirBytesAre) {
  // Two devices of equal speed: the serving interpreter declines reductions, the other takes
  // everything. By order, every kernel after a reduction comes back to the serving device
  // (and its inputs with it); by cost, a kernel stays where the bytes it reads already are.
  auto primary = interpreter("reduction");
  auto helper = load("kir_interpreter", {});
  ASSERT_TRUE(primary && helper);
  auto by_order = compile(primary, helper, PlacementPolicy::Order, false);
  auto by_cost = compile(primary, helper, PlacementPolicy::Cost, false);
  ASSERT_TRUE(by_order && by_cost);
  EXPECT_LT(by_cost->stats().transfers, by_order->stats().transfers);
  EXPECT_GT(by_cost->stats().placed.size(), by_order->stats().placed.size());
  expect_reference_outputs(*by_order);
  expect_reference_outputs(*by_cost);
}

TEST_F(Placement, NoDeviceTakesAKernel) {
  auto primary = interpreter("reduction");
  ASSERT_TRUE(primary);
  // The same device offered again declines the same kernels.
  auto compiled = compile(primary, primary, PlacementPolicy::Order, true);
  ASSERT_FALSE(compiled);
  const std::string text = compiled.error().to_string();
  EXPECT_NE(text.find("no configured device runs kernel"), std::string::npos) << text;
  EXPECT_NE(text.find("of 'split' (kir_interpreter: kernel"), std::string::npos) << text;
  EXPECT_NE(text.find("declines"), std::string::npos) << text;
}

TEST_F(Placement, WithoutHelpersNothingIsAsked) {
  // The interpreter declining nothing serves the whole graph alone: no placement, no copies.
  auto primary = load("kir_interpreter", {});
  ASSERT_TRUE(primary);
  auto compiled = compile_for_device(graph(), registry_, primary, 0, cache_, logging_);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  EXPECT_TRUE(compiled->stats().placed.empty());
  EXPECT_EQ(compiled->stats().transfers, 0u);
}

}  // namespace
}  // namespace kiln
