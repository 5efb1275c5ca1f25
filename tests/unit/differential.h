// Differential testing: a graph compiled by the cpp_openmp plugin against the reference
// interpreter (the oracle) on fresh random inputs, with every written buffer poisoned
// before the run, once fused and once with one kernel per node. Each test builds one graph with
// many outputs so that one compiler invocation covers many ops; a mismatch names the output (the
// node under test).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/cache/disk_cache.h"
#include "core/config/options.h"
#include "core/graph/builder.h"
#include "core/interp/oracle.h"
#include "core/runtime/compiled_graph.h"
#include "core/runtime/plugin.h"

namespace kiln::test {

using Range = std::pair<double, double>;

// Row-major strides of `sizes` laid out in the order `perm` (outermost first): a tensor
// of these strides is a transposed/permuted view of contiguous storage.
std::vector<int64_t> permuted_strides(const Shape& sizes, const std::vector<int>& perm);
// The type of a view of every `step`-th element along the last dim of a larger buffer.
TensorType sliced_type(DType dtype, const Shape& sizes, int64_t step);

class Differential : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();

  // A graph builder over the op registry, named after the test.
  GraphBuilder builder() const;
  // A graph input whose random values are drawn from `range` (dtype defaults otherwise).
  ValueRef input(GraphBuilder& b, const std::string& name, TensorType type,
                 std::optional<Range> range = std::nullopt);
  // Compiles the graph, runs it on fresh random inputs with poisoned outputs and compares
  // each output with the oracle (tolerance by dtype). Returns the compiled graph's stats.
  CompileStats check(GraphBuilder& b);
  // The same for a graph built elsewhere (inputs drawn from their declared ranges); `seed`
  // replays the inputs of an earlier check.
  CompileStats check(const Graph& graph, std::optional<uint64_t> seed = std::nullopt);
  // The range random values of input `name` are drawn from.
  void set_input_range(const std::string& name, Range range) { ranges_[name] = range; }
  // Compiles `graph` with `schedule` and runs it once on the inputs of the last check (its
  // seed); the outputs, or none after a reported failure.
  std::vector<HostTensor> run(const Graph& graph, const ScheduleOptions& schedule);
  // Compiles and runs; returns the run's error text ("" when it succeeded).
  std::string run_error(GraphBuilder& b);
  // Compiles `graph` for the suite's plugin (default schedule, or `schedule`).
  Result<CompiledGraph> compile(const Graph& graph);
  Result<CompiledGraph> compile(const Graph& graph, const ScheduleOptions& schedule);
  // The same with these options and cache.
  Result<CompiledGraph> compile(const Graph& graph, const ScheduleOptions& schedule,
                                const AutotuneOptions& autotune, const DiskCache& cache);
  // Whether the suite's plugin offers library call `name` for `dtype`.
  bool offers_extern(const std::string& name, DType dtype) const;
  // Whether the plugin lists `feature` for library call `name`.
  bool offers_extern_feature(const std::string& name, const std::string& feature) const;
  const Plugin& plugin() const;

  uint64_t seed() const { return seed_; }
  // Schedule options for the following checks (fusion is set by check itself).
  void set_schedule(const ScheduleOptions& s) { base_schedule_ = s; }
  // `graph` as loading it makes it (complex values become f32 pairs), what check takes.
  static Graph loaded(const Graph& graph);
  // The builder's graph, loaded.
  Graph finish(GraphBuilder& b);

 private:
  // Three runs through run_into with run.cuda_graphs (KILN_TEST_CUDA_GRAPHS=1), each checked.
  void expect_replays_match(CompiledGraph& compiled, const Graph& graph,
                            const std::vector<HostTensor>& inputs, const OracleResults& oracle);
  CompileStats run_and_compare(const Graph& graph, const std::vector<HostTensor>& inputs,
                               const OracleResults& oracle, const ScheduleOptions& schedule);
  void expect_matches(const Graph& graph, const OracleResults& oracle,
                      const std::vector<HostTensor>& actual);
  std::vector<HostTensor> random_inputs(const Graph& graph) const;

  std::map<std::string, Range> ranges_;
  ScheduleOptions base_schedule_;
  uint64_t seed_ = 0;
  int checks_ = 0;  // graphs checked so far by this test
  RandomState random_;
};

// Names a dtype-parameterized instance after its dtype ("f32").
struct DTypeName {
  template <class Info>
  std::string operator()(const Info& instance) const {
    return std::string(dtype_name(instance.param));
  }
};

// out = op(args...) named `label`, added as a graph output.
void output_of(GraphBuilder& b, const std::string& label, const std::string& op,
               std::vector<ArgValue> args, const Kwargs& kwargs = {});

}  // namespace kiln::test
