// Schemas parse, the registry builds, and every op of the covered categories of the Core
// ATen table is supported, except the ones listed here with the reason.
#include <gmock/gmock.h>

#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "core/graph/schema.h"
#include "core/ops/schemas/schema_tables.h"
#include "core/ops/unsupported_ops.h"
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

// Every Core ATen op kiln does not implement has its reason listed (core/ops/unsupported_ops),
// and no implemented op has one: a regression or a silent addition fails here.
TEST(Registry, SupportsEveryCoreAtenOpButTheListedOnes) {
  const std::vector<std::string> core = core_aten_ops();
  int unsupported = 0, by_nature = 0;
  for (const std::string& name : core) {
    const Unsupported why = unsupported_reason(name);
    if (registry()->find(name) != nullptr) {
      EXPECT_TRUE(why.reason.empty()) << name << " is listed as unsupported but is registered";
    } else {
      ++unsupported;
      by_nature += why.by_nature ? 1 : 0;
      EXPECT_FALSE(why.reason.empty()) << name << " is not supported and not listed";
    }
  }
  EXPECT_EQ(core.size(), 193u);
  EXPECT_EQ(unsupported, 8);
  EXPECT_EQ(by_nature, 8);  // the FFTs run since complex lowering
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
