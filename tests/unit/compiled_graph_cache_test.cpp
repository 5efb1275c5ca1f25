// Whole compiled graphs in the disk cache: a second compile of the same graph comes from its
// "graphs" entry (no scheduling) and computes what the oracle computes; damaged entries are
// refused and recompiled, never trusted; a miss names the key part that differs.
#include "core/runtime/compiled_graph_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

#include "core/graph/builder.h"
#include "core/graph/graph_dump.h"
#include "core/graph/graph_json.h"
#include "core/graph/safetensors.h"
#include "core/interp/compare.h"
#include "core/interp/interpreter.h"
#include "core/interp/oracle.h"
#include "core/interp/random_tensor.h"
#include "core/lower/loop_ir_print.h"
#include "core/ops/op_registry.h"
#include "core/runtime/compile.h"
#include "core/runtime/plugin_loader.h"
#include "tests/unit/test_paths.h"

namespace kiln {
namespace {

using test::data_dir;
using test::plugin_dir;

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class CompiledGraphCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kiln_graph_cache_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    const std::string path = plugin_dir() + "/kiln_cpp_openmp.so";
    auto plugin = load_plugin(PluginConfig{"cpp_openmp", "", {}}, path, logging_);
    ASSERT_TRUE(plugin) << plugin.error().to_string();
    plugin_ = *plugin;
    seed_ = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  void TearDown() override { fs::remove_all(dir_); }

  DiskCache cache() const { return DiskCache(dir_.string(), 1 << 28, logging_.get("cache")); }

  Result<CompiledGraph> compile(const Graph& g, const ScheduleOptions& s = {}) const {
    return compile_for_device(g, registry_, plugin_, 0, cache(), logging_, "", s);
  }

  CacheKey key(const Graph& g, const ScheduleOptions& s = {}) const {
    auto k = compiled_graph_key(g, *plugin_, 0, s, AutotuneOptions{});
    EXPECT_TRUE(k.has_value());
    return k.value_or(CacheKey{});
  }

  // Compiles `g` and returns the "graphs" entry that wrote ("" when none).
  std::string written_entry(const Graph& g) const {
    EXPECT_TRUE(compile(g));
    return cache().get(key(g)).value_or("");
  }

  Graph example(const std::string& name) const {
    const std::string base = data_dir() + "/examples/" + name;
    auto g = load_graph(base + ".json", registry_);
    EXPECT_TRUE(g) << g.error().to_string();
    if (fs::exists(base + ".safetensors")) {
      auto w = read_safetensors(base + ".safetensors");
      EXPECT_TRUE(w && attach_weights(*g, *w, base + ".safetensors"));
    }
    return std::move(*g);
  }

  // A graph with a multi-output host step (embedding_bag has no kernel rule) and an infinite
  // constant.
  Graph host_step_graph() const {
    GraphBuilder b(registry_, "bag_then_max");
    const ValueRef x = b.input("x", TensorType::contiguous(DType::F32, {4, 3}));
    const ValueRef ids =
        b.op("aten.remainder.Scalar",
             {b.op("aten.arange.start_step", {int64_t{0}, int64_t{7}, int64_t{1}}), int64_t{4}});
    const ValueRef offsets = b.op("aten.arange.start_step", {int64_t{0}, int64_t{7}, int64_t{3}});
    const auto pooled = b.ops("aten._embedding_bag.default", {x, ids, offsets, false, int64_t{0},
                                                              false, None{}, false, int64_t{-1}});
    const ValueRef positive = b.op("aten.gt.Scalar", {pooled.at(0), 0.0});
    const ValueRef m =
        b.op("aten.where.self", {positive, pooled.at(0), -std::numeric_limits<double>::infinity()});
    b.output(b.op("aten.amax.default", {m, ints{1}, true}));
    b.output(pooled.at(1));
    auto g = b.finish();
    EXPECT_TRUE(g) << g.error().to_string();
    return std::move(*g);
  }

  // Runs `c` on fresh random inputs with poisoned outputs against the oracle on `g`.
  void expect_matches_oracle(const CompiledGraph& c, const Graph& g) {
    std::vector<HostTensor> inputs;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const Value& v = g.value(g.inputs[i]);
      inputs.push_back(random_tensor(v.type, seed_ + i, v.random_range));
    }
    auto oracle = run_oracle(g, inputs);
    ASSERT_TRUE(oracle) << oracle.error().to_string();
    RunOptions poison;
    poison.poison = true;
    auto actual = c.run(inputs, poison);
    ASSERT_TRUE(actual) << actual.error().to_string();
    ASSERT_EQ(actual->size(), oracle->expected.size());
    for (size_t i = 0; i < actual->size(); ++i) {
      const Comparison cmp = oracle->compare(i, (*actual)[i]);
      EXPECT_TRUE(cmp.ok()) << g.name << " output " << i << ": " << cmp.mismatches
                            << " mismatches (max abs " << cmp.max_abs << "), seed " << seed_;
    }
  }

  std::ostringstream logged_;
  Logging logging_{LogLevels{}, std::make_shared<spdlog::sinks::ostream_sink_mt>(logged_)};
  std::shared_ptr<const OpRegistry> registry_ = OpRegistry::create().value();
  std::shared_ptr<const Plugin> plugin_;
  fs::path dir_;
  uint64_t seed_ = 0;
};

TEST_F(CompiledGraphCacheTest, TheSecondCompileComesFromTheEntryAndComputesTheSame) {
  std::vector<Graph> graphs;
  for (const char* name : {"mlp", "transformer_block", "softmax", "cross_entropy"})
    graphs.push_back(example(name));
  graphs.push_back(host_step_graph());
  for (const Graph& g : graphs) {
    SCOPED_TRACE(g.name);
    auto cold = compile(g);
    ASSERT_TRUE(cold) << cold.error().to_string();
    EXPECT_FALSE(cold->stats().graph_cache_hit);
    auto warm = compile(g);
    ASSERT_TRUE(warm) << warm.error().to_string();
    EXPECT_TRUE(warm->stats().graph_cache_hit);
    EXPECT_TRUE(warm->stats().cache_hit);
    // The same graph, program, kernels and plan as the compile that wrote the entry.
    EXPECT_EQ(dump_graph(warm->graph()), dump_graph(cold->graph()));
    EXPECT_EQ(print_loop_program(warm->program()), print_loop_program(cold->program()));
    EXPECT_EQ(warm->kir_text(), cold->kir_text());
    EXPECT_EQ(warm->plan().size(), cold->plan().size());
    EXPECT_EQ(warm->stats().arena_bytes, cold->stats().arena_bytes);
    EXPECT_EQ(warm->stats().host_steps, cold->stats().host_steps);
    if (g.name == "pool_then_max") {
      EXPECT_EQ(warm->stats().host_steps, 1u);
    }
    expect_matches_oracle(*warm, g);
  }
  EXPECT_THAT(logged_.str(), HasSubstr("compiled graph cache hit: 'mlp'"));
}

TEST_F(CompiledGraphCacheTest, OtherWeightsForTheSameGraphAreUploadedNotCached) {
  Graph g = example("mlp");
  ASSERT_TRUE(compile(g));
  for (auto& [name, tensor] : g.param_data)
    tensor = random_tensor(tensor.type(), seed_ + name.size(), std::make_pair(-0.1, 0.1));
  auto warm = compile(g);
  ASSERT_TRUE(warm) << warm.error().to_string();
  EXPECT_TRUE(warm->stats().graph_cache_hit);
  expect_matches_oracle(*warm, g);
}

TEST_F(CompiledGraphCacheTest, DamagedEntriesAreRefusedNeverTrusted) {
  const Graph g = example("softmax");
  const std::string payload = written_entry(g);
  ASSERT_FALSE(payload.empty());
  const DiskCache c = cache();
  ASSERT_TRUE(decode_compiled_graph(payload, registry_));
  // Every shorter payload is refused.
  for (size_t n = 0; n < payload.size(); n += 1 + n / 64)
    EXPECT_FALSE(decode_compiled_graph(std::string_view(payload).substr(0, n), registry_)) << n;
  // A damaged payload under a valid checksum: logged, compiled again, the entry replaced.
  c.put(key(g), payload.substr(0, payload.size() / 2));
  auto again = compile(g);
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_FALSE(again->stats().graph_cache_hit);
  EXPECT_THAT(logged_.str(), HasSubstr("not used (compiled graph entry"));
  expect_matches_oracle(*again, g);
  auto replaced = compile(g);
  ASSERT_TRUE(replaced);
  EXPECT_TRUE(replaced->stats().graph_cache_hit);
  // A truncated file fails its checksum: removed, compiled again.
  fs::resize_file(c.path_of(key(g)), 60);
  auto repaired = compile(g);
  ASSERT_TRUE(repaired);
  EXPECT_FALSE(repaired->stats().graph_cache_hit);
  expect_matches_oracle(*repaired, g);
}

// Bytes flipped on disk, after the checksum was written (what a bad disk or a stray write
// does): every damaged file is refused, the graph compiled again, and the results are right.
TEST_F(CompiledGraphCacheTest, BytesFlippedOnDiskAreAllRefused) {
  const Graph g = example("softmax");
  ASSERT_FALSE(written_entry(g).empty());
  const DiskCache c = cache();
  const std::string path = c.path_of(key(g));
  std::string good;
  {
    std::ifstream in(path, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_FALSE(good.empty());
  std::mt19937_64 rng(seed_);
  SCOPED_TRACE("seed " + std::to_string(seed_));
  int refused = 0, tries = 0;
  for (size_t at = 0; at < good.size(); at += 1 + good.size() / 40, ++tries) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ static_cast<char>(1 + rng() % 255));
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(bad.data(), static_cast<std::streamsize>(bad.size()));
    }
    auto compiled = compile(g);
    ASSERT_TRUE(compiled) << "byte " << at << ": " << compiled.error().to_string();
    EXPECT_FALSE(compiled->stats().graph_cache_hit) << "byte " << at << " flipped was trusted";
    refused += !compiled->stats().graph_cache_hit;
    expect_matches_oracle(*compiled, g);
  }
  EXPECT_EQ(refused, tries);
  EXPECT_GT(tries, 30);
}

// Bytes flipped under a valid checksum (a forged entry, which the checksum and the owner-only
// directory otherwise keep out): each is refused, or compiles and runs; the sanitizers
// watch that nothing reads or writes out of bounds.
TEST_F(CompiledGraphCacheTest, FlippedBytesNeverCrashCompileOrRun) {
  const Graph g = host_step_graph();
  const std::string payload = written_entry(g);
  ASSERT_FALSE(payload.empty());
  const DiskCache c = cache();
  std::mt19937_64 rng(1234);  // fixed: a failure replays
  std::vector<HostTensor> inputs;
  for (ValueRef r : g.inputs) inputs.push_back(random_tensor(g.type(r), 7));
  int used = 0;
  for (int i = 0; i < 60; ++i) {
    std::string bad = payload;
    const size_t at = rng() % bad.size();
    bad[at] = static_cast<char>(bad[at] ^ static_cast<char>(1 + rng() % 255));
    c.put(key(g), bad);
    auto compiled = compile(g);
    if (!compiled) continue;  // an error, not a crash
    used += compiled->stats().graph_cache_hit;
    (void)compiled->run(inputs);
  }
  RecordProperty("entries_used", used);
}

// Well-formed entries whose program does not fit its graph, or whose extern list or configs
// are not this plugin's: refused with the reason, compiled again, right results.
TEST_F(CompiledGraphCacheTest, EntriesThatDoNotFitAreRefusedWithTheReason) {
  const Graph g = example("mlp");
  const std::string payload = written_entry(g);
  ASSERT_FALSE(payload.empty());
  const DiskCache c = cache();
  auto good = decode_compiled_graph(payload, registry_);
  ASSERT_TRUE(good) << good.error().to_string();
  auto expect_refused = [&](const std::string& entry, const std::string& why) {
    SCOPED_TRACE(why);
    c.put(key(g), entry);
    logged_.str("");
    auto compiled = compile(g);
    ASSERT_TRUE(compiled) << compiled.error().to_string();
    EXPECT_FALSE(compiled->stats().graph_cache_hit);
    EXPECT_THAT(logged_.str(), HasSubstr(why));
    expect_matches_oracle(*compiled, g);
  };
  {
    LoopProgram p = good->program;  // an input buffer that holds no input
    for (LoopBuffer& b : p.buffers)
      if (b.kind == BufferKind::Input) b.kind = BufferKind::Param;
    expect_refused(encode_compiled_graph(good->graph, p, good->record), "holds no graph parameter");
  }
  {
    LoopProgram p = good->program;  // an output buffer of the wrong size
    p.buffers[static_cast<size_t>(p.outputs[0])].elements += 1;
    expect_refused(encode_compiled_graph(good->graph, p, good->record), "output 0 has no buffer");
  }
  for (const int64_t growth : {int64_t{1}, int64_t{1} << 39}) {
    LoopProgram p = good->program;  // a loop range grown past its buffers
    LoopKernel* k = nullptr;
    for (LoopKernel& candidate : p.kernels)
      if (candidate.kind != LoopKernelKind::Extern && !candidate.ranges.empty()) k = &candidate;
    ASSERT_NE(k, nullptr);
    k->ranges.back() += growth;
    expect_refused(encode_compiled_graph(good->graph, p, good->record),
                   growth == 1 ? "reaches outside buffer" : "has a loop range out of bounds");
  }
  {
    LoopProgram p = good->program;  // a store moved one element past the end of its buffer
    bool moved = false;
    for (LoopKernel& k : p.kernels)
      for (LoopOp& op : k.body)
        if (!moved && op.kind == LoopOpKind::Store && op.mask < 0) {
          op.index = op.index + Expr::constant(1);
          moved = true;
        }
    ASSERT_TRUE(moved);
    expect_refused(encode_compiled_graph(good->graph, p, good->record), "reaches outside buffer");
  }
  {
    CompiledGraphRecord r = good->record;  // made when the plugin had other library calls
    r.asked_externs = true;
    r.externs = {"conv2d f32"};
    expect_refused(encode_compiled_graph(good->graph, good->program, r),
                   "offers other library calls than when the entry was made");
  }
  {
    CompiledGraphRecord r = good->record;  // configs of another program
    ASSERT_FALSE(r.kernel_configs.empty());
    r.kernel_configs[0] = "k99_other ";
    expect_refused(encode_compiled_graph(good->graph, good->program, r), "is not kernel");
  }
}

TEST_F(CompiledGraphCacheTest, ALibraryCallOnABroadcastViewComesBackFromTheCache) {
  // bmm reads a [4, 3] matrix broadcast over the batch through its own strides: the entry's
  // checks must take the view (an MLP-Mixer's token mixing exports to this).
  auto g = parse_graph(R"({"format": "kiln.graph/1", "name": "broadcast_bmm",
      "inputs": [{"name": "x", "dtype": "f32", "shape": [2, 8, 4]},
                 {"name": "w", "dtype": "f32", "shape": [4, 3]}],
      "nodes": [{"name": "e", "op": "aten.expand.default", "args": ["%w", [2, 4, 3]]},
                {"name": "y", "op": "aten.bmm.default", "args": ["%x", "%e"]}],
      "outputs": ["%y"]})",
                       "broadcast_bmm", registry_);
  ASSERT_TRUE(g) << g.error().to_string();
  ASSERT_TRUE(compile(*g));
  auto warm = compile(*g);
  ASSERT_TRUE(warm) << warm.error().to_string();
  EXPECT_TRUE(warm->stats().graph_cache_hit) << logged_.str();
  expect_matches_oracle(*warm, *g);
}

TEST_F(CompiledGraphCacheTest, MaskedAccessesAreBoundedByTheirMasks) {
  // Padding reads its input through a masked load whose index leaves the input where the
  // mask is off: the check accepts it, and refuses it once the index moves past what the
  // mask guards or the mask's bound is forged wider.
  auto g = parse_graph(R"({"format": "kiln.graph/1", "name": "pad",
      "inputs": [{"name": "x", "dtype": "f32", "shape": [5, 7]}],
      "nodes": [{"name": "y", "op": "aten.constant_pad_nd.default",
                 "args": ["%x", [2, 3, 1, 0], 0.5]}],
      "outputs": ["%y"]})",
                       "pad", registry_);
  ASSERT_TRUE(g) << g.error().to_string();
  const std::string payload = written_entry(*g);
  auto good = decode_compiled_graph(payload, registry_);
  ASSERT_TRUE(good) << good.error().to_string();
  auto masked_load = [](LoopProgram& p) -> std::pair<LoopKernel*, LoopOp*> {
    for (LoopKernel& k : p.kernels)
      for (LoopOp& op : k.body)
        if (op.kind == LoopOpKind::Load && op.mask >= 0) return {&k, &op};
    return {nullptr, nullptr};
  };
  {
    LoopProgram p = good->program;
    auto [k, load] = masked_load(p);
    ASSERT_NE(load, nullptr);
    load->index = load->index + Expr::constant(1);
    auto d = decode_compiled_graph(encode_compiled_graph(good->graph, p, good->record), registry_);
    ASSERT_FALSE(d);
    EXPECT_THAT(d.error().message(), HasSubstr("reaches outside buffer"));
  }
  {
    LoopProgram p = good->program;  // every "x < hi" guard of the mask widened by one
    auto [k, load] = masked_load(p);
    ASSERT_NE(k, nullptr);
    int widened = 0;
    for (LoopOp& op : k->body)
      if (op.kind == LoopOpKind::Math && op.name == "lt")
        for (LoopOp& c : k->body)
          if (c.id == op.args[1] && c.kind == LoopOpKind::Const) {
            c.value += 1;
            ++widened;
          }
    ASSERT_GT(widened, 0);
    auto d = decode_compiled_graph(encode_compiled_graph(good->graph, p, good->record), registry_);
    ASSERT_FALSE(d);
    EXPECT_THAT(d.error().message(), HasSubstr("reaches outside buffer"));
  }
}

TEST_F(CompiledGraphCacheTest, AnEvictedKernelIsCompiledAgainUnderTheGraphEntry) {
  const Graph g = example("layernorm");
  ASSERT_TRUE(compile(g));
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "kernels"))
    if (e.is_regular_file()) fs::remove(e.path());
  auto warm = compile(g);
  ASSERT_TRUE(warm) << warm.error().to_string();
  EXPECT_TRUE(warm->stats().graph_cache_hit);
  EXPECT_FALSE(warm->stats().cache_hit);
  expect_matches_oracle(*warm, g);
}

TEST_F(CompiledGraphCacheTest, AMissNamesTheKeyPartThatDiffers) {
  const Graph g = example("rmsnorm");
  ASSERT_TRUE(compile(g));
  ScheduleOptions other;
  other.max_inline_ops = 7;
  const std::string why = cache().explain_miss(key(g, other));
  EXPECT_THAT(why, HasSubstr("schedule ("));
  EXPECT_THAT(why, HasSubstr("max_inline_ops=7"));
  EXPECT_THAT(why, ::testing::Not(HasSubstr("graph (")));
  auto recompiled = compile(g, other);
  ASSERT_TRUE(recompiled);
  EXPECT_FALSE(recompiled->stats().graph_cache_hit);
  // Another graph of the same plugin: the graph part differs, the rest agrees.
  EXPECT_THAT(cache().explain_miss(key(host_step_graph())), HasSubstr("graph ("));
  // The same graph with another input type is another graph.
  Graph wider = g;
  wider.values[static_cast<size_t>(wider.inputs[0].id)].type.dtype = DType::F64;
  EXPECT_THAT(cache().explain_miss(key(wider)), HasSubstr("graph ("));
}

TEST_F(CompiledGraphCacheTest, DebugDumpsRunEveryStageAndStillWriteTheEntry) {
  const Graph g = example("softmax");
  const fs::path dumps = dir_ / "dumps";
  auto dumped = compile_for_device(g, registry_, plugin_, 0, cache(), logging_, dumps.string());
  ASSERT_TRUE(dumped) << dumped.error().to_string();
  EXPECT_FALSE(dumped->stats().graph_cache_hit);
  EXPECT_TRUE(fs::exists(dumps / "softmax.loopir"));
  fs::remove_all(dumps);
  auto again = compile_for_device(g, registry_, plugin_, 0, cache(), logging_, dumps.string());
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->stats().graph_cache_hit);  // the stages ran again, for the dump
  EXPECT_TRUE(fs::exists(dumps / "softmax.loopir"));
  auto warm = compile(g);
  ASSERT_TRUE(warm);
  EXPECT_TRUE(warm->stats().graph_cache_hit);
}

}  // namespace
}  // namespace kiln
