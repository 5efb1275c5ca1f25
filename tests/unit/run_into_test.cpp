// CompiledGraph::run_into on the caller's memory: in place with a plugin that registers
// caller memory (ABI 1.1), through copies with the same plugin negotiated down to 1.0, and
// right either way, including outputs that are an input, repeat a value or need a cast; and
// huge pages asked for the outputs written in place.
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/ostream_sink.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <sstream>

#include "core/graph/graph_json.h"
#include "core/interp/oracle.h"
#include "core/interp/random_tensor.h"
#include "core/ops/op_registry.h"
#include "core/runtime/compile.h"
#include "core/runtime/huge_pages.h"
#include "core/runtime/plugin_loader.h"
#include "tests/unit/huge_page_mapping.h"
#include "tests/unit/test_paths.h"

namespace kiln {
namespace {

// Outputs: an input as it is, a value twice, and a reduction.
constexpr const char* kGraph = R"({"format": "kiln.graph/1", "name": "outputs",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [3, 17]},
             {"name": "y", "dtype": "f32", "shape": [17]}],
  "nodes": [{"name": "z", "op": "aten.sub.Tensor", "args": ["%x", "%y"]},
            {"name": "m", "op": "aten.amax.default", "args": ["%z", [0]]}],
  "outputs": ["%x", "%z", "%z", "%m"]})";

class RunInto : public ::testing::TestWithParam<uint32_t> {
 protected:
  Result<CompiledGraph> compile(const Graph& g) {
    auto plugin =
        load_plugin(PluginConfig{"cpp_openmp", "", {}}, test::plugin_dir() + "/kiln_cpp_openmp.so",
                    logging_, AbiVersion{KILN_ABI_MAJOR, GetParam()});
    if (!plugin) return std::move(plugin).error();
    const DiskCache cache("", 0, logging_.get("cache"));
    return compile_for_device(g, registry_, *plugin, 0, cache, logging_);
  }

  Logging logging_{LogLevels{}, std::make_shared<spdlog::sinks::null_sink_mt>()};
  std::shared_ptr<const OpRegistry> registry_ = OpRegistry::create().value();
};

TEST_P(RunInto, CallerMemoryInPlaceOrThroughCopies) {
  auto g = parse_graph(kGraph, "outputs", registry_);
  ASSERT_TRUE(g) << g.error().to_string();
  auto compiled = compile(*g);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const auto seed =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (int rep = 0; rep < 4; ++rep) {
    // Runs 2 and 3 return without waiting where nothing was copied (run.asynchronous).
    compiled->set_asynchronous(rep >= 2);
    std::vector<HostTensor> in;
    std::vector<TensorRef> in_refs, out_refs;
    for (size_t i = 0; i < g->inputs.size(); ++i) {
      in.push_back(random_tensor(g->type(g->inputs[i]), seed + rep * 7 + i));
      in_refs.push_back(
          {const_cast<std::byte*>(in.back().bytes().data()), g->type(g->inputs[i]), false});
    }
    std::vector<HostTensor> out;
    for (ValueRef r : g->outputs) {
      HostTensor t = HostTensor::zeros(g->type(r).dtype, g->type(r).sizes);
      for (int64_t i = 0; i < t.numel(); ++i) t.set(i, NAN);
      out.push_back(std::move(t));
    }
    for (size_t i = 0; i < out.size(); ++i)
      out_refs.push_back(
          {const_cast<std::byte*>(out[i].bytes().data()), g->type(g->outputs[i]), false});
    ASSERT_TRUE(compiled->run_into(in_refs, out_refs));
    if (GetParam() >= 1) {
      // The program gives each output a buffer of its own: every tensor is used in place.
      EXPECT_EQ(compiled->last_run_copied_bytes(), 0);
    } else {
      EXPECT_GT(compiled->last_run_copied_bytes(), (3 * 17 + 17) * 4);
    }
    auto oracle = run_oracle(*g, in);
    ASSERT_TRUE(oracle) << oracle.error().to_string();
    for (size_t i = 0; i < out.size(); ++i) {
      const Comparison c = oracle->compare(i, out[i]);
      EXPECT_TRUE(c.ok()) << "output " << i << ": " << c.mismatches << " mismatches, first at "
                          << c.first_mismatch;
    }
  }
}

TEST_P(RunInto, AnOutputOverAnInputOrUnalignedMemoryIsStaged) {
  // y = a + a^T written over a itself: kernels writing y in place would read back elements
  // of a they already overwrote. And an input that is not float-aligned.
  auto g = parse_graph(R"({"format": "kiln.graph/1", "name": "aliased",
      "inputs": [{"name": "a", "dtype": "f32", "shape": [9, 9]}],
      "nodes": [{"name": "t", "op": "aten.t.default", "args": ["%a"]},
                {"name": "y", "op": "aten.add.Tensor", "args": ["%a", "%t"]}],
      "outputs": ["%y"]})",
                       "aliased", registry_);
  ASSERT_TRUE(g) << g.error().to_string();
  auto compiled = compile(*g);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const auto seed =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const TensorType type = g->type(g->inputs[0]);
  HostTensor a = random_tensor(type, seed);
  auto oracle = run_oracle(*g, {a});
  ASSERT_TRUE(oracle) << oracle.error().to_string();
  auto* data = const_cast<std::byte*>(a.bytes().data());
  const TensorRef ref{data, type, false};
  ASSERT_TRUE(compiled->run_into({ref}, {ref}));
  EXPECT_TRUE(oracle->compare(0, a).ok()) << "the output overwrote an input kernels still read";

  // The same values two bytes off float alignment (a CPU device binds any element-aligned
  // address; a GPU one only 64-byte aligned ones).
  std::vector<float> storage(81 + 32);
  auto* base = reinterpret_cast<std::byte*>(storage.data()) + 2;
  HostTensor b = random_tensor(type, seed + 1);
  std::memcpy(base, b.bytes().data(), 81 * 4);
  HostTensor y = HostTensor::zeros(DType::F32, {9, 9});
  ASSERT_TRUE(
      compiled->run_into({TensorRef{base, type, false}},
                         {TensorRef{const_cast<std::byte*>(y.bytes().data()), type, false}}));
  EXPECT_GT(compiled->last_run_copied_bytes(), 0);
  auto expected = run_oracle(*g, {b});
  ASSERT_TRUE(expected);
  EXPECT_TRUE(expected->compare(0, y).ok());
}

TEST_P(RunInto, InputsInAnotherLayoutAreStagedRightAndNamedOnce) {
  // The graph was compiled for transposed inputs (a weight saved for a backward pass); the
  // caller passes row-major ones. Each call stages them; the log says so once per input.
  auto g = parse_graph(R"({"format": "kiln.graph/1", "name": "layouts",
      "inputs": [{"name": "x", "dtype": "f32", "shape": [5, 7], "strides": [1, 5]},
                 {"name": "n", "dtype": "i32", "shape": [5, 7], "strides": [1, 5]}],
      "nodes": [{"name": "y", "op": "aten.mul.Tensor", "args": ["%x", "%n"]}],
      "outputs": ["%y"]})",
                       "layouts", registry_);
  ASSERT_TRUE(g) << g.error().to_string();
  std::ostringstream log;
  Logging logging{LogLevels{}, std::make_shared<spdlog::sinks::ostream_sink_mt>(log)};
  auto plugin =
      load_plugin(PluginConfig{"cpp_openmp", "", {}}, test::plugin_dir() + "/kiln_cpp_openmp.so",
                  logging, AbiVersion{KILN_ABI_MAJOR, GetParam()});
  ASSERT_TRUE(plugin) << plugin.error().to_string();
  const DiskCache cache("", 0, logging.get("cache"));
  auto compiled = compile_for_device(*g, registry_, *plugin, 0, cache, logging);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const auto seed =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (int rep = 0; rep < 2; ++rep) {
    std::vector<HostTensor> in;
    std::vector<TensorRef> refs;
    for (size_t i = 0; i < g->inputs.size(); ++i) {
      const TensorType declared = g->type(g->inputs[i]);
      in.push_back(random_tensor(TensorType::contiguous(declared.dtype, declared.sizes),
                                 seed + 2 * rep + i));
      refs.push_back({const_cast<std::byte*>(in.back().bytes().data()), in.back().type(), false});
    }
    HostTensor y = HostTensor::zeros(DType::F32, {5, 7});
    for (int64_t i = 0; i < y.numel(); ++i) y.set(i, NAN);
    const TensorType out_type = TensorType::contiguous(DType::F32, {5, 7});
    ASSERT_TRUE(compiled->run_into(
        refs, {TensorRef{const_cast<std::byte*>(y.bytes().data()), out_type, false}}));
    EXPECT_GE(compiled->last_run_copied_bytes(), 2 * 5 * 7 * 4);
    auto oracle = run_oracle(*g, in);
    ASSERT_TRUE(oracle) << oracle.error().to_string();
    const Comparison c = oracle->compare(0, y);
    EXPECT_TRUE(c.ok()) << c.mismatches << " mismatches, first at " << c.first_mismatch;
  }
  size_t warnings = 0;
  for (size_t at = log.str().find("arrives with strides"); at != std::string::npos;
       at = log.str().find("arrives with strides", at + 1))
    ++warnings;
  // Without mem_register (1.0) every input is copied anyway: nothing to say about layouts.
  EXPECT_EQ(warnings, GetParam() >= 1 ? 2u : 0u) << log.str();
  if (GetParam() >= 1) {
    EXPECT_NE(log.str().find("input 1 ('n') arrives with strides [7, 1] but was compiled for "
                             "strides [1, 5]"),
              std::string::npos)
        << log.str();
  }
}

// Host ABI 1.0 (no mem_register: copies) and 1.1 (caller memory registered, used in place).
// The output kernels write in place asks for huge pages (core/runtime/huge_pages.h); the input
// (read only) does not, nor does anything with the policy off or through copies (ABI 1.0).
TEST_P(RunInto, FreshOutputsWrittenInPlaceAskForHugePages) {
  using test::asked_for_huge_pages;
  using test::kHuge;
  using test::Mapping;
  const HugePagePolicy advise{HugePagePolicy::Mode::Madvise, kHuge};
  {
    Mapping probe(2 * kHuge);
    ASSERT_NE(probe.base, 0u);
    if (!advise_huge_pages(advise, probe.unaligned(), 2 * kHuge))
      GTEST_SKIP() << "this kernel refuses MADV_HUGEPAGE (built without transparent huge pages)";
  }
  constexpr int64_t kCount = 3 * kHuge / 4 + 5;  // floats: just over 3 huge pages, odd
  auto g = parse_graph(R"({"format": "kiln.graph/1", "name": "fresh",
      "inputs": [{"name": "x", "dtype": "f32", "shape": [)" +
                           std::to_string(kCount) + R"(]}],
      "nodes": [{"name": "y", "op": "aten.mul.Tensor", "args": ["%x", 3.0]}],
      "outputs": ["%y"]})",
                       "fresh", registry_);
  ASSERT_TRUE(g) << g.error().to_string();
  auto compiled = compile(*g);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  const TensorType type = g->type(g->inputs[0]);
  const auto seed =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const HostTensor x = random_tensor(type, seed);
  auto oracle = run_oracle(*g, {x});
  ASSERT_TRUE(oracle) << oracle.error().to_string();
  for (bool on : {false, true}) {
    compiled->set_huge_pages(on ? advise : HugePagePolicy{});
    Mapping in(x.bytes().size()), out(x.bytes().size());
    ASSERT_NE(in.base, 0u);
    ASSERT_NE(out.base, 0u);
    auto* in_data = reinterpret_cast<float*>(in.unaligned());
    auto* out_data = reinterpret_cast<float*>(out.unaligned());
    std::memcpy(in_data, x.bytes().data(), x.bytes().size());
    for (int64_t i = 0; i < kCount; ++i) out_data[i] = NAN;
    ASSERT_TRUE(compiled->run_into({{in_data, type, false}}, {{out_data, type, false}}));
    const bool in_place = GetParam() >= 1;  // ABI 1.0: the plugin cannot use caller memory
    EXPECT_EQ(asked_for_huge_pages(out.first_whole()), on && in_place)
        << test::vm_flags_at(out.first_whole());
    EXPECT_FALSE(asked_for_huge_pages(in.first_whole())) << "inputs are only read";
    HostTensor got = HostTensor::zeros(type.dtype, type.sizes);
    std::memcpy(const_cast<std::byte*>(got.bytes().data()), out_data, got.bytes().size());
    const Comparison c = oracle->compare(0, got);
    EXPECT_TRUE(c.ok()) << c.mismatches << " mismatches, first at " << c.first_mismatch;
  }
}

INSTANTIATE_TEST_SUITE_P(HostMinor, RunInto, ::testing::Values(0u, 1u));

}  // namespace
}  // namespace kiln
