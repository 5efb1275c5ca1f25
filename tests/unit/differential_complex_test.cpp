// Complex values: the FFTs (one and several dims, every normalisation, odd and even lengths,
// strided inputs) and the complex arithmetic and views complex lowering rewrites, compiled
// against the reference; the lowering's arithmetic against std::complex; and the errors a
// complex value meets where kiln has no complex form.
#include <gtest/gtest.h>

#include <complex>

#include "core/interp/interpreter.h"
#include "core/interp/random_tensor.h"
#include "core/ops/complex_forms.h"
#include "core/ops/op_registry.h"
#include "core/passes/complex_lowering.h"
#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

TensorType c64(Shape sizes) {
  return TensorType::contiguous(DType::C64, std::move(sizes));
}

class CompiledComplex : public Differential {};

TEST_F(CompiledComplex, FftsAreKernels) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {3, 37, 5}));
  const ValueRef xt = input(b, "xt", TensorType{DType::F32, {6, 9}, {1, 6}});  // transposed
  const ValueRef z = b.op("aten.view_as_complex.default",
                          {input(b, "pairs", TensorType::contiguous(DType::F32, {4, 10, 2}))});
  const auto fft = [&](const std::string& op, std::vector<ArgValue> args) {
    return b.op(op, std::move(args));
  };
  const ValueRef half = fft("aten._fft_r2c.default", {x, IntList{1}, int64_t{0}, true});
  b.output(b.op("aten.view_as_real.default", {half}));
  b.output(b.op("aten.view_as_real.default",
                {fft("aten._fft_r2c.default", {x, IntList{2, 0}, int64_t{1}, false})}));
  b.output(b.op("aten.view_as_real.default",
                {fft("aten._fft_r2c.default", {xt, IntList{-1}, int64_t{2}, true})}));
  b.output(fft("aten._fft_c2c.default", {z, IntList{1}, int64_t{0}, true}));  // a complex output
  b.output(fft("aten._fft_c2c.default", {z, IntList{0, 1}, int64_t{2}, false}));
  // Round trips: odd (37) and even (36) lengths from the same 19 values.
  b.output(fft("aten._fft_c2r.default", {half, IntList{1}, int64_t{2}, int64_t{37}}));
  b.output(fft("aten._fft_c2r.default", {half, IntList{1}, int64_t{0}, int64_t{36}}));
  b.output(fft("aten._fft_c2r.default", {z, IntList{0, 1}, int64_t{1}, int64_t{18}}));
  // Fewer outputs than values given: the first 4 of 10 are used.
  b.output(fft("aten._fft_c2r.default", {z, IntList{-1}, int64_t{0}, int64_t{7}}));
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "FFTs run as kernels";
}

TEST_F(CompiledComplex, ArithmeticAndViews) {
  GraphBuilder b = builder();
  const ValueRef u = b.op("aten.view_as_complex.default",
                          {input(b, "u", TensorType::contiguous(DType::F32, {5, 7, 2}))});
  const ValueRef v = b.op("aten.view_as_complex.default",
                          {input(b, "v", TensorType::contiguous(DType::F32, {7, 2}), Range{1, 2})});
  const ValueRef r = input(b, "r", TensorType{DType::F32, {5, 7}, {1, 5}});
  const ValueRef h = input(b, "h", TensorType::contiguous(DType::F16, {7}));
  const auto real = [&](ValueRef c) { return b.op("aten.view_as_real.default", {c}); };
  b.output(real(b.op("aten.mul.Tensor", {u, v})));  // broadcast
  b.output(real(b.op("aten.mul.Tensor", {u, r})));
  b.output(real(b.op("aten.mul.Tensor", {u, -1.5})));
  b.output(real(b.op("aten.div.Tensor", {u, v})));
  b.output(real(b.op("aten.div.Tensor", {r, v})));
  b.output(real(b.op("aten.div.Tensor", {u, h})));
  b.output(real(b.op("aten.add.Tensor", {u, v}, {{"alpha", 2.0}})));
  b.output(real(b.op("aten.add.Tensor", {u, 0.25})));
  b.output(real(b.op("aten.sub.Tensor", {r, u})));
  b.output(b.op("aten.abs.default", {u}));
  b.output(real(b.op("aten._conj.default", {u})));
  b.output(real(b.op("aten.neg.default", {u})));
  b.output(real(b.op("aten.sum.dim_IntList", {u, IntList{0}})));
  b.output(real(b.op("aten.mean.dim", {u, IntList{-1}, true})));
  b.output(real(b.op("aten.permute.default", {u, IntList{1, 0}})));
  b.output(real(b.op("aten.transpose.int", {u, int64_t{0}, int64_t{-1}})));
  b.output(real(b.op("aten.cat.default", {TensorList{{u, r}}, int64_t{-1}})));
  b.output(real(b.op("aten.slice.Tensor", {u, int64_t{-1}, int64_t{1}, int64_t{6}, int64_t{2}})));
  b.output(real(b.op("aten.select.int", {u, int64_t{0}, int64_t{3}})));
  b.output(real(b.op("aten.unsqueeze.default", {u, int64_t{-1}})));
  b.output(real(
      b.op("aten.squeeze.dims", {b.op("aten.unsqueeze.default", {u, int64_t{1}}), IntList{1}})));
  b.output(real(b.op("aten.view.default", {u, IntList{35}})));
  b.output(real(b.op("aten.expand.default", {v, IntList{3, 7}})));
  b.output(real(b.op("aten.clone.default", {u})));
  // A spectrum's power, as a spectrogram computes it, fused with the transform's consumer.
  b.output(b.op(
      "aten.pow.Tensor_Scalar",
      {b.op("aten.abs.default", {b.op("aten._fft_r2c.default", {r, IntList{0}, int64_t{0}, true})}),
       2.0}));
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

// The lowering's arithmetic against std::complex, on the interpreter: an oracle that shares
// nothing with complex lowering.
TEST(ComplexLowering, MatchesStdComplex) {
  auto registry = OpRegistry::create();
  ASSERT_TRUE(registry);
  GraphBuilder b(*registry, "complex");
  const ValueRef a = b.input("a", c64({6}));
  const ValueRef c = b.input("c", c64({6}));
  const ValueRef r = b.input("r", TensorType::contiguous(DType::F32, {6}));
  b.output(b.op("aten.mul.Tensor", {a, c}));
  b.output(b.op("aten.div.Tensor", {a, c}));
  b.output(b.op("aten.sub.Tensor", {a, r}, {{"alpha", 3.0}}));
  b.output(b.op("aten.add.Tensor", {a, -2.5}));
  b.output(b.op("aten._conj.default", {a}));
  b.output(b.op("aten._fft_c2c.default", {a, IntList{0}, int64_t{0}, true}));
  b.output(b.op("aten._fft_r2c.default", {r, IntList{0}, int64_t{1}, false}));
  b.output(b.op("aten.abs.default", {a}));
  auto graph = b.finish();
  ASSERT_TRUE(graph) << graph.error().to_string();
  auto lowered = lower_complex(*graph);
  ASSERT_TRUE(lowered) << lowered.error().to_string();
  ASSERT_FALSE(has_complex_values(*lowered));
  EXPECT_EQ(lowered->type(lowered->inputs[0]).to_string(), "f32[6, 2]");
  EXPECT_EQ(lowered->value(lowered->outputs[0]).name, "mul") << "results keep their names";

  std::vector<HostTensor> inputs;
  for (ValueRef in : lowered->inputs)
    inputs.push_back(random_tensor(lowered->type(in), 17 + inputs.size(), std::nullopt));
  auto outs = interpret(*lowered, inputs);
  ASSERT_TRUE(outs) << outs.error().to_string();
  using C = std::complex<double>;
  const auto at = [](const HostTensor& t, int64_t i) { return C(t.get(2 * i), t.get(2 * i + 1)); };
  const double pi = std::acos(-1.0);
  for (int64_t i = 0; i < 6; ++i) {
    const C x = at(inputs[0], i), y = at(inputs[1], i);
    const double s = inputs[2].get(i);
    C dft = 0, rdft = 0;
    for (int64_t n = 0; n < 6; ++n) {
      dft += at(inputs[0], n) * std::polar(1.0, -2 * pi * static_cast<double>(i * n) / 6);
      rdft += inputs[2].get(n) * std::polar(1.0, -2 * pi * static_cast<double>(i * n) / 6);
    }
    const std::vector<C> want = {x * y,        x / y, x - 3.0 * s,          x - 2.5,
                                 std::conj(x), dft,   rdft / std::sqrt(6.0)};
    for (size_t k = 0; k < want.size(); ++k) {
      const C got = at((*outs)[k], i);
      EXPECT_NEAR(got.real(), want[k].real(), 1e-5 * (1 + std::abs(want[k]))) << k << " @" << i;
      EXPECT_NEAR(got.imag(), want[k].imag(), 1e-5 * (1 + std::abs(want[k]))) << k << " @" << i;
    }
    EXPECT_NEAR((*outs)[7].get(i), std::abs(x), 1e-6 * (1 + std::abs(x)));
  }
}

TEST(ComplexLowering, EveryComplexFormHasARule) {
  auto registry = OpRegistry::create();
  ASSERT_TRUE(registry);
  EXPECT_EQ(complex_lowering_rules(), complex_form_ops());
  for (const std::string& op : complex_form_ops())
    EXPECT_NE((*registry)->find(op), nullptr) << op << " is not registered";
}

TEST(ComplexLowering, ErrorsNameTheOpAndWhy) {
  auto registry = OpRegistry::create();
  ASSERT_TRUE(registry);
  GraphBuilder b(*registry, "errors");
  const ValueRef z = b.input("z", c64({4, 3}));
  const ValueRef d = b.input("d", TensorType::contiguous(DType::F64, {8}));
  const ValueRef odd = b.input("odd", TensorType::contiguous(DType::F32, {4, 3}));
  const auto error = [&](const std::string& op, std::vector<ArgValue> args) {
    auto r = b.try_ops(op, std::move(args), {}, "");
    return r ? std::string("no error") : r.error().message();
  };
  EXPECT_NE(error("aten.exp.default", {z}).find("aten.exp.default does not take complex64"),
            std::string::npos);
  EXPECT_NE(error("aten.mm.default", {z, z}).find("does not take complex64"), std::string::npos);
  EXPECT_NE(error("aten._fft_r2c.default", {d, IntList{0}, int64_t{0}, true})
                .find("f32 signals into complex64"),
            std::string::npos);
  EXPECT_NE(error("aten._fft_r2c.default", {odd, IntList{1, -1}, int64_t{0}, true}).find("repeats"),
            std::string::npos);
  EXPECT_NE(error("aten._fft_r2c.default", {odd, IntList{1}, int64_t{3}, true})
                .find("normalization must be"),
            std::string::npos);
  EXPECT_NE(error("aten._fft_c2r.default", {z, IntList{1}, int64_t{0}, int64_t{9}})
                .find("needs 5 input values"),
            std::string::npos);
  EXPECT_NE(error("aten.view_as_complex.default", {odd}).find("last dim of 2"), std::string::npos);
  EXPECT_NE(error("aten.view_as_real.default", {odd}).find("expects a complex64"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::test
