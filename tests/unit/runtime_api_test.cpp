// The runtime C API (libkiln.so) as a deployer links it: a session from config text, graphs
// from text and files with weights, runs on DLPack tensors read and written in place when
// their layout allows (and copied otherwise), outputs the runtime allocates, one compiled graph
// run from several threads, memory another process shares used in place, and errors as values.
// Every result is checked against the reference interpreter (linked separately, from the core) on
// fresh random inputs, with the caller's outputs poisoned first.
#include <gtest/gtest.h>
#include <kiln/runtime.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/graph/graph_json.h"
#include "core/graph/safetensors.h"
#include "core/interp/oracle.h"
#include "core/interp/random_tensor.h"
#include "core/ops/op_registry.h"
#include "tests/unit/test_paths.h"

namespace kiln {
namespace {

constexpr const char* kConfig =
    "plugins:\n  - name: cpp_openmp\n    options: { threads: 2 }\ndevices: [cpu:0]\n"
    "log: { level: warn }\n";

// z = x * 2 + y (y broadcast over rows), and the row sums of z.
constexpr const char* kGraph = R"({"format": "kiln.graph/1", "name": "affine",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [5, 7]},
             {"name": "y", "dtype": "f32", "shape": [7]}],
  "nodes": [{"name": "t", "op": "aten.mul.Tensor", "args": ["%x", 2.0]},
            {"name": "z", "op": "aten.add.Tensor", "args": ["%t", "%y"]},
            {"name": "s", "op": "aten.sum.dim_IntList", "args": ["%z", [1]]}],
  "outputs": ["%z", "%s"]})";

struct ErrorText {
  kiln_runtime_code code = KILN_RUNTIME_USER_ERROR;
  std::string message;
};

// Takes the error (NULL: success) and returns what it said.
std::optional<ErrorText> take(kiln_runtime_error* e) {
  if (!e) return std::nullopt;
  ErrorText t{kiln_runtime_error_code(e), kiln_runtime_error_message(e)};
  kiln_runtime_error_destroy(e);
  return t;
}

#define ASSERT_OK(call)                      \
  do {                                       \
    auto error_ = take(call);                \
    ASSERT_FALSE(error_) << error_->message; \
  } while (0)

DLTensor dl(HostTensor& t, std::vector<int64_t>& shape, std::vector<int64_t>* strides = nullptr) {
  shape = t.sizes();
  DLTensor d{};
  d.data = const_cast<std::byte*>(t.bytes().data());
  d.device = {kDLCPU, 0};
  d.ndim = static_cast<int32_t>(shape.size());
  d.dtype = {kDLFloat, 32, 1};
  d.shape = shape.data();
  d.strides = strides ? strides->data() : nullptr;
  return d;
}

class RuntimeApi : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = OpRegistry::create().value();
    kiln_session_options o{sizeof(o), kConfig, nullptr, 0};
    ASSERT_OK(kiln_session_open(&o, &session_));
    seed_ = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  void TearDown() override {
    if (graph_) kiln_graph_destroy(graph_);
    if (session_) kiln_session_close(session_);
  }

  void compile_text(const char* text) {
    kiln_graph_source src{};
    src.struct_size = sizeof(src);
    src.graph_text = text;
    src.graph_text_size = std::strlen(text);
    ASSERT_OK(kiln_graph_compile(session_, &src, &graph_));
  }

  std::vector<HostTensor> random_inputs(const Graph& g) {
    std::vector<HostTensor> in;
    for (size_t i = 0; i < g.inputs.size(); ++i)
      in.push_back(random_tensor(g.type(g.inputs[i]), seed_++));
    return in;
  }

  // Poisoned caller-owned outputs of the graph's types.
  static std::vector<HostTensor> poisoned_outputs(const Graph& g) {
    std::vector<HostTensor> out;
    for (ValueRef r : g.outputs) {
      HostTensor t = HostTensor::zeros(g.type(r).dtype, g.type(r).sizes);
      for (int64_t i = 0; i < t.numel(); ++i) t.set(i, NAN);
      out.push_back(std::move(t));
    }
    return out;
  }

  static void expect_matches(const Graph& g, const std::vector<HostTensor>& inputs,
                             const std::vector<HostTensor>& actual) {
    auto oracle = run_oracle(g, inputs);
    ASSERT_TRUE(oracle) << oracle.error().to_string();
    ASSERT_EQ(actual.size(), oracle->expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
      const Comparison c = oracle->compare(i, actual[i]);
      EXPECT_TRUE(c.ok()) << "output " << i << ": " << c.mismatches << " mismatches, first at "
                          << c.first_mismatch << ": got " << actual[i].get(c.first_mismatch)
                          << ", expected " << oracle->expected[i].get(c.first_mismatch);
    }
  }

  // Runs `graph` (default: `graph_`) on host tensors through kiln_graph_run; returns the
  // copied bytes.
  uint64_t run(std::vector<HostTensor>& in, std::vector<HostTensor>& out,
               kiln_graph* graph = nullptr) {
    if (!graph) graph = graph_;
    std::vector<std::vector<int64_t>> shapes(in.size() + out.size());
    std::vector<DLTensor> tensors;
    for (size_t i = 0; i < in.size(); ++i) tensors.push_back(dl(in[i], shapes[i]));
    for (size_t i = 0; i < out.size(); ++i) tensors.push_back(dl(out[i], shapes[in.size() + i]));
    std::vector<const DLTensor*> ptrs;
    for (const DLTensor& t : tensors) ptrs.push_back(&t);
    auto e =
        take(kiln_graph_run(graph, ptrs.data(), in.size(), ptrs.data() + in.size(), out.size()));
    EXPECT_FALSE(e) << e->message;
    return kiln_graph_last_run_copied_bytes(graph);
  }

  std::shared_ptr<const OpRegistry> registry_;
  kiln_session* session_ = nullptr;
  kiln_graph* graph_ = nullptr;
  uint64_t seed_ = 0;
};

TEST_F(RuntimeApi, RunsOnTheCallersTensorsWithoutCopies) {
  compile_text(kGraph);
  auto g = parse_graph(kGraph, "affine", registry_).value();
  EXPECT_EQ(kiln_graph_device(graph_).device_type, kDLCPU);
  EXPECT_EQ(std::string(kiln_graph_target(graph_)), "cpp_openmp:0");
  ASSERT_EQ(kiln_graph_num_inputs(graph_), 2u);
  ASSERT_EQ(kiln_graph_num_outputs(graph_), 2u);
  kiln_tensor_info info{};
  info.struct_size = sizeof(info);
  ASSERT_OK(kiln_graph_tensor_info(graph_, 1, 1, &info));
  EXPECT_STREQ(info.name, "s");
  ASSERT_EQ(info.ndim, 1);
  EXPECT_EQ(info.shape[0], 5);
  for (int rep = 0; rep < 3; ++rep) {  // the arena is reused across calls
    auto in = random_inputs(g);
    auto out = poisoned_outputs(g);
    EXPECT_EQ(run(in, out), 0u) << "dense host tensors on a cpu graph are used in place";
    expect_matches(g, in, out);
  }
}

// A graph of complex tensors takes and gives them as real pairs (f32[..., 2], torch's
// view_as_real), and says so in its tensor info.
TEST_F(RuntimeApi, ComplexTensorsAreRealPairs) {
  const char* text = R"({"format": "kiln.graph/1", "name": "square",
    "inputs": [{"name": "z", "dtype": "c64", "shape": [3]}],
    "nodes": [{"name": "w", "op": "aten.mul.Tensor", "args": ["%z", "%z"]}],
    "outputs": ["%w"]})";
  compile_text(text);
  for (const int is_output : {0, 1}) {
    kiln_tensor_info info{};
    info.struct_size = sizeof(info);
    ASSERT_OK(kiln_graph_tensor_info(graph_, is_output, 0, &info));
    EXPECT_EQ(info.dtype.code, kDLFloat);
    EXPECT_EQ(info.dtype.bits, 32);
    ASSERT_EQ(info.ndim, 2);
    EXPECT_EQ(info.shape[0], 3);
    EXPECT_EQ(info.shape[1], 2);
  }
  // (1+2i)^2 = -3+4i, (0.5-1i)^2 = -0.75-1i, (3+0i)^2 = 9+0i
  std::vector<float> z = {1, 2, 0.5f, -1, 3, 0};
  std::vector<int64_t> shape = {3, 2};
  DLTensor in{};
  in.data = z.data();
  in.device = {kDLCPU, 0};
  in.ndim = 2;
  in.dtype = {kDLFloat, 32, 1};
  in.shape = shape.data();
  const DLTensor* ins[] = {&in};
  kiln_dl_managed_tensor* out = nullptr;
  ASSERT_OK(kiln_graph_run_alloc(graph_, ins, 1, &out, 1));
  ASSERT_NE(out, nullptr);
  const auto* w = static_cast<const float*>(out->dl_tensor.data);
  const std::vector<float> got(w, w + 6), expected = {-3, 4, -0.75f, -1, 9, 0};
  EXPECT_EQ(got, expected);
  out->deleter(out);
}

TEST_F(RuntimeApi, StridedTensorsAreCopiedAndStillRight) {
  compile_text(kGraph);
  auto g = parse_graph(kGraph, "affine", registry_).value();
  // x as the transpose of a [7, 5] tensor, z written into every other element of a buffer.
  HostTensor xt = random_tensor(TensorType::contiguous(DType::F32, {7, 5}), seed_++);
  HostTensor y = random_tensor(TensorType::contiguous(DType::F32, {7}), seed_++);
  HostTensor zbuf = HostTensor::zeros(DType::F32, {5, 14});
  for (int64_t i = 0; i < zbuf.numel(); ++i) zbuf.set(i, -123.0);
  HostTensor s = HostTensor::zeros(DType::F32, {5});
  std::vector<int64_t> xs{5, 7}, xstr{1, 5}, ys, zs{5, 7}, zstr{14, 2}, ss;
  DLTensor dx = dl(xt, xs), dy = dl(y, ys), dz = dl(zbuf, zs), dsum = dl(s, ss);
  xs = {5, 7};
  dx.shape = xs.data();
  dx.strides = xstr.data();
  zs = {5, 7};
  dz.shape = zs.data();
  dz.strides = zstr.data();
  const DLTensor* ins[] = {&dx, &dy};
  const DLTensor* outs[] = {&dz, &dsum};
  ASSERT_OK(kiln_graph_run(graph_, ins, 2, outs, 2));
  EXPECT_GT(kiln_graph_last_run_copied_bytes(graph_), 0u);
  HostTensor x = HostTensor::zeros(DType::F32, {5, 7});
  HostTensor z = HostTensor::zeros(DType::F32, {5, 7});
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 0; c < 7; ++c) {
      x.set(r * 7 + c, xt.get(c * 5 + r));
      z.set(r * 7 + c, zbuf.get(r * 14 + 2 * c));
      EXPECT_EQ(zbuf.get(r * 14 + 2 * c + 1), -123.0) << "a gap of the strided output was written";
    }
  expect_matches(g, {x, y}, {z, s});
}

TEST_F(RuntimeApi, OutputsTheRuntimeAllocatesAndFilesWithWeights) {
  const std::string base = test::data_dir() + "/examples/mlp";
  kiln_graph_source src{};
  src.struct_size = sizeof(src);
  const std::string graph_path = base + ".json", weights_path = base + ".safetensors";
  src.graph_path = graph_path.c_str();
  src.weights_path = weights_path.c_str();
  ASSERT_OK(kiln_graph_compile(session_, &src, &graph_));
  auto g = load_graph(graph_path, registry_).value();
  ASSERT_TRUE(attach_weights(g, read_safetensors(weights_path).value(), weights_path));
  auto in = random_inputs(g);
  std::vector<std::vector<int64_t>> shapes(in.size());
  std::vector<DLTensor> tensors;
  for (size_t i = 0; i < in.size(); ++i) tensors.push_back(dl(in[i], shapes[i]));
  std::vector<const DLTensor*> ptrs;
  for (const DLTensor& t : tensors) ptrs.push_back(&t);
  std::vector<kiln_dl_managed_tensor*> outs(kiln_graph_num_outputs(graph_));
  // Closing the session first is allowed: the graph keeps what it needs.
  kiln_session_close(session_);
  session_ = nullptr;
  ASSERT_OK(kiln_graph_run_alloc(graph_, ptrs.data(), ptrs.size(), outs.data(), outs.size()));
  std::vector<HostTensor> actual;
  for (kiln_dl_managed_tensor* m : outs) {
    ASSERT_NE(m, nullptr);
    const DLTensor& t = m->dl_tensor;
    ASSERT_EQ(t.dtype.code, kDLFloat);
    const Shape sizes(t.shape, t.shape + t.ndim);
    const auto* bytes = static_cast<const std::byte*>(t.data);
    actual.push_back(
        HostTensor::from_bytes(DType::F32, sizes, {bytes, bytes + shape_numel(sizes) * 4}).value());
    m->deleter(m);
  }
  expect_matches(g, in, actual);
}

TEST_F(RuntimeApi, OneGraphRunFromSeveralThreads) {
  compile_text(kGraph);
  auto g = parse_graph(kGraph, "affine", registry_).value();
  constexpr int kThreads = 4, kRuns = 25;
  std::vector<std::vector<std::vector<HostTensor>>> ins(kThreads), outs(kThreads);
  for (int t = 0; t < kThreads; ++t)
    for (int r = 0; r < kRuns; ++r) {
      ins[t].push_back(random_inputs(g));
      outs[t].push_back(poisoned_outputs(g));
    }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) run(ins[t][r], outs[t][r]);
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t)
    for (int r = 0; r < kRuns; ++r) expect_matches(g, ins[t][r], outs[t][r]);
}

// A convolution whose reduction the ptx plugin splits into parts (conv_splits, cuDNN off):
// the parts' sums go through the plugin's scratch memory, shared by every stream of a device.
std::string split_conv_graph(int64_t batch) {
  const std::string n = std::to_string(batch);
  return R"({"format": "kiln.graph/1", "name": "conv)" + n + R"(",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [)" +
         n + R"(, 64, 12, 12]},
             {"name": "w", "dtype": "f32", "shape": [32, 64, 3, 3]}],
  "nodes": [{"name": "y", "op": "aten.convolution.default",
             "args": ["%x", "%w", null, [1, 1], [1, 1], [1, 1], false, [0, 0], 1]}],
  "outputs": ["%y"]})";
}

// Two graphs run from two threads with staged copies: each run's kernels go on a compute
// stream of its own, so the two graphs' convolutions may run at once on the GPU, and both
// borrow the same scratch memory; the plugin makes the streams take turns on it
// (plugins/ptx/device_scratch.h). Needs a CUDA device: skipped without one.
TEST_F(RuntimeApi, ScratchMemorySharedByTwoThreadsStreams) {
  const char* config =
      "plugins:\n  - name: ptx\n    options: { cudnn: 'off', conv_splits: 4 }\n"
      "devices: [cuda:0]\nrun: { staging: true }\nlog: { level: warn }\n";
  kiln_session_options o{};
  o.struct_size = sizeof(o);
  o.config_text = config;
  kiln_session* gpu = nullptr;
  ASSERT_OK(kiln_session_open(&o, &gpu));
  constexpr int kThreads = 2, kRuns = 20;
  std::vector<std::string> texts;
  std::vector<kiln_graph*> graphs(kThreads, nullptr);
  for (int t = 0; t < kThreads; ++t) {
    texts.push_back(split_conv_graph(3 + t));
    kiln_graph_source src{};
    src.struct_size = sizeof(src);
    src.graph_text = texts[t].c_str();
    src.graph_text_size = texts[t].size();
    auto e = take(kiln_graph_compile(gpu, &src, &graphs[t]));
    if (e && e->message.find("no loaded plugin serves any configured device (cuda:0)") !=
                 std::string::npos) {
      kiln_session_close(gpu);
      GTEST_SKIP() << "no CUDA device: " << e->message;
    }
    EXPECT_FALSE(e) << e->message;
  }
  std::vector<std::vector<std::vector<HostTensor>>> ins(kThreads), outs(kThreads);
  std::vector<Graph> parsed;
  for (int t = 0; t < kThreads; ++t) {
    parsed.push_back(parse_graph(texts[t], "conv", registry_).value());
    for (int r = 0; r < kRuns; ++r) {
      ins[t].push_back(random_inputs(parsed[t]));
      outs[t].push_back(poisoned_outputs(parsed[t]));
    }
  }
  if (graphs[0] && graphs[1]) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int r = 0; r < kRuns; ++r) run(ins[t][r], outs[t][r], graphs[t]);
      });
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t)
      for (int r = 0; r < kRuns; ++r) expect_matches(parsed[t], ins[t][r], outs[t][r]);
  }
  for (kiln_graph* g : graphs)
    if (g) kiln_graph_destroy(g);
  kiln_session_close(gpu);
}

// A float scatter sum: in deterministic mode its kernels sum in fixed point.
constexpr const char* kScatterGraph = R"({"format": "kiln.graph/1", "name": "scatter_add",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [16]},
             {"name": "v", "dtype": "f32", "shape": [300]},
             {"name": "i", "dtype": "i64", "shape": [300], "range": [0, 16]}],
  "nodes": [{"name": "y", "op": "aten.scatter_add.default", "args": ["%x", 0, "%i", "%v"]}],
  "outputs": ["%y"]})";

// The stats JSON of kScatterGraph compiled in a session opened with `o` ("" after a failure,
// which the test reports).
std::string scatter_stats(const kiln_session_options& o) {
  kiln_session* s = nullptr;
  if (kiln_runtime_error* e = kiln_session_open(&o, &s)) {
    ADD_FAILURE() << kiln_runtime_error_message(e);
    kiln_runtime_error_destroy(e);
    return "";
  }
  kiln_graph_source src{};
  src.struct_size = sizeof(src);
  src.graph_text = kScatterGraph;
  src.graph_text_size = std::strlen(kScatterGraph);
  kiln_graph* g = nullptr;
  std::string stats;
  if (kiln_runtime_error* e = kiln_graph_compile(s, &src, &g)) {
    ADD_FAILURE() << kiln_runtime_error_message(e);
    kiln_runtime_error_destroy(e);
  } else {
    stats = kiln_graph_stats_json(g);
    kiln_graph_destroy(g);
  }
  kiln_session_close(s);
  return stats;
}

TEST_F(RuntimeApi, DeterministicSessionsCompileInDeterministicMode) {
  for (int32_t asked : {0, 1}) {
    for (bool old_struct : {false, true}) {
      kiln_session_options o{sizeof(o), kConfig, nullptr, asked};
      // A 1.1 caller's struct ends before the field: whatever lies there is not read.
      if (old_struct) o.struct_size = offsetof(kiln_session_options, deterministic);
      const std::string stats = scatter_stats(o);
      const bool expected = asked && !old_struct;
      EXPECT_NE(stats.find(expected ? "\"deterministic\":true" : "\"deterministic\":false"),
                std::string::npos)
          << stats;
    }
  }
}

// The session's TF32 choices override the config's (0 keeps it); a 1.3 caller's struct,
// ending before them, keeps the config's; anything but -1, 0, 1 is refused by name.
TEST_F(RuntimeApi, SessionTf32ChoicesOverrideTheConfig) {
  const std::string config = std::string(kConfig) + "schedule: {conv_tf32: true}\n";
  struct Case {
    int32_t conv, matmul;
    bool old_struct, conv_expected, matmul_expected;
  };
  for (const Case& c : {Case{0, 0, false, true, false}, Case{-1, 1, false, false, true},
                        Case{-1, 1, true, true, false}, Case{1, -1, false, true, false}}) {
    kiln_session_options o{sizeof(o), config.c_str(), nullptr, 0, c.conv, c.matmul};
    // A 1.3 caller's struct: its size, padded after `deterministic` (what sizeof gave it).
    constexpr size_t kStruct13 = (offsetof(kiln_session_options, conv_tf32) + alignof(size_t) - 1) /
                                 alignof(size_t) * alignof(size_t);
    if (c.old_struct) o.struct_size = kStruct13;
    const std::string stats = scatter_stats(o);
    const auto flag = [](const char* name, bool on) {
      return std::string("\"") + name + "\":" + (on ? "true" : "false");
    };
    EXPECT_NE(stats.find(flag("conv_tf32", c.conv_expected)), std::string::npos) << stats;
    EXPECT_NE(stats.find(flag("matmul_tf32", c.matmul_expected)), std::string::npos) << stats;
  }
  kiln_session_options o{sizeof(o), kConfig, nullptr, 0, 2, 0};
  kiln_session* s = nullptr;
  auto e = take(kiln_session_open(&o, &s));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, KILN_RUNTIME_USER_ERROR);
  EXPECT_NE(e->message.find("conv_tf32 is 0 (the config's), 1 or -1, got 2"), std::string::npos)
      << e->message;
  EXPECT_EQ(s, nullptr);
}

TEST_F(RuntimeApi, BadInputIsAUserErrorThatSaysWhy) {
  {
    kiln_session* s = nullptr;
    kiln_session_options o{sizeof(o), "plugins: [", nullptr, 0};
    auto e = take(kiln_session_open(&o, &s));
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code, KILN_RUNTIME_USER_ERROR);
    EXPECT_NE(e->message.find("<config text>"), std::string::npos) << e->message;
    EXPECT_EQ(s, nullptr);
  }
  kiln_graph_source src{};
  src.struct_size = sizeof(src);
  src.graph_text = "{\"format\": \"kiln.graph/1\"";
  src.graph_text_size = std::strlen(src.graph_text);
  auto bad_graph = take(kiln_graph_compile(session_, &src, &graph_));
  ASSERT_TRUE(bad_graph);
  EXPECT_EQ(bad_graph->code, KILN_RUNTIME_USER_ERROR);
  EXPECT_EQ(graph_, nullptr);

  compile_text(kGraph);
  auto g = parse_graph(kGraph, "affine", registry_).value();
  auto in = random_inputs(g);
  auto out = poisoned_outputs(g);
  std::vector<int64_t> xs, ys, zs, ss;
  DLTensor dx = dl(in[0], xs), dy = dl(in[1], ys), dz = dl(out[0], zs), dsum = dl(out[1], ss);
  const DLTensor* ins[] = {&dx, &dy};
  const DLTensor* outs[] = {&dz, &dsum};
  auto expect_user_error = [&](const std::string& says) {
    auto e = take(kiln_graph_run(graph_, ins, 2, outs, 2));
    ASSERT_TRUE(e) << "expected an error saying " << says;
    EXPECT_EQ(e->code, KILN_RUNTIME_USER_ERROR);
    EXPECT_NE(e->message.find(says), std::string::npos) << e->message;
  };
  dx.dtype = {kDLFloat, 64, 1};
  expect_user_error("input 0 ('x') is f64[5, 7] but the graph says f32[5, 7]");
  dx.dtype = {kDLFloat, 32, 1};
  dy.device = {kDLCUDA, 0};
  expect_user_error("input 1: on DLPack device (type 2, id 0)");
  dy.device = {kDLCPU, 0};
  dsum.dtype = {kDLComplex, 64, 1};
  expect_user_error("output 1: DLPack dtype (code 5");
  dsum.dtype = {kDLFloat, 32, 1};
  auto e = take(kiln_graph_run(graph_, ins, 1, outs, 2));
  ASSERT_TRUE(e);
  EXPECT_NE(e->message.find("takes 2 inputs and 2 outputs, got 1 and 2"), std::string::npos)
      << e->message;
  e = take(kiln_graph_run(graph_, nullptr, 2, outs, 2));
  ASSERT_TRUE(e);
  EXPECT_NE(e->message.find("input is NULL"), std::string::npos) << e->message;
  // After all that, a good run still works.
  EXPECT_EQ(run(in, out), 0u);
  expect_matches(g, in, out);
}

TEST_F(RuntimeApi, SharedMemoryFromAnotherProcessIsUsedInPlace) {
  // An exporter's memfd holds the inputs and receives the outputs: imported at an offset, the
  // graph reads and writes it in place (nothing copied), and the exporter's own mapping of the
  // descriptor sees the results.
  compile_text(kGraph);
  auto g = parse_graph(kGraph, "affine", registry_).value();
  auto in = random_inputs(g);
  auto out = poisoned_outputs(g);
  std::vector<HostTensor*> all{&in[0], &in[1], &out[0], &out[1]};
  constexpr uint64_t kOffset = 4096 + 64;
  std::vector<uint64_t> at;
  uint64_t bytes = 0;
  for (HostTensor* t : all) {
    at.push_back(bytes);
    bytes += (t->bytes().size() + 63) / 64 * 64;
  }
  const int fd = memfd_create("kiln-runtime-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(kOffset + bytes)), 0);
  void* mapped = mmap(nullptr, kOffset + bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  auto* exporter = static_cast<std::byte*>(mapped) + kOffset;
  for (size_t i = 0; i < all.size(); ++i)
    std::memcpy(exporter + at[i], all[i]->bytes().data(), all[i]->bytes().size());
  kiln_shared_memory shared{sizeof shared, KILN_SHARED_MEMORY_POSIX_FD, fd, nullptr, 0, kOffset,
                            bytes};
  void* data = nullptr;
  ASSERT_OK(kiln_graph_import_memory(graph_, &shared, &data));
  close(fd);  // the import keeps its own mapping
  std::vector<std::vector<int64_t>> shapes(all.size());
  std::vector<DLTensor> tensors;
  for (size_t i = 0; i < all.size(); ++i) {
    DLTensor d = dl(*all[i], shapes[i]);
    d.data = static_cast<std::byte*>(data) + at[i];
    d.device = kiln_graph_device(graph_);
    tensors.push_back(d);
  }
  const DLTensor* ptrs[] = {&tensors[0], &tensors[1], &tensors[2], &tensors[3]};
  ASSERT_OK(kiln_graph_run(graph_, ptrs, 2, ptrs + 2, 2));
  EXPECT_EQ(kiln_graph_last_run_copied_bytes(graph_), 0u) << "imported memory is used in place";
  for (size_t o = 0; o < out.size(); ++o)
    std::memcpy(const_cast<std::byte*>(out[o].bytes().data()), exporter + at[2 + o],
                out[o].bytes().size());
  expect_matches(g, in, out);
  ASSERT_OK(kiln_graph_release_memory(graph_, data));
  auto again = take(kiln_graph_release_memory(graph_, data));
  ASSERT_TRUE(again) << "a second release of one import succeeded";
  EXPECT_NE(again->message.find("mem_release_import of an address mem_import did not return"),
            std::string::npos)
      << again->message;
  munmap(mapped, kOffset + bytes);
}

TEST_F(RuntimeApi, SharedMemoryErrorsSayWhy) {
  compile_text(kGraph);
  const unsigned char handle[64] = {};
  void* data = nullptr;
  kiln_shared_memory shared{sizeof shared, KILN_SHARED_MEMORY_CUDA_IPC, -1, handle, 64, 0, 64};
  const auto says = [&](const std::string& text) {
    auto e = take(kiln_graph_import_memory(graph_, &shared, &data));
    ASSERT_TRUE(e) << "expected an error saying " << text;
    EXPECT_NE(e->message.find(text), std::string::npos) << e->message;
    EXPECT_EQ(data, nullptr);
  };
  says("cpp_openmp imports KILN_MEM_HANDLE_POSIX_FD only, not handle type 2");
  shared.type = KILN_SHARED_MEMORY_POSIX_FD;
  says("mem_import: descriptor -1 is not open");
  shared.struct_size = 8;
  says("shared->struct_size is 8, not a kiln_shared_memory");
}

}  // namespace
}  // namespace kiln
