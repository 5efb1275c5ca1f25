// Schemas parse, the registry builds, and every op of the covered categories of the Core
// ATen table is supported, except the ones listed here with the reason.
#include <gmock/gmock.h>

#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "core/graph/schema.h"
#include "core/ops/schemas/schema_tables.h"
#include "op_test_util.h"

namespace kiln::test {
namespace {

TEST(Schema, ParsesArgumentKindsDefaultsAndReturns) {
  auto s = parse_schema(
      "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> "
      "Tensor");
  ASSERT_TRUE(s) << s.error().to_string();
  EXPECT_EQ(s->op, "aten.mean.dim");
  ASSERT_EQ(s->args.size(), 4u);
  EXPECT_TRUE(s->args[1].is_list && s->args[1].optional && s->args[1].list_size == 1);
  EXPECT_EQ(*s->args[2].default_value, ArgValue{false});
  EXPECT_TRUE(s->args[3].kwarg_only && s->args[3].optional);
  auto idx = parse_schema("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor");
  ASSERT_TRUE(idx);
  EXPECT_TRUE(idx->args[1].is_list && idx->args[1].element_optional && !idx->args[1].optional);
  auto multi = parse_schema(
      "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  EXPECT_EQ(multi->num_outputs, 2);
  auto list = parse_schema(
      "split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]");
  EXPECT_TRUE(list->returns_list);
  auto mutated =
      parse_schema("atan2.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  EXPECT_TRUE(mutated->args[2].mutated);
  auto gelu = parse_schema("gelu(Tensor self, *, str approximate='none') -> Tensor");
  EXPECT_EQ(*gelu->args[1].default_value, ArgValue{std::string("none")});
  auto pool = parse_schema(
      "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] "
      "padding=0) -> (Tensor, Tensor)");
  EXPECT_EQ(*pool->args[3].default_value, (ArgValue{IntList{0, 0}}));
  EXPECT_FALSE(parse_schema("no parenthesis -> Tensor"));
}

TEST(Registry, EverySchemaInTheTablesParses) {
  // OpRegistry::create parses all 193 core rows and the extra rows; failure would stop it.
  EXPECT_GE(registry()->schemas().size(), 193u + 30u);
}

// Every Core ATen op that kiln does not support yet, by reason. Every other op of the table
// (all categories) is registered: a regression or a silent addition fails here.
const std::map<std::string, std::string> kNotSupported = {
    {"aten.nonzero.default", "its output shape depends on the data"},
    {"aten.rand.default", "random number generation"},
    {"aten.randn.default", "random number generation"},
    {"aten.randperm.default", "random number generation"},
    {"aten.native_dropout.default", "random number generation"},
    {"aten.grid_sampler_2d.default", "not implemented yet"},
    {"aten._fft_r2c.default", "complex dtypes"},
    {"aten._fft_c2r.default", "complex dtypes"},
    {"aten._local_scalar_dense.default", "a host value: data-dependent control flow"},
    {"aten.resize_.default", "mutates a tensor's shape"},
    {"aten.sym_size.int", "symbolic shapes"},
    {"aten.sym_stride.int", "symbolic shapes"},
    {"aten.sym_numel.default", "symbolic shapes"},
    {"aten.sym_storage_offset.default", "symbolic shapes"},
    {"aten.sym_is_contiguous.default", "symbolic shapes"},
};

// The op names of the Core ATen table (the first column; the first line is a header).
std::vector<std::string> core_aten_ops() {
  std::vector<std::string> names;
  std::string_view table = kCoreAtenSchemas;
  table.remove_prefix(table.find('\n') + 1);
  while (!table.empty()) {
    const std::string_view line = table.substr(0, table.find('\n'));
    table.remove_prefix(std::min(table.size(), line.size() + 1));
    if (!line.empty()) names.emplace_back(line.substr(0, line.find('\t')));
  }
  return names;
}

TEST(Registry, SupportsEveryCoreAtenOpButTheListedOnes) {
  const std::vector<std::string> core = core_aten_ops();
  int supported = 0, unsupported = 0;
  for (const std::string& name : core) {
    if (registry()->find(name) != nullptr) {
      ++supported;
      EXPECT_EQ(kNotSupported.count(name), 0u)
          << name << " is listed as unsupported but is registered";
    } else {
      ++unsupported;
      EXPECT_EQ(kNotSupported.count(name), 1u) << name << " is not supported and not listed";
    }
  }
  EXPECT_EQ(core.size(), 193u);
  EXPECT_EQ(unsupported, static_cast<int>(kNotSupported.size()));
  EXPECT_EQ(supported, 193 - static_cast<int>(kNotSupported.size()));
}

TEST(Registry, ConvAndPoolHaveInferenceAndReference) {
  for (const char* op :
       {"aten.convolution.default", "aten.avg_pool2d.default",
        "aten.max_pool2d_with_indices.default", "aten._adaptive_avg_pool2d.default"}) {
    EXPECT_NE(registry()->find(op), nullptr) << op;
  }
}

}  // namespace
}  // namespace kiln::test
