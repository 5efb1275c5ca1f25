// kir/1: the canonical text round-trips through parse and print, every example's kernels
// included; malformed text is refused with the line and the reason; the hash is of the text.
#include <gtest/gtest.h>

#include <string>

#include "core/graph/graph_json.h"
#include "core/kir/kir_emit.h"
#include "core/kir/kir_hash.h"
#include "core/ops/op_registry.h"
#include "core/sched/schedule_graph.h"
#include "kiln/kir.hpp"
#include "tests/unit/test_paths.h"

namespace kiln::test {
namespace {

// Every op kind, a masked load, a reduction with Welford extracts, a scan, an extern with attrs.
const char* const kAllForms = R"(kir/1
kernel k0 pointwise
  buffer in0 f32 35 in
  buffer in1 i64 7 in
  buffer out0 f16 35 out
  ranges 5 7
  %0 = load f32 in0[x0 * 7 + x1]
  %1 = index i64 x1 + -2
  %2 = const i64 0
  %3 = ge bool %1, %2
  %4 = load f32 in0[max(x1 + -2, 0) + x0 * 7] mask %3 other -inf
  %5 = load i64 in1[x1]
  %6 = check_index i64 %5 7
  %7 = where f32 %3, %0, %4
  %8 = cast f16 %7
  store out0[x0 * 7 + x1 floordiv 1 + (x1 mod 7) * 0] %8 mask %3
end
kernel k1 reduction
  buffer in0 f32 1001 in
  buffer out0 f32 7 out
  buffer out1 f32 7 out
  ranges 7
  reduce 143
  %0 = load f32 in0[x0 * 143 + r0]
  %1 = reduce welford f32 %0
  %2 = extract f32 %1 0
  %3 = extract f32 %1 1
  %4 = const f32 1.5e-05
  %5 = add f32 %3, %4
  %6 = rsqrt f32 %5
  store out0[x0] %2
  store out1[x0] %6
end
kernel k3 reduction
  buffer in0 f32 12 in
  buffer out0 f32 12 out
  ranges 3
  reduce 4
  %0 = load f32 in0[x0 * 4 + r0]
  %1 = scan prod f32 %0
  store out0[x0 * 4 + r0] %1
end
kernel k2 extern mm
  buffer in0 f32 12 in
  buffer in1 f32 20 in
  buffer out0 f32 15 out
  attr m 3
  attr n 5
  attr k 4
end
)";

TEST(KirText, EveryFormRoundTrips) {
  const kir::ParseResult parsed = kir::parse(kAllForms);
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  ASSERT_EQ(parsed.kernels.size(), 4u);
  EXPECT_EQ(parsed.kernels[1].reduction_ranges, std::vector<int64_t>{143});
  EXPECT_EQ(parsed.kernels[2].body[1].kind, kir::OpKind::Scan);
  EXPECT_EQ(parsed.kernels[2].body[1].name, "prod");
  EXPECT_EQ(parsed.kernels[3].extern_name, "mm");
  EXPECT_EQ(parsed.kernels[0].body[4].other, "-inf");
  const std::string printed = kir::print(parsed.kernels);
  const kir::ParseResult again = kir::parse(printed);
  ASSERT_TRUE(again.ok()) << again.error << "\n" << printed;
  EXPECT_EQ(kir::print(again.kernels), printed);
}

TEST(KirText, ExampleKernelsRoundTripCanonically) {
  auto registry = OpRegistry::create();
  ASSERT_TRUE(registry);
  for (const char* name :
       {"mlp", "transformer_block", "softmax", "layernorm", "rmsnorm", "cross_entropy"}) {
    SCOPED_TRACE(name);
    auto graph = load_graph(data_dir() + "/examples/" + name + ".json", *registry);
    ASSERT_TRUE(graph) << graph.error().to_string();
    auto scheduled = schedule_graph(*graph, *registry, {});  // the fused kernels the core emits
    ASSERT_TRUE(scheduled) << scheduled.error().to_string();
    const std::vector<kir::Kernel> kernels = emit_kir_kernels(scheduled->program);
    ASSERT_FALSE(kernels.empty());
    const std::string text = kir::print(kernels);
    const kir::ParseResult parsed = kir::parse(text);
    ASSERT_TRUE(parsed.ok()) << parsed.error << "\n" << text;
    EXPECT_EQ(kir::print(parsed.kernels), text);
    EXPECT_EQ(kir_hash(kir::print(parsed.kernels)), kir_hash(text));
  }
}

struct BadText {
  const char* text;
  const char* error;
};

class KirParseErrors : public ::testing::TestWithParam<BadText> {};

TEST_P(KirParseErrors, NameTheLineAndTheReason) {
  const kir::ParseResult parsed = kir::parse(GetParam().text);
  EXPECT_FALSE(parsed.ok());
  EXPECT_TRUE(parsed.kernels.empty());
  EXPECT_EQ(parsed.error, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    All, KirParseErrors,
    ::testing::Values(
        BadText{"", "line 0: empty text; expected the header 'kir/1'"},
        BadText{"kir/2\n", "line 1: expected the header 'kir/1'"},
        BadText{"kir/1\nkernel k0 sideways\nend\n", "line 2: unknown kernel kind 'sideways'"},
        BadText{"kir/1\nkernel k0 extern\nend\n", "line 2: an extern kernel names its call"},
        BadText{"kir/1\nkernel k0 pointwise\n  ranges 4\n", "line 3: kernel k0 has no 'end'"},
        BadText{"kir/1\nkernel k0 pointwise\n  buffer in0 f33 4 in\nend\n",
                "line 3: expected 'buffer NAME DTYPE ELEMENTS ROLE'"},
        BadText{"kir/1\nkernel k0 pointwise\n  buffer in0 f32 4 sideways\nend\n",
                "line 3: unknown buffer role 'sideways'"},
        BadText{"kir/1\nkernel k0 pointwise\n  ranges 4 -1\nend\n", "line 3: a range is negative"},
        BadText{"kir/1\nkernel k0 pointwise\n  buffer in0 f32 4 in\n  ranges 4\n"
                "  %0 = load f32 in0[x0\nend\n",
                "line 5: bad load"},
        BadText{"kir/1\nkernel k0 pointwise\n  ranges 4\n  %0 = add f32 %1, %1\nend\n",
                "line 5: kernel k0: %1 is used before it is defined"},
        BadText{"kir/1\nkernel k0 pointwise\n  ranges 4\n  %0 = const f32 1\n"
                "  %0 = const f32 2\nend\n",
                "line 6: kernel k0: %0 is defined twice"},
        BadText{"kir/1\nkernel k0 pointwise\n  buffer in0 f32 4 in\n  ranges 4\n"
                "  %0 = load f32 in0[x1]\nend\n",
                "line 6: kernel k0: index names an unknown variable"},
        BadText{"kir/1\nkernel k0 pointwise\n  ranges 4\n  %0 = load f32 nope[x0]\nend\n",
                "line 5: kernel k0: unknown buffer 'nope'"},
        BadText{"kir/1\nkernel k0 pointwise\n  buffer in0 f32 4 in\n  ranges 4\n"
                "  %0 = load f32 in0[x0] mask %0\nend\n",
                "line 5: a masked load needs 'mask %N other VALUE'"},
        BadText{"kir/1\nkernel k0 pointwise\n  ranges 4\n  %0 = const f32 one\nend\n",
                "line 4: bad constant"},
        BadText{"kir/1\nkernel k0 pointwise\n  ranges 4\n  %0 = const f32 1 2\nend\n",
                "line 4: unexpected text at the end of the line"},
        BadText{"kir/1\nkernel k0 pointwise\n  attr m x\nend\n",
                "line 3: expected 'attr NAME INTEGER'"},
        BadText{"kir/1\nkernel k0 pointwise\nend extra\n", "line 3: unexpected text after 'end'"},
        BadText{"kir/1\nkernel k0 pointwise\n  ranges 4\n  %0 = const f32 1\n"
                "  %1 = scan sum f32 %0\nend\n",
                "line 6: kernel k0: only reduction kernels scan"},
        BadText{"kir/1\nkernel k0 reduction\n  ranges 4\n  reduce 2\n  %0 = const f32 1\n"
                "  %1 = scan mean f32 %0\nend\n",
                "line 7: kernel k0: unknown scan kind 'mean'"},
        BadText{"kir/1\nkernel k0 reduction\n  ranges 4\n  reduce 2\n  %0 = const f32 1\n"
                "  %1 = scan sum f32 %0\n  %2 = reduce sum f32 %1\nend\n",
                "line 8: kernel k0: a kernel that scans has no reduce"},
        BadText{"kir/1\nkernel k0 reduction\n  ranges 4\n  reduce 2\n  %0 = scan f32 %0\nend\n",
                "line 5: bad dtype '%0'"},
        BadText{"kir/1\nkernel k0 pointwise\n  ranges 99999999999999999999\nend\n",
                "line 3: unexpected text at the end of the line"}));

TEST(KirHash, Is128BitsOfTheText) {
  const std::string a = kir_hash(kAllForms);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(kir_hash(kAllForms), a);
  std::string changed = kAllForms;
  changed.replace(changed.find("1.5e-05"), 7, "1.6e-05");
  EXPECT_NE(kir_hash(changed), a);
}

}  // namespace
}  // namespace kiln::test
