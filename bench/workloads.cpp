#include "bench/workloads.h"

#include <functional>

#include "core/graph/builder.h"
#include "core/ops/op_registry.h"

namespace kiln::bench {
namespace {

using Range = std::optional<std::pair<double, double>>;

int64_t bytes_of(const TensorType& t) {
  return t.numel() * dtype_size(t.dtype);
}

struct Spec {
  std::string name;
  // Sizes per class: {cpu, gpu, small}.
  std::vector<Shape> sizes;
  std::function<void(GraphBuilder&, const Shape&, std::vector<Range>&)> build;
  bool gpu_only = false;  // not in the CPU size class
};

ValueRef last_dim_softmax(GraphBuilder& b, ValueRef x) {
  return b.op("aten._softmax.default", {x, int64_t{-1}, false});
}

std::vector<Spec> specs() {
  const std::vector<Shape> rows{{8192, 1024}, {32768, 1024}, {67, 129}};
  std::vector<Spec> s;
  s.push_back({"sin_cos_1d",
               {{int64_t{1} << 24}, {int64_t{1} << 26}, {1000}},
               [](GraphBuilder& b, const Shape& n, std::vector<Range>& r) {
                 const ValueRef x = b.input("x", TensorType::contiguous(DType::F32, n));
                 r.push_back(std::nullopt);
                 b.output(b.op("aten.sin.default", {b.op("aten.cos.default", {x})}));
               }});
  s.push_back({"add_relu_mul_bcast",
               {{2048, 8192}, {8192, 8192}, {33, 65}},
               [](GraphBuilder& b, const Shape& n, std::vector<Range>& r) {
                 const ValueRef a = b.input("a", TensorType::contiguous(DType::F32, n));
                 const ValueRef v = b.input("b", TensorType::contiguous(DType::F32, {n[1]}));
                 r.assign(2, std::nullopt);
                 const ValueRef relu = b.op("aten.relu.default", {b.add(a, v)});
                 b.output(b.mul(relu, 2.0));
               }});
  s.push_back({"transpose_add",
               {{2048, 2048}, {8192, 8192}, {37, 37}},
               [](GraphBuilder& b, const Shape& n, std::vector<Range>& r) {
                 const ValueRef a = b.input("a", TensorType::contiguous(DType::F32, n));
                 r.push_back(std::nullopt);
                 b.output(b.add(a, b.op("aten.permute.default", {a, ints{1, 0}})));
               }});
  // The row workloads in f32, and in bf16 (computed in f32, stored in bf16) on the GPU.
  for (const DType dtype : {DType::F32, DType::BF16}) {
    const std::string suffix = dtype == DType::F32 ? "" : "_bf16";
    const bool gpu_only = dtype != DType::F32;
    // x in `dtype`, widened to f32 for the arithmetic when narrower.
    auto wide = [dtype](GraphBuilder& b, ValueRef v) {
      return dtype == DType::F32 ? v : b.op("aten._to_copy.default", {v}, {{"dtype", DType::F32}});
    };
    auto narrow = [dtype](GraphBuilder& b, ValueRef v) {
      return dtype == DType::F32 ? v : b.op("aten._to_copy.default", {v}, {{"dtype", dtype}});
    };
    s.push_back({"softmax" + suffix, rows,
                 [=](GraphBuilder& b, const Shape& n, std::vector<Range>& r) {
                   const ValueRef x = b.input("x", TensorType::contiguous(dtype, n));
                   r.push_back(Range{{-4, 4}});
                   b.output(last_dim_softmax(b, x));
                 },
                 gpu_only});
    s.push_back(
        {"layernorm" + suffix, rows,
         [=](GraphBuilder& b, const Shape& n, std::vector<Range>& r) {
           const ValueRef x = b.input("x", TensorType::contiguous(dtype, n));
           const ValueRef w = b.input("weight", TensorType::contiguous(dtype, {n[1]}));
           const ValueRef bias = b.input("bias", TensorType::contiguous(dtype, {n[1]}));
           r.assign(3, std::nullopt);
           b.output(b.ops("aten.native_layer_norm.default", {x, ints{n[1]}, w, bias, 1e-5}).at(0));
         },
         gpu_only});
    s.push_back({"rmsnorm" + suffix, rows,
                 [=](GraphBuilder& b, const Shape& n, std::vector<Range>& r) {
                   const ValueRef x = wide(b, b.input("x", TensorType::contiguous(dtype, n)));
                   const ValueRef w =
                       wide(b, b.input("weight", TensorType::contiguous(dtype, {n[1]})));
                   r.assign(2, std::nullopt);
                   const ValueRef ms = b.op("aten.mean.dim", {b.mul(x, x), ints{-1}, true});
                   const ValueRef inv = b.op("aten.rsqrt.default", {b.add(ms, 1e-6)});
                   b.output(narrow(b, b.mul(b.mul(x, inv), w)));
                 },
                 gpu_only});
    s.push_back({"rowsum" + suffix, rows,
                 [=](GraphBuilder& b, const Shape& n, std::vector<Range>& r) {
                   const ValueRef x = b.input("x", TensorType::contiguous(dtype, n));
                   r.push_back(std::nullopt);
                   b.output(b.op("aten.sum.dim_IntList", {x, ints{-1}, false}));
                 },
                 gpu_only});
  }
  s.push_back(
      {"cross_entropy",
       {{1024, 50257}, {4096, 50257}, {17, 1001}},
       [](GraphBuilder& b, const Shape& n, std::vector<Range>& r) {
         const ValueRef logits = b.input("logits", TensorType::contiguous(DType::BF16, n));
         const ValueRef labels = b.input("labels", TensorType::contiguous(DType::I64, {n[0]}));
         r.push_back(Range{{-4, 4}});
         r.push_back(Range{{0, static_cast<double>(n[1])}});
         const ValueRef f = b.op("aten._to_copy.default", {logits}, {{"dtype", DType::F32}});
         b.output(b.op("aten.cross_entropy_loss.default", {f, labels}));
       }});
  return s;
}

}  // namespace

void describe_workload(Workload& w) {
  w.minimal_bytes = 0;
  for (ValueRef r : w.graph.inputs) w.minimal_bytes += bytes_of(w.graph.type(r));
  for (ValueRef r : w.graph.outputs) w.minimal_bytes += bytes_of(w.graph.type(r));
  w.shape = w.graph.inputs.empty() ? "" : w.graph.type(w.graph.inputs.front()).to_string();
}

Result<std::vector<Workload>> anchor_workloads(SizeClass size,
                                               const std::shared_ptr<const OpRegistry>& registry) {
  std::vector<Workload> out;
  for (const Spec& spec : specs()) {
    if (spec.gpu_only && size == SizeClass::Cpu) continue;
    const Shape& n = spec.sizes.at(static_cast<size_t>(size));
    GraphBuilder b(registry, spec.name);
    Workload w;
    w.name = spec.name;
    spec.build(b, n, w.ranges);
    auto graph = b.finish();
    if (!graph) return std::move(graph).error().with_context("building workload " + spec.name);
    w.graph = std::move(*graph);
    describe_workload(w);
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace kiln::bench
