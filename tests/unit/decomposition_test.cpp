// Every composite op: its own reference and its decomposition into primitive ops agree on
// fresh random inputs (the decomposed graph is run by the same interpreter, op by op).
#include <gmock/gmock.h>

#include <cmath>
#include <set>

#include "core/graph/graph_json.h"
#include "core/interp/random_tensor.h"
#include "core/passes/decompose.h"
#include "op_test_util.h"

namespace kiln::test {
namespace {

struct Case {
  std::string op;
  std::string graph;  // kiln.graph/1 text whose output uses the op
};

std::string graph(const std::string& inputs, const std::string& node) {
  return R"({"format": "kiln.graph/1", "inputs": [)" + inputs + R"(], "nodes": [)" + node +
         R"(], "outputs": ["%y"]})";
}

std::string in(const std::string& name, const std::string& dtype, const std::string& shape,
               const std::string& range = "") {
  return R"({"name": ")" + name + R"(", "dtype": ")" + dtype + R"(", "shape": )" + shape +
         (range.empty() ? "" : R"(, "range": )" + range) + "}";
}

std::string node(const std::string& op, const std::string& args, const std::string& kwargs = "{}",
                 const std::string& out = "y") {
  return R"({"name": ")" + out + R"(", "op": ")" + op + R"(", "args": )" + args +
         R"(, "kwargs": )" + kwargs + "}";
}

// Multi-output composites: pick output k as "y".
std::string pick(const std::string& op, const std::string& args, int k) {
  return node(op, args, "{}", "n") + "," +
         node("aten.alias.default", "[\"%n." + std::to_string(k) + "\"]");
}

std::vector<Case> cases() {
  const std::string x = in("x", "f32", "[3, 5, 7]");
  const std::string m = in("m", "f32", "[6, 9]");
  return {
      {"aten.sum.default", graph(in("x", "i32", "[3, 4]"), node("aten.sum.default", R"(["%x"])"))},
      {"aten.prod.default",
       graph(in("x", "f32", "[2, 3]", "[0.5, 1.5]"), node("aten.prod.default", R"(["%x"])"))},
      {"aten.any.default", graph(in("x", "bool", "[5]"), node("aten.any.default", R"(["%x"])"))},
      {"aten.any.dim",
       graph(in("x", "bool", "[4, 3]"), node("aten.any.dim", R"(["%x", 1, true])"))},
      {"aten.mean.dim", graph(x, node("aten.mean.dim", R"(["%x", [0, -1], true])"))},
      {"aten.mean.default",
       graph(in("x", "bf16", "[4, 6]"), node("aten.mean.default", R"(["%x"])"))},
      {"aten.var.correction",
       graph(x, node("aten.var.correction", R"(["%x", [1]])", R"({"correction": 0})"))},
      {"aten.var.dim", graph(x, node("aten.var.dim", R"(["%x", [2], true, true])"))},
      {"aten.max.dim", graph(x, pick("aten.max.dim", R"(["%x", 1])", 1))},
      {"aten.min.dim", graph(x, pick("aten.min.dim", R"(["%x", -1, true])", 0))},
      {"aten._softmax.default", graph(x, node("aten._softmax.default", R"(["%x", 1, false])"))},
      {"aten._log_softmax.default",
       graph(in("x", "f16", "[4, 33]"), node("aten._log_softmax.default", R"(["%x", -1, false])"))},
      {"aten.softmax.int", graph(x, node("aten.softmax.int", R"(["%x", 2])"))},
      {"aten.log_softmax.int", graph(x, node("aten.log_softmax.int", R"(["%x", 0, "f64"])"))},
      {"aten.reshape.default", graph(x, node("aten.reshape.default", R"(["%x", [7, -1]])"))},
      {"aten.flatten.using_ints", graph(x, node("aten.flatten.using_ints", R"(["%x", 0, 1])"))},
      {"aten.transpose.int", graph(x, node("aten.transpose.int", R"(["%x", 0, 2])"))},
      {"aten.t.default", graph(m, node("aten.t.default", R"(["%m"])"))},
      {"aten.squeeze.default",
       graph(in("x", "f32", "[1, 3, 1]"), node("aten.squeeze.default", R"(["%x"])"))},
      {"aten.split.Tensor", graph(x, pick("aten.split.Tensor", R"(["%x", 3, 2])", 2))},
      {"aten.unbind.int", graph(x, pick("aten.unbind.int", R"(["%x", 1])", 4))},
      {"aten.arange.default", graph(x, node("aten.arange.default", R"([5])"))},
      {"aten.arange.start",
       graph(x, node("aten.arange.start", R"([2, 9])", R"({"dtype": "f32"})"))},
      {"aten.zeros.default", graph(x, node("aten.zeros.default", R"([[2, 3]])"))},
      {"aten.ones.default", graph(x, node("aten.ones.default", R"([[4]])", R"({"dtype": "i32"})"))},
      {"aten.zeros_like.default", graph(x, node("aten.zeros_like.default", R"(["%x"])"))},
      {"aten.ones_like.default",
       graph(x, node("aten.ones_like.default", R"(["%x"])", R"({"dtype": "bf16"})"))},
      {"aten.addmm.default",
       graph(m + "," + in("a", "f32", "[6, 4]") + "," + in("b", "f32", "[4, 9]"),
             node("aten.addmm.default", R"(["%m", "%a", "%b"])", R"({"beta": 0.5, "alpha": 2})"))},
      {"aten.matmul.default",
       graph(in("a", "f32", "[2, 1, 5, 3]") + "," + in("b", "f32", "[4, 3, 6]"),
             node("aten.matmul.default", R"(["%a", "%b"])"))},
      {"aten.linear.default",
       graph(x + "," + in("w", "f32", "[4, 7]") + "," + in("c", "f32", "[4]"),
             node("aten.linear.default", R"(["%x", "%w", "%c"])"))},
      {"aten.gelu.default",
       graph(x, node("aten.gelu.default", R"(["%x"])", R"({"approximate": "tanh"})"))},
      {"aten.silu.default",
       graph(in("x", "bf16", "[5, 5]"), node("aten.silu.default", R"(["%x"])"))},
      {"aten.square.default",
       graph(in("x", "i32", "[5]"), node("aten.square.default", R"(["%x"])"))},
      {"aten.dropout.default", graph(x, node("aten.dropout.default", R"(["%x", 0.1, false])"))},
      {"aten.contiguous.default", graph(x, node("aten.contiguous.default", R"(["%x"])"))},
      {"aten.nll_loss_forward.default",
       graph(m + "," + in("t", "i64", "[6]", "[-1, 9]") + "," + in("w", "f32", "[9]", "[0.5, 2]"),
             node("aten.nll_loss_forward.default", R"(["%m", "%t", "%w", 1, -1])", "{}", "n") +
                 "," + node("aten.add.Tensor", R"(["%n.0", "%n.1"])"))},
      {"aten.nll_loss.default", graph(m + "," + in("t", "i64", "[6]", "[0, 9]"),
                                      node("aten.nll_loss.default", R"(["%m", "%t", null, 0])"))},
      {"aten.cross_entropy_loss.default",
       graph(in("x", "bf16", "[6, 11]") + "," + in("t", "i64", "[6]", "[0, 11]"),
             node("aten.cross_entropy_loss.default", R"(["%x", "%t"])", R"({"reduction": 2})"))},
      {"aten.scaled_dot_product_attention.default",
       graph(in("q", "f32", "[2, 3, 5, 8]") + "," + in("k", "f32", "[2, 3, 6, 8]") + "," +
                 in("v", "f32", "[2, 3, 6, 4]") + "," + in("mask", "bool", "[5, 6]"),
             node("aten.scaled_dot_product_attention.default", R"(["%q", "%k", "%v", "%mask"])",
                  R"({"scale": 0.3})"))},
      {"aten.var_mean.correction",
       graph(x, pick("aten.var_mean.correction", R"(["%x", [1, 2]])", 0))},
      {"aten.std.correction",
       graph(x, node("aten.std.correction", R"(["%x"])", R"({"correction": 2, "keepdim": true})"))},
      {"aten.logsumexp.default", graph(x, node("aten.logsumexp.default", R"(["%x", [1]])"))},
      {"aten.stack.default", graph(m, node("aten.stack.default", R"([["%m", "%m", "%m"], -1])"))},
      {"aten.native_layer_norm.default",
       graph(x + "," + in("w", "f32", "[5, 7]") + "," + in("b", "f32", "[5, 7]"),
             pick("aten.native_layer_norm.default", R"(["%x", [5, 7], "%w", "%b", 1e-5])", 0))},
      {"aten.layer_norm.default",
       graph(in("x", "f16", "[4, 16]"), node("aten.layer_norm.default", R"(["%x", [16]])"))},
      {"aten._native_batch_norm_legit_no_training.default",
       graph(x + "," + in("rm", "f32", "[5]") + "," + in("rv", "f32", "[5]", "[0.5, 2]"),
             pick("aten._native_batch_norm_legit_no_training.default",
                  R"(["%x", null, null, "%rm", "%rv", 0.1, 1e-5])", 0))},
      {"aten._native_batch_norm_legit.default",
       graph(x + "," + in("w", "f32", "[5]") + "," + in("rm", "f32", "[5]") + "," +
                 in("rv", "f32", "[5]", "[0.5, 2]"),
             pick("aten._native_batch_norm_legit.default",
                  R"(["%x", "%w", null, "%rm", "%rv", false, 0.1, 1e-5])", 0))},
      {"aten._native_batch_norm_legit.no_stats",
       graph(x, pick("aten._native_batch_norm_legit.no_stats",
                     R"(["%x", null, null, true, 0.1, 1e-5])", 2))},
      {"aten.batch_norm.default",
       graph(x + "," + in("rm", "f32", "[5]") + "," + in("rv", "f32", "[5]", "[0.5, 2]"),
             node("aten.batch_norm.default",
                  R"(["%x", null, null, "%rm", "%rv", false, 0.1, 1e-5, false])"))},
      {"aten.native_group_norm.default",
       graph(in("x", "f32", "[2, 6, 5]") + "," + in("w", "f32", "[6]"),
             pick("aten.native_group_norm.default", R"(["%x", "%w", null, 2, 6, 5, 3, 1e-5])", 0))},
      {"aten._native_batch_norm_legit_functional.default",
       graph(x + "," + in("w", "f32", "[5]") + "," + in("rm", "f32", "[5]") + "," +
                 in("rv", "f32", "[5]", "[0.5, 2]"),
             pick("aten._native_batch_norm_legit_functional.default",
                  R"(["%x", "%w", null, "%rm", "%rv", true, 0.1, 1e-5])", 4))},
      {"aten.native_layer_norm_backward.default",
       graph(x + "," + in("dy", "f32", "[3, 5, 7]") + "," + in("mean", "f32", "[3, 5, 1]") + "," +
                 in("rstd", "f32", "[3, 5, 1]", "[0.5, 2]") + "," + in("w", "f32", "[7]"),
             pick("aten.native_layer_norm_backward.default",
                  R"(["%dy", "%x", [7], "%mean", "%rstd", "%w", null, [true, true, true]])", 0))},
      {"aten.native_group_norm_backward.default",
       graph(in("x", "f32", "[2, 6, 5]") + "," + in("dy", "f32", "[2, 6, 5]") + "," +
                 in("mean", "f32", "[2, 3]") + "," + in("rstd", "f32", "[2, 3]", "[0.5, 2]") + "," +
                 in("w", "f32", "[6]"),
             pick("aten.native_group_norm_backward.default",
                  R"(["%dy", "%x", "%mean", "%rstd", "%w", 2, 6, 5, 3, [true, true, true]])", 1))},
      // PyTorch's lazy conj and negation views on real tensors.
      {"aten._conj.default", graph(m, node("aten._conj.default", R"(["%m"])"))},
      {"aten._neg_view.default",
       graph(in("x", "i32", "[4, 3]", "[-9, 9]"), node("aten._neg_view.default", R"(["%x"])"))},
      // The DFTs as matrix products against their direct f64 sums: odd and even lengths,
      // inner and outer dims, both directions.
      {"kiln.rfft.default", graph(x, node("kiln.rfft.default", R"(["%x", 2, true])"))},
      {"kiln.rfft.default", graph(m, node("kiln.rfft.default", R"(["%m", 0, false])"))},
      {"kiln.cfft.default",
       graph(in("x", "f32", "[5, 6, 2]"), node("kiln.cfft.default", R"(["%x", 0, true])"))},
      {"kiln.cfft.default",
       graph(in("x", "f32", "[3, 7, 2]"), node("kiln.cfft.default", R"(["%x", -1, false])"))},
      {"kiln.irfft.default",
       graph(in("x", "f32", "[3, 10, 4, 2]"), node("kiln.irfft.default", R"(["%x", 1, 18])"))},
      {"kiln.irfft.default",
       graph(in("x", "f32", "[4, 5, 2]"), node("kiln.irfft.default", R"(["%x", -1, 9])"))},
  };
}

double tolerance(DType d) {
  switch (d) {
    case DType::F16:
      return 2e-3;
    case DType::BF16:
      return 1.6e-2;
    case DType::F32:
      return 2e-5;
    default:
      return 1e-9;
  }
}

TEST(Decomposition, EveryCompositeOpHasACase) {
  std::set<std::string> covered;
  for (const auto& c : cases()) covered.insert(c.op);
  for (const OpDef* def : registry()->all()) {
    if (!def->is_primitive()) {
      EXPECT_TRUE(covered.count(def->name)) << def->name << " has a decomposition but no test case";
    }
  }
}

TEST(Decomposition, AgreesWithTheCompositeReference) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.op);
    auto original = parse_graph(c.graph, c.op, registry());
    ASSERT_TRUE(original) << original.error().to_string();
    bool uses_op = false;
    for (const auto& n : original->nodes) uses_op = uses_op || n.op->name == c.op;
    ASSERT_TRUE(uses_op);
    auto primitive = decompose(*original, registry());
    ASSERT_TRUE(primitive) << primitive.error().to_string();
    for (const auto& n : primitive->nodes) EXPECT_TRUE(n.op->is_primitive()) << n.op->name;
    std::vector<HostTensor> inputs;
    for (size_t i = 0; i < original->inputs.size(); ++i) {
      const Value& v = original->value(original->inputs[i]);
      inputs.push_back(random_tensor(v.type, 1000 + i, v.random_range));
    }
    auto expected = interpret(*original, inputs);
    ASSERT_TRUE(expected) << expected.error().to_string();
    auto got = interpret(*primitive, inputs);
    ASSERT_TRUE(got) << got.error().to_string();
    const HostTensor& e = (*expected)[0];
    const HostTensor& g = (*got)[0];
    ASSERT_EQ(e.type(), g.type());
    const double tol = tolerance(e.dtype());
    for (int64_t i = 0; i < e.numel(); ++i) {
      const double a = e.get(i), b = g.get(i);
      if (std::isnan(a) || std::isinf(a)) {
        EXPECT_TRUE(std::isnan(a) ? std::isnan(b) : a == b) << "element " << i;
        continue;
      }
      ASSERT_NEAR(a, b, tol * std::max(1.0, std::fabs(a))) << "element " << i;
    }
  }
}

}  // namespace
}  // namespace kiln::test
