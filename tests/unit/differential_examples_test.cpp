// The example models, compiled by cpp_openmp, against the oracle: multi-op graphs with
// parameters, composites decomposed, matmuls as library calls.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/graph/graph_json.h"
#include "core/graph/safetensors.h"
#include "core/ops/op_registry.h"
#include "tests/unit/differential.h"
#include "tests/unit/test_paths.h"

namespace kiln::test {
namespace {

class CompiledExamples : public Differential, public ::testing::WithParamInterface<std::string> {};

TEST_P(CompiledExamples, MatchTheReference) {
  const std::string dir = data_dir() + "/examples/";
  auto graph = load_graph(dir + GetParam() + ".json", OpRegistry::create().value());
  ASSERT_TRUE(graph) << graph.error().to_string();
  const std::string weights = dir + GetParam() + ".safetensors";
  if (std::filesystem::exists(weights)) {
    auto w = read_safetensors(weights);
    ASSERT_TRUE(w) << w.error().to_string();
    ASSERT_TRUE(attach_weights(*graph, *w, weights));
  }
  const CompileStats st = check(*graph);
  EXPECT_GT(st.kernels, 0u);
  EXPECT_EQ(st.host_steps, 0u);
  // The arena never needs more than separate allocations; the transformer block reuses.
  EXPECT_LE(st.arena_bytes, st.naive_bytes);
  if (GetParam() == "transformer_block") {
    EXPECT_LT(st.arena_bytes, st.naive_bytes);
  }
}

INSTANTIATE_TEST_SUITE_P(All, CompiledExamples,
                         ::testing::Values("mlp", "transformer_block", "softmax", "layernorm",
                                           "rmsnorm", "cross_entropy"));

}  // namespace
}  // namespace kiln::test
