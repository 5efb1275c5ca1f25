#include "tests/unit/differential.h"

#include <spdlog/sinks/null_sink.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>

#include "core/cache/disk_cache.h"
#include "core/interp/compare.h"
#include "core/interp/interpreter.h"
#include "core/interp/oracle.h"
#include "core/interp/random_tensor.h"
#include "core/lower/matmul_kernel.h"
#include "core/ops/op_registry.h"
#include "core/passes/complex_lowering.h"
#include "core/runtime/compile.h"
#include "core/runtime/compiled_graph_cache.h"
#include "core/runtime/plugin_loader.h"
#include "core/support/logging.h"
#include "tests/unit/test_paths.h"

namespace kiln::test {
namespace {

// What every test of the suite shares: loading the plugin once keeps the suite fast.
struct Suite {
  std::shared_ptr<const OpRegistry> registry;
  Logging logging{LogLevels{}, std::make_shared<spdlog::sinks::null_sink_mt>()};
  std::shared_ptr<const Plugin> plugin;
  std::vector<PlacementTarget> helpers;  // run what `plugin` declines
  std::unique_ptr<DiskCache> cache;
};
std::unique_ptr<Suite>& suite() {
  static std::unique_ptr<Suite> instance;
  return instance;
}

// Fresh inputs every run; KILN_TEST_SEED replays a failure.
uint64_t fresh_seed() {
  if (const char* s = std::getenv("KILN_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) | rd();
}

// KILN_TEST_PLUGIN_OPTIONS="vector_width=4,threads=2": options for the plugin under test, so
// the suite covers every code shape an option selects (ctest runs it once per shape).
std::vector<PluginOption> test_plugin_options() {
  std::vector<PluginOption> options;
  const char* text = std::getenv("KILN_TEST_PLUGIN_OPTIONS");
  std::string rest = text ? text : "";
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string item = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      ADD_FAILURE() << "KILN_TEST_PLUGIN_OPTIONS: '" << item << "' is not key=value";
      continue;
    }
    // "flags=-O3 -march=x86-64-v3": a list, its items split at spaces.
    std::string value = item.substr(eq + 1);
    PluginOption option{item.substr(0, eq), {}, value.find(' ') != std::string::npos};
    for (size_t space; (space = value.find(' ')) != std::string::npos; value.erase(0, space + 1))
      option.values.push_back(value.substr(0, space));
    option.values.push_back(value);
    options.push_back(std::move(option));
  }
  const auto has = [&](const char* key) {
    return std::any_of(options.begin(), options.end(),
                       [&](const PluginOption& o) { return o.key == key; });
  };
  const char* plugin = std::getenv("KILN_TEST_PLUGIN");
  const bool cpu = !plugin || !*plugin || std::string(plugin) == "cpp_openmp";
  if (cpu && !has("header_cache"))
    options.push_back(PluginOption{"header_cache", {header_cache_dir()}, false});
#ifdef KILN_TEST_SANITIZED_KERNELS
  // The sanitizer build compiles the generated kernels at -O1 under the same sanitizers, so a
  // kernel that reads or writes out of bounds fails the suite instead of passing silently;
  // with KILN_TEST_PLAIN_KERNELS=1 without them (they compile 2.5x faster), for the suites
  // whose kernels the sanitized ones already cover.
  const char* plain = std::getenv("KILN_TEST_PLAIN_KERNELS");
  if (cpu && !has("flags")) {
    std::vector<std::string> flags = {"-O1", "-march=native", "-fopenmp"};
    if (!(plain && std::string(plain) == "1"))
      flags.insert(flags.end(), {"-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
                                 "-fno-omit-frame-pointer"});
    options.push_back(PluginOption{"flags", flags, true});
  }
#endif
  return options;
}

// KILN_TEST_KIR_DIR=DIR: each checked graph's stages (its KIR among them) are written under
// DIR/fused/N and DIR/unfused/N, for code generators checked without running them (amdgpu).
// A test that checks several graphs numbers them: `check` is its n-th check.
std::string kir_dump_dir(bool fusion, int check) {
  const char* dir = std::getenv("KILN_TEST_KIR_DIR");
  if (!dir || !*dir) return "";
  return std::string(dir) + (fusion ? "/fused/" : "/unfused/") + std::to_string(check);
}

}  // namespace

std::vector<int64_t> permuted_strides(const Shape& sizes, const std::vector<int>& perm) {
  std::vector<int64_t> strides(sizes.size(), 0);
  int64_t stride = 1;
  for (size_t i = perm.size(); i-- > 0;) {
    const auto d = static_cast<size_t>(perm[i]);
    strides[d] = stride;
    stride *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

TensorType sliced_type(DType dtype, const Shape& sizes, int64_t step) {
  TensorType t = TensorType::contiguous(dtype, sizes);
  int64_t stride = step;
  for (size_t i = sizes.size(); i-- > 0;) {
    t.strides[i] = stride;
    stride *= std::max<int64_t>(sizes[i], 1);
  }
  return t;
}

void Differential::SetUpTestSuite() {
  auto s = std::make_unique<Suite>();
  s->registry = OpRegistry::create().value();
  // KILN_TEST_PLUGIN runs the suite through another plugin (`ptx` on a GPU machine); its
  // kernels are then compiled fresh (no kernel cache).
  const char* other = std::getenv("KILN_TEST_PLUGIN");
  const std::string name = other && *other ? other : "cpp_openmp";
  const std::string dir = plugin_dir();
  auto plugin = load_plugin(PluginConfig{name, "", test_plugin_options()},
                            dir + "/kiln_" + name + ".so", s->logging);
  ASSERT_TRUE(plugin) << plugin.error().to_string();
  ASSERT_FALSE((*plugin)->devices().empty()) << "plugin " << name << " has no devices";
  s->plugin = *plugin;
  // KILN_TEST_HELPER_PLUGIN=cpp_openmp: a second plugin's device runs the kernels the first
  // one's `supports` declines (with KILN_TEST_PLUGIN_OPTIONS="decline=..." on kir_interpreter,
  // every graph of the suite then runs split across two plugins, copies planned between).
  // Placed by order, not cost: by cost the slow interpreter would hand every kernel over.
  const char* helper = std::getenv("KILN_TEST_HELPER_PLUGIN");
  if (helper && *helper) {
    std::vector<PluginOption> options;
    if (std::string(helper) == "cpp_openmp")
      options.push_back(PluginOption{"header_cache", {header_cache_dir()}, false});
    auto h = load_plugin(PluginConfig{helper, "", options},
                         dir + "/kiln_" + std::string(helper) + ".so", s->logging);
    ASSERT_TRUE(h) << h.error().to_string();
    ASSERT_FALSE((*h)->devices().empty()) << "plugin " << helper << " has no devices";
    s->helpers.push_back({*h, 0});
  }
  // Per build tree, so reruns hit the cache; the suite never depends on it being warm.
  const bool cached = !(other && *other) || !s->helpers.empty();
  s->cache = std::make_unique<DiskCache>(cached ? cache_dir() : "", int64_t{1} << 30,
                                         s->logging.get("cache"));
  suite() = std::move(s);
}

void Differential::TearDownTestSuite() {
  suite().reset();
}

GraphBuilder Differential::builder() const {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return GraphBuilder(suite()->registry, std::string(info->test_suite_name()) + "_" + info->name());
}

ValueRef Differential::input(GraphBuilder& b, const std::string& name, TensorType type,
                             std::optional<Range> range) {
  if (range) ranges_[name] = *range;
  return b.input(name, std::move(type));
}

Graph Differential::loaded(const Graph& graph) {
  auto lowered = lower_complex(graph);
  EXPECT_TRUE(lowered) << lowered.error().to_string();
  return lowered ? std::move(*lowered) : Graph{};
}

Graph Differential::finish(GraphBuilder& b) {
  auto graph = b.finish();
  EXPECT_TRUE(graph) << graph.error().to_string();
  return graph ? loaded(*graph) : Graph{};
}

std::vector<HostTensor> Differential::random_inputs(const Graph& graph) const {
  std::vector<HostTensor> inputs;
  for (ValueRef r : graph.inputs) {
    const Value& v = graph.value(r);
    const auto range = ranges_.find(v.name);
    // Seeded by name, so an input draws the same values in any graph that holds it.
    inputs.push_back(random_tensor(v.type, seed_ + 7919 * std::hash<std::string>{}(v.name),
                                   range == ranges_.end() ? v.random_range : range->second));
  }
  return inputs;
}

CompileStats Differential::check(GraphBuilder& b) {
  return check(finish(b));
}

CompileStats Differential::check(const Graph& graph, std::optional<uint64_t> seed) {
  seed_ = seed ? *seed : fresh_seed();
  SCOPED_TRACE("KILN_TEST_SEED=" + std::to_string(seed_));
  if (graph.outputs.empty()) {
    ADD_FAILURE() << "the graph has no outputs";
    return {};
  }
  const std::vector<HostTensor> inputs = random_inputs(graph);
  // Random ops draw from a state of the test's seed (both words nonzero), the same for the
  // oracle and the compiled graph.
  random_ = {seed_, seed_ % 1000 + 1};
  auto expected = run_oracle(graph, inputs, random_);
  if (!expected) {
    ADD_FAILURE() << "oracle: " << expected.error().to_string();
    return {};
  }
  ++checks_;
  // Fused (the default) and one kernel per node: both schedules must compute the same.
  CompileStats fused;
  for (const bool fusion : {true, false}) {
    SCOPED_TRACE(fusion ? "fused" : "unfused");
    ScheduleOptions schedule = base_schedule_;
    schedule.fusion = fusion;
    const auto stats = run_and_compare(graph, inputs, *expected, schedule);
    if (fusion) fused = stats;
  }
  return fused;
}

void Differential::expect_matches(const Graph& graph, const OracleResults& oracle,
                                  const std::vector<HostTensor>& actual) {
  const std::vector<HostTensor>& expected = oracle.expected;
  EXPECT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < std::min(actual.size(), expected.size()); ++i) {
    const HostTensor& a = actual[i];
    const HostTensor& e = expected[i];
    const std::string name = graph.value(graph.outputs[i]).name;
    if (a.dtype() != e.dtype() || a.sizes() != e.sizes()) {
      ADD_FAILURE() << name << ": got " << a.type().to_string() << ", expected "
                    << e.type().to_string();
      continue;
    }
    const Comparison c = oracle.compare(i, a);
    EXPECT_TRUE(c.ok()) << name << " (" << e.type().to_string() << "): " << c.mismatches
                        << " mismatches, first at element " << c.first_mismatch << ": got "
                        << a.get(c.first_mismatch) << ", expected " << e.get(c.first_mismatch)
                        << " (max abs error " << c.max_abs << ")";
  }
}

CompileStats Differential::run_and_compare(const Graph& graph,
                                           const std::vector<HostTensor>& inputs,
                                           const OracleResults& oracle,
                                           const ScheduleOptions& schedule) {
  Suite& s = *suite();
  auto compiled = compile_for_device(graph, s.registry, s.plugin, 0, *s.cache, s.logging,
                                     kir_dump_dir(schedule.fusion, checks_), schedule, {},
                                     s.helpers, PlacementPolicy::Order);
  if (!compiled) {
    ADD_FAILURE() << compiled.error().to_string();
    return {};
  }
  // The cache's checks must accept every program kiln makes, or its entries would never be
  // used again.
  auto decoded = decode_compiled_graph(
      encode_compiled_graph(compiled->graph(), compiled->program(), {}), s.registry);
  EXPECT_TRUE(decoded) << "the compiled-graph cache refuses this program: "
                       << (decoded ? "" : decoded.error().to_string());
  // KILN_TEST_STAGING=1: inputs and outputs through the plugin's page-locked memory and
  // streams (run.staging), and a second, warm run (buffers and page-locked memory reused).
  const char* staging = std::getenv("KILN_TEST_STAGING");
  const bool staged = staging && std::string(staging) == "1";
  compiled->set_staging(staged);
  for (const bool poison : {true, false}) {
    if (!poison && !staged) break;
    SCOPED_TRACE(poison ? "poisoned run" : "warm run");
    RunOptions options;
    options.poison = poison;
    options.random = random_;
    auto actual = compiled->run(inputs, options);
    if (!actual) {
      ADD_FAILURE() << actual.error().to_string();
      return {};
    }
    expect_matches(graph, oracle, *actual);
  }
  // KILN_TEST_CUDA_GRAPHS=1: three more runs through run_into on the same memory with
  // run.cuda_graphs, outputs poisoned each time: the first is plain, the second records and
  // replays, the third replays.
  const char* graphs = std::getenv("KILN_TEST_CUDA_GRAPHS");
  if (graphs && std::string(graphs) == "1") expect_replays_match(*compiled, graph, inputs, oracle);
  return compiled->stats();
}

void Differential::expect_replays_match(CompiledGraph& compiled, const Graph& graph,
                                        const std::vector<HostTensor>& inputs,
                                        const OracleResults& oracle) {
  compiled.set_cuda_graphs(true);
  std::vector<HostTensor> ins;
  std::vector<TensorRef> in_refs;
  for (const HostTensor& t : inputs) {
    ins.push_back(t.contiguous());
    in_refs.push_back({const_cast<std::byte*>(ins.back().bytes().data()),
                       TensorType::contiguous(t.dtype(), t.sizes()), false});
  }
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE("run_into " + std::to_string(run) + " with cuda_graphs");
    compiled.set_random_seed(random_.seed, random_.call);
    std::vector<HostTensor> outs;
    std::vector<TensorRef> out_refs;
    for (ValueRef r : graph.outputs) {
      const TensorType& t = graph.type(r);
      HostTensor out = HostTensor::zeros(t.dtype, t.sizes);
      auto* bytes = const_cast<std::byte*>(out.bytes().data());
      std::memset(bytes, 0x7F, out.bytes().size());
      out_refs.push_back({bytes, TensorType::contiguous(t.dtype, t.sizes), false});
      outs.push_back(std::move(out));
    }
    if (auto s = compiled.run_into(in_refs, out_refs); !s) {
      ADD_FAILURE() << s.error().to_string();
      return;
    }
    expect_matches(graph, oracle, outs);
  }
  // Every plan of kernels on a device that records is recorded once and replayed twice, and
  // never fails to record; the others say why they are never recorded.
  const ReplayStats stats = compiled.replay_stats();
  if (!stats.not_recordable.empty())
    std::fprintf(stderr, "not recorded: %s\n", stats.not_recordable.c_str());
  EXPECT_EQ(stats.failed_recordings, 0) << stats.refused;
  EXPECT_TRUE(stats.replays == 2 || !stats.not_recordable.empty())
      << stats.replays << " replays, " << stats.captures << " recordings";
}

Result<CompiledGraph> Differential::compile(const Graph& graph, const ScheduleOptions& schedule) {
  Suite& s = *suite();
  return compile_for_device(graph, s.registry, s.plugin, 0, *s.cache, s.logging, "", schedule, {},
                            s.helpers, PlacementPolicy::Order);
}

std::vector<HostTensor> Differential::run(const Graph& graph, const ScheduleOptions& schedule) {
  auto compiled = compile(graph, schedule);
  if (!compiled) {
    ADD_FAILURE() << compiled.error().to_string();
    return {};
  }
  RunOptions options;
  options.poison = true;
  options.random = random_;
  auto outputs = compiled->run(random_inputs(graph), options);
  if (!outputs) {
    ADD_FAILURE() << outputs.error().to_string();
    return {};
  }
  return std::move(*outputs);
}

Result<CompiledGraph> Differential::compile(const Graph& graph) {
  Suite& s = *suite();
  return compile_for_device(graph, s.registry, s.plugin, 0, *s.cache, s.logging, "", {}, {},
                            s.helpers, PlacementPolicy::Order);
}

Result<CompiledGraph> Differential::compile(const Graph& graph, const ScheduleOptions& schedule,
                                            const AutotuneOptions& autotune,
                                            const DiskCache& cache) {
  Suite& s = *suite();
  return compile_for_device(graph, s.registry, s.plugin, 0, cache, s.logging, "", schedule,
                            autotune, s.helpers, PlacementPolicy::Order);
}

bool Differential::offers_extern(const std::string& name, DType dtype) const {
  return extern_available(extern_names(*suite()->plugin), name, dtype);
}

bool Differential::offers_extern_feature(const std::string& name,
                                         const std::string& feature) const {
  return extern_has_feature(extern_names(*suite()->plugin), name, feature);
}

const Plugin& Differential::plugin() const {
  return *suite()->plugin;
}

std::string Differential::run_error(GraphBuilder& b) {
  seed_ = fresh_seed();
  const Graph graph = finish(b);
  Suite& s = *suite();
  auto compiled = compile_for_device(graph, s.registry, s.plugin, 0, *s.cache, s.logging, "", {},
                                     {}, s.helpers, PlacementPolicy::Order);
  if (!compiled) return "compile: " + compiled.error().to_string();
  auto actual = compiled->run(random_inputs(graph));
  return actual ? "" : actual.error().to_string();
}

void output_of(GraphBuilder& b, const std::string& label, const std::string& op,
               std::vector<ArgValue> args, const Kwargs& kwargs) {
  auto outs = b.try_ops(op, std::move(args), kwargs, label);
  if (!outs) {
    ADD_FAILURE() << label << ": " << outs.error().to_string();
    return;
  }
  for (ValueRef r : *outs) b.output(r);
}

}  // namespace kiln::test
