// run.cuda_graphs: run_into records the plan once per set of caller addresses (ABI 1.4
// capture) and replays it. Checked on the KIR interpreter, whose streams record: each replay
// reads the inputs and random state of its own call, a moved tensor gets a plain run until
// its addresses repeat, a kernel's error in a replay is reported, and a plugin negotiated
// down to ABI 1.3 is never asked to record.
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/graph/graph_json.h"
#include "core/interp/oracle.h"
#include "core/interp/random_tensor.h"
#include "core/ops/op_registry.h"
#include "core/runtime/compile.h"
#include "core/runtime/plugin_loader.h"
#include "tests/unit/test_paths.h"

namespace kiln {
namespace {

// Kernels of three kinds: a pointwise one, a reduction, a gather by index, and random draws.
constexpr const char* kGraph = R"({"format": "kiln.graph/1", "name": "replayed",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [5, 37]},
             {"name": "y", "dtype": "f32", "shape": [37]},
             {"name": "i", "dtype": "i64", "shape": [3]}],
  "nodes": [{"name": "z", "op": "aten.sub.Tensor", "args": ["%x", "%y"]},
            {"name": "m", "op": "aten.amax.default", "args": ["%z", [0]]},
            {"name": "g", "op": "aten.index_select.default", "args": ["%z", 0, "%i"]},
            {"name": "u", "op": "aten.rand.default", "args": [[4, 9]]}],
  "outputs": ["%z", "%m", "%g", "%u"]})";

// Tensors the runs read and write in place: the interpreter's device addresses are host
// pointers, so 64-byte aligned host memory passes as device memory (bound, not copied).
struct Tensors {
  struct Storage {
    std::shared_ptr<std::byte> bytes;
    TensorType type;
    size_t size = 0;
  };
  std::vector<Storage> in, out;
  std::vector<TensorRef> in_refs, out_refs;
};

Tensors::Storage storage_for(const TensorType& type) {
  const size_t size = static_cast<size_t>(type.numel()) * dtype_size(type.dtype);
  auto* bytes = static_cast<std::byte*>(std::aligned_alloc(64, (size + 63) / 64 * 64));
  return {std::shared_ptr<std::byte>(bytes, std::free),
          TensorType::contiguous(type.dtype, type.sizes), size};
}

class Replay : public ::testing::Test {
 protected:
  Result<CompiledGraph> compile(const Graph& g, uint32_t minor,
                                const std::string& streams = "immediate") {
    auto plugin = load_plugin(PluginConfig{"kir_interpreter", "", {{"streams", {streams}, false}}},
                              test::plugin_dir() + "/kiln_kir_interpreter.so", logging_,
                              AbiVersion{KILN_ABI_MAJOR, minor});
    if (!plugin) return std::move(plugin).error();
    const DiskCache cache("", 0, logging_.get("cache"));
    return compile_for_device(g, registry_, *plugin, 0, cache, logging_);
  }

  Tensors tensors(const Graph& g) {
    Tensors t;
    for (ValueRef r : g.inputs) t.in.push_back(storage_for(g.type(r)));
    for (ValueRef r : g.outputs) t.out.push_back(storage_for(g.type(r)));
    for (const auto& m : t.in) t.in_refs.push_back({m.bytes.get(), m.type, true});
    for (const auto& m : t.out) t.out_refs.push_back({m.bytes.get(), m.type, true});
    return t;
  }

  // Fresh inputs written into `t`'s memory (indices in range unless `bad_index`), outputs
  // poisoned; the run's results checked against the reference at random call `call`.
  void run_and_check(const Graph& g, CompiledGraph& compiled, Tensors& t, uint64_t call,
                     bool bad_index = false) {
    std::vector<HostTensor> values;
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      const bool index = g.type(g.inputs[k]).dtype == DType::I64;
      HostTensor v = random_tensor(g.type(g.inputs[k]), seed_ + 31 * call + k,
                                   index ? std::optional(std::pair(0.0, 5.0)) : std::nullopt);
      if (bad_index && index) v.set(1, 9.0);
      std::memcpy(t.in[k].bytes.get(), v.bytes().data(), v.bytes().size());
      values.push_back(std::move(v));
    }
    for (const auto& o : t.out) std::memset(o.bytes.get(), 0x7F, o.size);
    const Status status = compiled.run_into(t.in_refs, t.out_refs);
    if (bad_index) {
      ASSERT_FALSE(status) << "an index out of range in a replay must fail the run";
      EXPECT_NE(status.error().message().find("out of range"), std::string::npos)
          << status.error().to_string();
      return;
    }
    ASSERT_TRUE(status) << status.error().to_string();
    auto oracle = run_oracle(g, values, RandomState{seed_, call});
    ASSERT_TRUE(oracle) << oracle.error().to_string();
    for (size_t i = 0; i < t.out.size(); ++i) {
      const Tensors::Storage& o = t.out[i];
      auto out = HostTensor::from_bytes(o.type.dtype, o.type.sizes,
                                        {o.bytes.get(), o.bytes.get() + o.size});
      ASSERT_TRUE(out) << out.error().to_string();
      const Comparison c = oracle->compare(i, *out);
      EXPECT_TRUE(c.ok()) << "call " << call << ", output " << i << ": " << c.mismatches
                          << " mismatches, first at " << c.first_mismatch;
    }
  }

  const uint64_t seed_ =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) % 100000;
  Logging logging_{LogLevels{}, std::make_shared<spdlog::sinks::null_sink_mt>()};
  std::shared_ptr<const OpRegistry> registry_ = OpRegistry::create().value();
};

TEST_F(Replay, EachReplayReadsItsOwnCall) {
  auto g = parse_graph(kGraph, "replayed", registry_);
  ASSERT_TRUE(g) << g.error().to_string();
  auto compiled = compile(*g, KILN_ABI_MINOR);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  ASSERT_GE(compiled->stats().kernels, 3u) << "the graph should need several kernels";
  compiled->set_cuda_graphs(true);
  compiled->set_random_seed(seed_);
  Tensors t = tensors(*g);
  // Call 0 sees the addresses first (a plain run), call 1 records and replays, 2-4 replay.
  for (uint64_t call = 0; call < 5; ++call) run_and_check(*g, *compiled, t, call);
  EXPECT_EQ(compiled->last_run_copied_bytes(), 0) << "every tensor should be used in place";
  ReplayStats stats = compiled->replay_stats();
  EXPECT_EQ(stats.captures, 1);
  EXPECT_EQ(stats.replays, 4);
  EXPECT_EQ(stats.refused, "");
  EXPECT_EQ(stats.failed_recordings, 0);

  // Inputs somewhere else (the key is the caller memory bound in place: the interpreter binds
  // every input): a plain run, then a second recording once they repeat; the first recording
  // still serves the first addresses.
  Tensors moved = tensors(*g);
  run_and_check(*g, *compiled, moved, 5);
  EXPECT_EQ(compiled->replay_stats().replays, 4);
  run_and_check(*g, *compiled, moved, 6);
  run_and_check(*g, *compiled, t, 7);
  stats = compiled->replay_stats();
  EXPECT_EQ(stats.captures, 2);
  EXPECT_EQ(stats.replays, 6);
}

TEST_F(Replay, AKernelErrorInAReplayFailsTheRun) {
  auto g = parse_graph(kGraph, "replayed", registry_);
  ASSERT_TRUE(g) << g.error().to_string();
  auto compiled = compile(*g, KILN_ABI_MINOR);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  compiled->set_cuda_graphs(true);
  compiled->set_random_seed(seed_);
  Tensors t = tensors(*g);
  run_and_check(*g, *compiled, t, 0);
  run_and_check(*g, *compiled, t, 1);
  run_and_check(*g, *compiled, t, 2, /*bad_index=*/true);
  EXPECT_EQ(compiled->replay_stats().replays, 1) << "a failed replay is not counted";
  // The recording is still good for the next call's indices.
  run_and_check(*g, *compiled, t, 3);
  EXPECT_EQ(compiled->replay_stats().replays, 2);
  EXPECT_EQ(compiled->replay_stats().captures, 1);
}

TEST_F(Replay, RunsStagedBeforeLeaveRecordingsAlone) {
  // Staging needs streams that may overlap: the interpreter's deferred ones. Once staging is
  // off, kernels must go to the recording stream, not the staging runs' compute stream.
  auto g = parse_graph(kGraph, "replayed", registry_);
  ASSERT_TRUE(g) << g.error().to_string();
  auto compiled = compile(*g, KILN_ABI_MINOR, "deferred");
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  compiled->set_cuda_graphs(true);
  compiled->set_random_seed(seed_);
  Tensors t = tensors(*g);
  compiled->set_staging(true);
  run_and_check(*g, *compiled, t, 0);
  EXPECT_NE(compiled->replay_stats().not_recordable, "") << "staged runs are never recorded";
  compiled->set_staging(false);
  for (uint64_t call = 1; call < 5; ++call) run_and_check(*g, *compiled, t, call);
  EXPECT_EQ(compiled->replay_stats().not_recordable, "");
  EXPECT_EQ(compiled->replay_stats().replays, 3);
}

TEST_F(Replay, OffOrBeforeAbi14NothingIsRecorded) {
  auto g = parse_graph(kGraph, "replayed", registry_);
  ASSERT_TRUE(g) << g.error().to_string();
  for (const bool older : {false, true}) {
    SCOPED_TRACE(older ? "negotiated 1.3, cuda_graphs on" : "1.4, cuda_graphs off");
    auto compiled = compile(*g, older ? 3 : KILN_ABI_MINOR);
    ASSERT_TRUE(compiled) << compiled.error().to_string();
    compiled->set_cuda_graphs(older);
    compiled->set_random_seed(seed_);
    Tensors t = tensors(*g);
    for (uint64_t call = 0; call < 3; ++call) run_and_check(*g, *compiled, t, call);
    EXPECT_EQ(compiled->replay_stats().replays, 0);
    EXPECT_EQ(compiled->replay_stats().captures, 0);
  }
}

}  // namespace
}  // namespace kiln
