// Pointwise ops compiled by cpp_openmp against the oracle: every dtype each op takes, odd
// and prime sizes, broadcasting, wrapped scalars, transposed and sliced inputs.
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "core/support/half.h"
#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

// sub, mul, every division and modulo (divisor q), maximum and minimum of a and c.
void binary_arithmetic(GraphBuilder& b, ValueRef a, ValueRef c, ValueRef q) {
  output_of(b, "sub", "aten.sub.Tensor", {a, c});
  output_of(b, "mul", "aten.mul.Tensor", {a, c});
  output_of(b, "div", "aten.div.Tensor", {a, q});
  output_of(b, "div_floor", "aten.div.Tensor_mode", {a, q}, {{"rounding_mode", "floor"}});
  output_of(b, "div_trunc", "aten.div.Tensor_mode", {a, q}, {{"rounding_mode", "trunc"}});
  output_of(b, "floor_divide", "aten.floor_divide.default", {a, q});
  output_of(b, "fmod", "aten.fmod.Tensor", {a, q});
  output_of(b, "remainder", "aten.remainder.Tensor", {a, q});
  output_of(b, "maximum", "aten.maximum.default", {a, c});
  output_of(b, "minimum", "aten.minimum.default", {a, c});
}

class CompiledPointwiseFloat : public Differential, public ::testing::WithParamInterface<DType> {};

TEST_P(CompiledPointwiseFloat, UnaryOpsOnContiguousTransposedAndSlicedInputs) {
  const DType d = GetParam();
  const Shape s = {7, 13};
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(d, s), Range{-2, 2});
  const ValueRef xt = input(b, "xt", TensorType{d, s, permuted_strides(s, {1, 0})}, Range{-2, 2});
  const ValueRef xs = input(b, "xs", sliced_type(d, s, 3), Range{-2, 2});
  const ValueRef pos = input(b, "pos", TensorType::contiguous(d, s), Range{0.1, 3});
  const ValueRef unit = input(b, "unit", TensorType::contiguous(d, s), Range{-0.9, 0.9});
  const ValueRef big = input(b, "big", TensorType::contiguous(d, s), Range{1.1, 3});
  for (const char* op : {"sin",   "cos",  "tan",   "atan",  "sinh",    "cosh", "tanh",
                         "asinh", "exp",  "expm1", "erf",   "sigmoid", "abs",  "neg",
                         "sign",  "ceil", "floor", "round", "trunc",   "relu", "reciprocal"}) {
    output_of(b, op, std::string("aten.") + op + ".default", {x});
  }
  for (const char* op : {"log", "log1p", "log2", "log10", "sqrt", "rsqrt"})
    output_of(b, op, std::string("aten.") + op + ".default", {pos});
  for (const char* op : {"asin", "acos", "atanh"})
    output_of(b, op, std::string("aten.") + op + ".default", {unit});
  output_of(b, "acosh", "aten.acosh.default", {big});
  for (const char* op : {"exp", "tanh", "abs"}) {
    output_of(b, std::string(op) + "_t", std::string("aten.") + op + ".default", {xt});
    output_of(b, std::string(op) + "_s", std::string("aten.") + op + ".default", {xs});
  }
  // NaN and infinity come out of the kernels, and their predicates see them.
  output_of(b, "isnan", "aten.isnan.default", {b.unary("log", x)});
  output_of(b, "isinf", "aten.isinf.default", {b.div(x, 0.0)});
  // isinf false for finite values and NaN too; relu keeps NaN and passes +inf, in vector
  // lanes and the scalar tail alike.
  output_of(b, "isinf_finite", "aten.isinf.default", {x});
  output_of(b, "isinf_nan", "aten.isinf.default", {b.unary("log", x)});
  output_of(b, "relu_nan", "aten.relu.default", {b.unary("log", x)});
  output_of(b, "relu_inf", "aten.relu.default", {b.div(x, 0.0)});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

TEST_P(CompiledPointwiseFloat, BinaryOpsBroadcastAndWrappedScalars) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef a = input(b, "a", TensorType::contiguous(d, {5, 1, 7}), Range{-2, 2});
  const ValueRef c = input(b, "c", TensorType::contiguous(d, {3, 7}), Range{-2, 2});
  const ValueRef q = input(b, "q", TensorType::contiguous(d, {3, 7}), Range{0.5, 2});
  const ValueRef ct = input(b, "ct", TensorType{d, {3, 7}, {1, 3}}, Range{-2, 2});
  const ValueRef pos = input(b, "pos", TensorType::contiguous(d, {5, 1, 7}), Range{0.1, 3});
  const ValueRef s0 = input(b, "s0", TensorType::contiguous(d, {}), Range{-2, 2});
  output_of(b, "add", "aten.add.Tensor", {a, c}, {{"alpha", 2.0}});
  output_of(b, "add_t", "aten.add.Tensor", {a, ct});
  output_of(b, "add_0d", "aten.add.Tensor", {a, s0});
  binary_arithmetic(b, a, c, q);
  output_of(b, "pow", "aten.pow.Tensor_Tensor", {pos, c});
  output_of(b, "pow_2", "aten.pow.Tensor_Scalar", {a, 2.0});
  output_of(b, "pow_s", "aten.pow.Scalar", {1.5, c});
  output_of(b, "atan2", "aten.atan2.default", {a, c});
  for (const char* cmp : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    output_of(b, cmp, std::string("aten.") + cmp + ".Tensor", {a, c});
    output_of(b, std::string(cmp) + "_scalar", std::string("aten.") + cmp + ".Scalar", {a, 0.25});
  }
  output_of(b, "where", "aten.where.self", {b.op("aten.gt.Tensor", {a, c}), a, c});
  output_of(b, "where_scalar", "aten.where.self", {b.op("aten.gt.Tensor", {a, c}), a, 0.5});
  output_of(b, "clamp", "aten.clamp.default", {a, -0.5, 0.75});
  output_of(b, "clamp_t", "aten.clamp.Tensor", {a, c, q});
  output_of(b, "hardtanh", "aten.hardtanh.default", {a, -0.3, 0.6});
  output_of(b, "leaky_relu", "aten.leaky_relu.default", {a, 0.2});
  output_of(b, "elu", "aten.elu.default", {a, 1.3});
  output_of(b, "rsub", "aten.rsub.Scalar", {a, 2.0});
  output_of(b, "add_scalar", "aten.add.Scalar", {a, 3});
  output_of(b, "div_scalar", "aten.div.Scalar", {a, 3});
  output_of(b, "remainder_scalar", "aten.remainder.Scalar", {a, 0.7});
  check(b);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledPointwiseFloat,
                         ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16),
                         DTypeName());

class CompiledPointwiseInt : public Differential, public ::testing::WithParamInterface<DType> {};

TEST_P(CompiledPointwiseInt, ArithmeticBitwiseAndComparisons) {
  const DType d = GetParam();
  const bool is_unsigned = d == DType::U8;
  const Range values = is_unsigned ? Range{0, 16} : Range{-9, 9};
  GraphBuilder b = builder();
  const ValueRef a = input(b, "a", TensorType::contiguous(d, {5, 1, 11}), values);
  const ValueRef c = input(b, "c", TensorType::contiguous(d, {3, 11}), values);
  const ValueRef q = input(b, "q", TensorType::contiguous(d, {3, 11}), Range{1, 6});
  const ValueRef at = input(b, "at", TensorType{d, {5, 1, 11}, {1, 1, 5}}, values);
  output_of(b, "add", "aten.add.Tensor", {a, c}, {{"alpha", int64_t{3}}});
  output_of(b, "add_t", "aten.add.Tensor", {at, c});
  binary_arithmetic(b, a, c, q);
  output_of(b, "pow", "aten.pow.Tensor_Scalar", {a, 2});
  // Powers of two become shifts and masks (cpp_openmp): negative operands included.
  output_of(b, "floordiv_4", "aten.div.Tensor_mode", {a, int64_t{4}}, {{"rounding_mode", "floor"}});
  output_of(b, "remainder_8", "aten.remainder.Scalar", {a, int64_t{8}});
  output_of(b, "remainder_1", "aten.remainder.Scalar", {c, int64_t{1}});
  for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor"})
    output_of(b, op, std::string("aten.") + op + ".Tensor", {a, c});
  for (const char* op : {"bitwise_not", "abs", "neg", "sign"})
    output_of(b, op, std::string("aten.") + op + ".default", {a});
  for (const char* cmp : {"eq", "lt", "ge"})
    output_of(b, cmp, std::string("aten.") + cmp + ".Tensor", {a, c});
  output_of(b, "clamp", "aten.clamp.default", {a, 2, 7});
  output_of(b, "mul_float", "aten.mul.Tensor", {a, 0.5});  // int * float scalar -> f32
  output_of(b, "sqrt", "aten.sqrt.default", {q});          // int -> default float
  output_of(b, "to_f16", "aten._to_copy.default", {a}, {{"dtype", DType::F16}});
  output_of(b, "to_bool", "aten._to_copy.default", {a}, {{"dtype", DType::Bool}});
  check(b);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledPointwiseInt,
                         ::testing::Values(DType::I8, DType::U8, DType::I16, DType::I32,
                                           DType::I64),
                         DTypeName());

// An f32 vector whose elements have the bit patterns `bits`.
Result<HostTensor> f32_of_bits(const std::vector<uint32_t>& bits) {
  std::vector<std::byte> raw(bits.size() * 4);
  std::memcpy(raw.data(), bits.data(), raw.size());
  return HostTensor::from_bytes(DType::F32, {static_cast<int64_t>(bits.size())}, std::move(raw));
}

class CompiledPointwiseMixed : public Differential {
 protected:
  // `graph` compiled for the suite's plugin and run on one f32 input holding `bits`.
  Result<std::vector<HostTensor>> run_on_bits(const Graph& graph,
                                              const std::vector<uint32_t>& bits) {
    auto x = f32_of_bits(bits);
    if (!x) return std::move(x).error();
    auto compiled = compile(graph);
    if (!compiled) return std::move(compiled).error();
    return compiled->run({*x});
  }
};

TEST_F(CompiledPointwiseMixed, BoolLogicAndPromotion) {
  GraphBuilder b = builder();
  const ValueRef p = input(b, "p", TensorType::contiguous(DType::Bool, {4, 9}));
  const ValueRef r = input(b, "r", TensorType::contiguous(DType::Bool, {9}));
  const ValueRef i = input(b, "i", TensorType::contiguous(DType::I32, {4, 9}), Range{-50, 50});
  const ValueRef h = input(b, "h", TensorType::contiguous(DType::F16, {4, 9}), Range{-2, 2});
  const ValueRef f = input(b, "f", TensorType::contiguous(DType::F32, {4, 9}), Range{-2, 2});
  const ValueRef g = input(b, "g", TensorType::contiguous(DType::F64, {9}), Range{-2, 2});
  output_of(b, "logical_and", "aten.logical_and.default", {p, r});
  output_of(b, "logical_or", "aten.logical_or.default", {p, r});
  output_of(b, "logical_xor", "aten.logical_xor.default", {p, r});
  output_of(b, "logical_not", "aten.logical_not.default", {p});
  output_of(b, "logical_not_f", "aten.logical_not.default", {f});
  output_of(b, "bitwise_not_bool", "aten.bitwise_not.default", {p});
  output_of(b, "bitwise_and_bool", "aten.bitwise_and.Tensor", {p, r});
  output_of(b, "bool_plus_int", "aten.add.Tensor", {p, i});
  output_of(b, "int_plus_half", "aten.add.Tensor", {i, h});
  output_of(b, "half_plus_float", "aten.add.Tensor", {h, f});
  output_of(b, "float_plus_double", "aten.mul.Tensor", {f, g});
  output_of(b, "half_times_wrapped", "aten.mul.Tensor", {h, 3.25});
  output_of(b, "where_mixed", "aten.where.self", {p, i, h});
  output_of(b, "f_to_i32", "aten._to_copy.default", {b.mul(f, 20.0)}, {{"dtype", DType::I32}});
  output_of(b, "f_to_u8", "aten._to_copy.default", {b.add(b.mul(f, 50.0), 100.0)},
            {{"dtype", DType::U8}});
  output_of(b, "f_to_bf16", "aten._to_copy.default", {f}, {{"dtype", DType::BF16}});
  output_of(b, "d_to_f16", "aten._to_copy.default", {g}, {{"dtype", DType::F16}});
  output_of(b, "bool_to_f", "aten._to_copy.default", {p}, {{"dtype", DType::F32}});
  output_of(b, "clone_t", "aten.clone.default", {b.op("aten.t.default", {f})});
  check(b);
}

// Sums of narrow integers wrap before a compare reads them, as PyTorch's do: per row (a
// broadcast column, computed once per row) and per element (vectors and the scalar tail).
// The lowering computes them in i64 and casts back; the generated code's own cast of narrow
// integer math is checked in tests/lit/codegen/narrow_int_math.test.
TEST_F(CompiledPointwiseMixed, NarrowIntegerSumsWrapBeforeTheyAreCompared) {
  for (const auto& [d, range, bound] : {std::tuple{DType::U8, Range{100, 255}, 150.0},
                                        std::tuple{DType::I16, Range{16000, 32767}, 30000.0}}) {
    GraphBuilder b = builder();
    const ValueRef y = input(b, "y", TensorType::contiguous(d, {6, 1}), range);
    const ValueRef x = input(b, "x", TensorType::contiguous(d, {6, 37}), range);
    const ValueRef zero = b.op("aten.mul.Tensor", {x, int64_t{0}});
    const ValueRef row = b.op("aten.gt.Scalar", {b.op("aten.add.Tensor", {y, y}), bound});
    output_of(b, "where_row", "aten.where.self", {row, x, zero});
    const ValueRef lane = b.op("aten.gt.Scalar", {b.op("aten.add.Tensor", {x, x}), bound});
    output_of(b, "where_lane", "aten.where.self", {lane, x, zero});
    output_of(b, "neg_lt", "aten.lt.Scalar", {b.op("aten.neg.default", {x}), 0});
    check(b);
  }
}

// f32 -> bf16 stores bit for bit as the integer rule (round to nearest even, NaNs quieted),
// over floats of every exponent, ties, infinities and NaNs, with subnormals in some vectors
// and not in others: a CPU with AVX512-BF16 converts whole vectors by one instruction that
// reads subnormals as zero, and must then take the integer form for those vectors.
TEST_F(CompiledPointwiseMixed, Bf16StoresRoundEveryFloatAsTheIntegerRule) {
  GraphBuilder b = builder();
  const int64_t n = 4099;  // vectors of every width, and a tail
  const ValueRef f = input(b, "f", TensorType::contiguous(DType::F32, {n}));
  output_of(b, "f_to_bf16", "aten._to_copy.default", {f}, {{"dtype", DType::BF16}});
  const Graph graph = finish(b);
  std::vector<uint32_t> bits(static_cast<size_t>(n));
  uint32_t state = 20261128;
  for (size_t i = 0; i < bits.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    bits[i] = state;
    if (i < 1024) bits[i] &= 0xbfffffffu;                 // small exponents...
    if (i % 97 == 5 && i < 2048) bits[i] &= 0x807fffffu;  // ...subnormals here and there
    if (i >= 2048 && i < 2048 + 64) bits[i] = (bits[i] & 0xffff0000u) | 0x8000u;  // ties
  }
  const uint32_t specials[] = {0x7f800000u, 0xff800000u, 0x7fc00001u, 0xffa12345u, 0x7f7fffffu,
                               0x00000001u, 0x80000000u, 0x00800000u, 0x007fffffu};
  for (size_t j = 0; j < std::size(specials); ++j) bits[3000 + 16 * j] = specials[j];
  auto out = run_on_bits(graph, bits);
  ASSERT_TRUE(out) << out.error().message();
  ASSERT_EQ(out->at(0).bytes().size(), bits.size() * 2);
  for (size_t i = 0; i < bits.size(); ++i) {
    uint16_t got;
    std::memcpy(&got, out->at(0).bytes().data() + 2 * i, 2);
    const float value = bits_float(bits[i]);
    if (value != value) {
      EXPECT_TRUE((got & 0x7fffu) > 0x7f80u) << "element " << i << ": a NaN became " << got;
      continue;
    }
    EXPECT_EQ(got, float_to_bf16(value)) << "element " << i << " (bits " << bits[i] << ")";
  }
}

// relu bit for bit as PyTorch's (eager and Inductor): below zero becomes +0.0; -0.0, NaN and
// +inf stay as they are, in vector lanes and the scalar tail, and in the oracle alike.
TEST_F(CompiledPointwiseMixed, ReluKeepsNegativeZeroAndNaNBitForBit) {
  GraphBuilder b = builder();
  const int64_t n = 1027;  // vectors of every width, and a tail
  const ValueRef f = input(b, "f", TensorType::contiguous(DType::F32, {n}));
  output_of(b, "relu", "aten.relu.default", {f});
  const Graph graph = finish(b);
  std::vector<uint32_t> bits(static_cast<size_t>(n));
  uint32_t state = 20261128;
  for (uint32_t& u : bits) {
    state = state * 1664525u + 1013904223u;
    u = state & 0xbfffffffu;  // finite values of both signs
  }
  const uint32_t specials[] = {0x80000000u, 0x00000000u, 0x7fc00001u, 0xffc12345u,
                               0x7f800000u, 0xff800000u, 0x80000001u, 0x00000001u};
  for (size_t j = 0; j < bits.size(); j += 37) bits[j] = specials[(j / 37) % std::size(specials)];
  bits[n - 1] = 0x80000000u;  // -0.0 in the scalar tail too
  auto out = run_on_bits(graph, bits);
  ASSERT_TRUE(out) << out.error().message();
  auto oracle = run_oracle(graph, {f32_of_bits(bits).value()});
  ASSERT_TRUE(oracle) << oracle.error().to_string();
  for (size_t i = 0; i < bits.size(); ++i) {
    const float value = bits_float(bits[i]);
    uint32_t got = 0, reference = 0;
    std::memcpy(&got, out->at(0).bytes().data() + 4 * i, 4);
    std::memcpy(&reference, oracle->expected.at(0).bytes().data() + 4 * i, 4);
    if (value != value) {
      EXPECT_TRUE((got & 0x7fffffffu) > 0x7f800000u) << "element " << i << ": NaN became " << got;
      EXPECT_TRUE((reference & 0x7fffffffu) > 0x7f800000u) << "element " << i;
      continue;
    }
    const uint32_t want = value < 0 ? 0u : bits[i];
    EXPECT_EQ(got, want) << "element " << i << " (bits " << bits[i] << ")";
    EXPECT_EQ(reference, want) << "the oracle, element " << i;
  }
}

TEST_F(CompiledPointwiseMixed, EmptyAndSizeOneDims) {
  GraphBuilder b = builder();
  const ValueRef e = input(b, "e", TensorType::contiguous(DType::F32, {0, 7}));
  const ValueRef row = input(b, "row", TensorType::contiguous(DType::F32, {1, 7}));
  const ValueRef one = input(b, "one", TensorType::contiguous(DType::F32, {1, 1}));
  const ValueRef col = input(b, "col", TensorType::contiguous(DType::F32, {5, 1}));
  const ValueRef z = input(b, "z", TensorType::contiguous(DType::F32, {3, 0, 2}));
  output_of(b, "empty_add", "aten.add.Tensor", {e, row});
  output_of(b, "empty_exp", "aten.exp.default", {z});
  output_of(b, "outer", "aten.mul.Tensor", {col, row});
  output_of(b, "one_one", "aten.sub.Tensor", {one, row});
  output_of(b, "scalar_like", "aten.exp.default", {one});
  check(b);
}

}  // namespace
}  // namespace kiln::test

namespace kiln::test {
namespace {

// Lowering rules no other test reached: copy into another dtype (a float into bool converts
// by value; found by the graph fuzzer) and into a broadcast, empty tensors filled by copy,
// and the Scalar overloads.
class CompiledScalarOverloads : public Differential {};

TEST_F(CompiledScalarOverloads, CopyEmptyAndScalarOverloadsMatch) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {6, 7}), Range{-2, 2});
  const ValueRef row = input(b, "row", TensorType::contiguous(DType::F32, {7}), Range{-2, 2});
  const ValueRef i = input(b, "i", TensorType::contiguous(DType::I32, {6, 7}), Range{-40, 40});
  const ValueRef mask = b.op("aten.gt.Scalar", {x, 0.0});
  output_of(b, "copy_into_bool", "aten.copy.default", {mask, x});
  output_of(b, "copy_into_int", "aten.copy.default", {i, b.mul(x, 7.0)});
  output_of(b, "copy_broadcast", "aten.copy.default", {x, row});
  const ValueRef e = b.op("aten.empty.memory_format", {ints{6, 7}}, {{"dtype", DType::F32}});
  output_of(b, "empty_filled", "aten.copy.default", {e, x});
  const ValueRef es =
      b.op("aten.empty_strided.default", {ints{6, 7}, ints{1, 6}}, {{"dtype", DType::F32}});
  output_of(b, "empty_strided_filled", "aten.copy.default", {es, x});
  output_of(b, "div_scalar_floor", "aten.div.Scalar_mode", {x, 0.7},
            {{"rounding_mode", std::string("floor")}});
  output_of(b, "fmod_scalar", "aten.fmod.Scalar", {x, 0.7});
  output_of(b, "mul_scalar", "aten.mul.Scalar", {x, 2.5});
  output_of(b, "sub_scalar", "aten.sub.Scalar", {x, 1.5});
  output_of(b, "and_scalar", "aten.bitwise_and.Scalar", {i, int64_t{5}});
  output_of(b, "or_scalar", "aten.bitwise_or.Scalar", {i, int64_t{-6}});
  output_of(b, "xor_scalar", "aten.bitwise_xor.Scalar", {i, int64_t{9}});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

}  // namespace
}  // namespace kiln::test
