// kiln.graph/1 and safetensors: well-formed files load; every kind of malformed file gives
// an error that names where and why.
#include <gmock/gmock.h>

#include <cstring>

#include "core/graph/graph_binary.h"
#include "core/graph/graph_dump.h"
#include "core/graph/graph_json.h"
#include "core/graph/graph_json_writer.h"
#include "core/graph/safetensors.h"
#include "op_test_util.h"

namespace kiln::test {
namespace {

using ::testing::HasSubstr;

std::string error_of(const std::string& text) {
  auto g = parse_graph(text, "g.json", registry());
  EXPECT_FALSE(g) << "expected an error for " << text;
  if (g) return {};
  EXPECT_TRUE(g.error().is_user()) << g.error().to_string();
  return g.error().to_string();
}

const std::string kHead =
    R"({"format": "kiln.graph/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [2, 3]}], )";

TEST(GraphFormat, LoadsAndDumps) {
  auto g = parse_graph(kHead + R"("params": [{"name": "w", "dtype": "f32", "shape": [3]}],
    "nodes": [{"name": "m", "op": "aten.amax.default", "args": ["%x", [-1], true]},
              {"name": "y", "op": "aten.mul.Tensor", "args": ["%x", "%w"], "type": "f32[2, 3]"},
              {"name": "ln", "op": "aten.native_layer_norm.default", "args": ["%y", [3], "%w", null, 1e-5]}],
    "outputs": ["%ln.0", "%m"]})",
                       "g.json", registry());
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_EQ(dump_graph(*g),
            "graph graph\n"
            "  input  %x : f32[2, 3]\n"
            "  param  %w : f32[3]\n"
            "  %m = aten.amax.default(%x, [-1], true) : f32[2, 1]\n"
            "  %y = aten.mul.Tensor(%x, %w) : f32[2, 3]\n"
            "  %ln.0, %ln.1, %ln.2 = aten.native_layer_norm.default(%y, [3], %w, None, 1e-05) : "
            "f32[2, 3], f32[2, 1], f32[2, 1]\n"
            "  output %ln.0\n"
            "  output %m\n");
}

TEST(GraphFormat, MalformedFilesNameThePathAndWhy) {
  EXPECT_THAT(error_of("{\"format\": \"kiln.graph/1\",\n  \"nodes\": [,]}"),
              HasSubstr("g.json:2:13: malformed JSON"));
  EXPECT_THAT(error_of(R"({"format": "kiln.graph/2", "nodes": [], "outputs": []})"),
              HasSubstr("$.format: unsupported format"));
  EXPECT_THAT(error_of(R"({"format": "kiln.graph/1", "outputs": ["%x"]})"),
              HasSubstr("$: missing field 'nodes'"));
  EXPECT_THAT(error_of(kHead + R"("nodes": [], "outputs": ["%x"], "extra": 1})"),
              HasSubstr("unknown field 'extra'"));
  EXPECT_THAT(error_of(kHead + R"("nodes": [{"name": "y", "op": 3}], "outputs": ["%y"]})"),
              HasSubstr("nodes[0].op: must be a string"));
  EXPECT_THAT(
      error_of(
          kHead +
          R"("nodes": [{"name": "y", "op": "aten.frobnicate.default", "args": ["%x"]}], "outputs": ["%y"]})"),
      HasSubstr("nodes[0].op: unknown op 'aten.frobnicate.default' (node 'y')"));
  EXPECT_THAT(
      error_of(
          kHead +
          R"("nodes": [{"name": "y", "op": "aten.nonzero.default", "args": ["%x"]}], "outputs": ["%y"]})"),
      HasSubstr("nodes[0].op: op 'aten.nonzero.default' (node 'y') is not supported by kiln: its "
                "output shape depends on the data"));
  EXPECT_THAT(
      error_of(
          kHead +
          R"("nodes": [{"name": "y", "op": "aten.relu.default", "args": ["%z"]}], "outputs": ["%y"]})"),
      HasSubstr("nodes[0].args[0]: refers to '%z', which is not defined before this point"));
  EXPECT_THAT(
      error_of(kHead + R"("nodes": [{"name": "y", "op": "aten.relu.default", "args": ["%y2"]},
                                            {"name": "y2", "op": "aten.relu.default", "args": ["%x"]}], "outputs": ["%y"]})"),
      HasSubstr("nodes[0].args[0]: refers to '%y2', which is not defined before this point"));
  EXPECT_THAT(
      error_of(
          kHead +
          R"("nodes": [{"name": "x", "op": "aten.relu.default", "args": ["%x"]}], "outputs": ["%x"]})"),
      HasSubstr("nodes[0].name: the name 'x' is used twice"));
  EXPECT_THAT(
      error_of(
          kHead +
          R"("nodes": [{"name": "y", "op": "aten.amax.default", "args": ["%x", "wide"]}], "outputs": ["%y"]})"),
      HasSubstr(
          "nodes[0]: node 'y': aten.amax.default: argument 'dim' expects int[], got a string"));
  EXPECT_THAT(
      error_of(
          kHead +
          R"("nodes": [{"name": "y", "op": "aten.relu.default", "args": ["%x"], "type": "f32[3, 2]"}], "outputs": ["%y"]})"),
      HasSubstr("nodes[0].type: declares f32[3, 2] but aten.relu.default gives f32[2, 3]"));
  EXPECT_THAT(
      error_of(
          kHead +
          R"("nodes": [{"name": "y", "op": "aten.mm.default", "args": ["%x", "%x"]}], "outputs": ["%y"]})"),
      HasSubstr("nodes[0]: node 'y': aten.mm.default: mm: shapes [2, 3] and [2, 3] cannot be "
                "multiplied"));
  EXPECT_THAT(
      error_of(
          R"({"format": "kiln.graph/1", "inputs": [{"name": "x", "dtype": "f31", "shape": [2]}], "nodes": [], "outputs": ["%x"]})"),
      HasSubstr("inputs[0].dtype: unknown dtype 'f31'"));
  EXPECT_THAT(
      error_of(
          R"({"format": "kiln.graph/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [-2]}], "nodes": [], "outputs": ["%x"]})"),
      HasSubstr("inputs[0].shape[0]: must not be negative"));
  EXPECT_THAT(error_of(kHead + R"("nodes": [], "outputs": ["x"]})"),
              HasSubstr("outputs[0]: a value reference looks like \"%name\""));
  EXPECT_THAT(
      error_of(
          kHead +
          R"("nodes": [{"name": "y", "op": "aten.add.Tensor", "args": ["%x", "%x"], "kwargs": {"beta": 2}}], "outputs": ["%y"]})"),
      HasSubstr("aten.add.Tensor has no argument named 'beta'"));
}

TEST(GraphFormat, MissingOrMismatchedWeights) {
  auto g = parse_graph(
      kHead +
          R"("params": [{"name": "w", "dtype": "f32", "shape": [3]}], "nodes": [], "outputs": ["%x"]})",
      "g.json", registry());
  ASSERT_TRUE(g);
  std::map<std::string, HostTensor> weights;
  EXPECT_THAT(attach_weights(*g, weights, "w.safetensors").error().to_string(),
              HasSubstr("w.safetensors: no tensor named 'w'"));
  weights["w"] = f32({2}, {1, 2});
  EXPECT_THAT(attach_weights(*g, weights, "w.safetensors").error().to_string(),
              HasSubstr("tensor 'w' is f32[2] but parameter 'w' is f32[3]"));
}

std::vector<std::byte> with_header(const std::string& header, size_t data_bytes) {
  std::vector<std::byte> bytes(8 + header.size() + data_bytes);
  for (int i = 0; i < 8; ++i)
    bytes[static_cast<size_t>(i)] = static_cast<std::byte>((header.size() >> (8 * i)) & 0xff);
  std::memcpy(bytes.data() + 8, header.data(), header.size());
  return bytes;
}

std::string st_error(const std::vector<std::byte>& bytes) {
  auto r = parse_safetensors(bytes, "t.safetensors");
  EXPECT_FALSE(r);
  return r ? std::string() : r.error().to_string();
}

TEST(Safetensors, RoundTrips) {
  const std::vector<std::pair<std::string, HostTensor>> tensors = {
      {"a", f32({2, 2}, {1, 2, 3, 4})},
      {"b", tensor(DType::BF16, {3}, {1, -2, 0.5})},
      {"c", tensor(DType::Bool, {0}, {})}};
  auto back = parse_safetensors(serialize_safetensors(tensors), "mem");
  ASSERT_TRUE(back) << back.error().to_string();
  ASSERT_EQ(back->size(), 3u);
  EXPECT_EQ(values(back->at("a")), values(tensors[0].second));
  EXPECT_EQ(back->at("b").dtype(), DType::BF16);
  EXPECT_EQ(values(back->at("b")), values(tensors[1].second));
}

TEST(Safetensors, BadFilesAreRejectedWithTheReason) {
  EXPECT_THAT(st_error(std::vector<std::byte>(5)), HasSubstr("too short"));
  auto truncated = serialize_safetensors({{"a", f32({4}, {1, 2, 3, 4})}});
  truncated.resize(truncated.size() - 3);
  EXPECT_THAT(st_error(truncated),
              HasSubstr("tensor 'a': data_offsets [0, 16] lie outside the 13 data bytes"));
  auto lying = with_header("{}", 0);
  lying[0] = std::byte{0xff};
  EXPECT_THAT(st_error(lying), HasSubstr("runs past the end"));
  EXPECT_THAT(st_error(with_header("{not json", 0)), HasSubstr("not valid JSON"));
  EXPECT_THAT(
      st_error(with_header(R"({"a": {"dtype": "F8", "shape": [1], "data_offsets": [0, 1]}})", 1)),
      HasSubstr("tensor 'a': unsupported dtype 'F8'"));
  EXPECT_THAT(
      st_error(with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})", 4)),
      HasSubstr("tensor 'a': 4 bytes for F32[2], which needs 8"));
  EXPECT_THAT(
      st_error(with_header(
          R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "b": {"dtype": "F32", "shape": [1], "data_offsets": [2, 6]}})",
          8)),
      HasSubstr("overlap"));
  EXPECT_THAT(
      st_error(with_header(R"({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", 4)),
      HasSubstr("shape entries must be non-negative"));
  EXPECT_THAT(st_error(with_header(R"({"a": {"dtype": "F32", "shape": [1]}})", 4)),
              HasSubstr("'data_offsets' must be two"));
  auto missing = read_safetensors("/nonexistent/x.safetensors");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().to_string(), HasSubstr("cannot read safetensors file"));
}

}  // namespace
}  // namespace kiln::test

namespace kiln::test {
namespace {

// Found by the fuzzer: a number too large for any JSON number type.
TEST(GraphFormat, OverlongNumbersAreMalformedNotFatal) {
  auto g = parse_graph(
      R"({"format": "kiln.graph/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [64e4444444]}]})",
      "g.json", registry());
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().to_string().find("malformed JSON"), std::string::npos)
      << g.error().to_string();
}

}  // namespace
}  // namespace kiln::test

namespace kiln::test {
namespace {

TEST(GraphFormat, FloatListsRoundTripThroughJsonAndBinary) {
  // Scale factors are float[]: fractions kept exactly, integers read as floats there.
  auto g = parse_graph(
      R"({"format": "kiln.graph/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [1, 2, 3, 4]}],
    "nodes": [{"name": "a", "op": "aten.upsample_nearest2d.vec", "args": ["%x", null, [1.5, 0.5]]},
              {"name": "b", "op": "aten.upsample_nearest2d.vec", "args": ["%x", null, [2, 3]]}],
    "outputs": ["%a", "%b"]})",
      "g.json", registry());
  ASSERT_TRUE(g) << g.error().to_string();
  const auto& a = std::get<FloatList>(g->nodes[0].args[2]);
  EXPECT_EQ(a, (FloatList{1.5, 0.5}));
  EXPECT_EQ(std::get<FloatList>(g->nodes[1].args[2]), (FloatList{2.0, 3.0}));
  EXPECT_EQ(g->type(g->outputs[0]).sizes, (Shape{1, 2, 4, 2}));
  EXPECT_EQ(g->type(g->outputs[1]).sizes, (Shape{1, 2, 6, 12}));
  auto again = parse_graph(write_graph_json(*g), "again.json", registry());
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(dump_graph(*again), dump_graph(*g));
  ByteWriter out;
  write_graph(out, *g);
  ByteReader in(out.bytes());
  auto binary = read_graph(in, registry());
  ASSERT_TRUE(binary) << binary.error().to_string();
  EXPECT_EQ(std::get<FloatList>(binary->nodes[0].args[2]), (FloatList{1.5, 0.5}));
  EXPECT_THAT(error_of(kHead + R"("nodes": [{"name": "a", "op": "aten.upsample_nearest2d.vec",
    "args": ["%x", null, [1.5, "2"]]}], "outputs": ["%a"]})"),
              HasSubstr("must be a number"));
}

}  // namespace
}  // namespace kiln::test
