// Ops on complex64 values: the FFTs as ATen writes them (_fft_r2c, _fft_c2r, _fft_c2c) and the
// views between complex and real (view_as_real, view_as_complex, _conj, _neg_view). Only their
// types live here: complex lowering (core/passes/complex_lowering) rewrites every node that
// touches a complex value into real ops on f32 pairs before anything runs the graph, so a
// reference here that meets a complex tensor is a kiln bug.
#include <set>

#include "core/graph/builder.h"
#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"

namespace kiln {
namespace {

[[noreturn]] void runs_in_real_form(const std::string& op) {
  op_bug(op + " on a complex value reached the interpreter; complex lowering should have " +
         "replaced it with real ops");
}

// The transform dims, made non-negative: at least one, none twice.
IntList fft_dims(const InferContext& c, const std::string& op, int64_t rank) {
  IntList dims = c.get_ints(1);
  op_check(!dims.empty(), op + ": needs at least one dim");
  std::set<int64_t> seen;
  for (int64_t& d : dims) {
    auto n = normalize_dim(d, rank);
    op_check(n.has_value() && rank > 0, op + ": dim " + std::to_string(d) + " is out of range");
    d = *n;
    op_check(seen.insert(d).second, op + ": dim " + std::to_string(d) + " repeats");
  }
  const int64_t norm = c.get_int(2);
  op_check(norm >= 0 && norm <= 2,
           op + ": normalization must be 0 (none), 1 (1/sqrt(n)) or 2 (1/n), got " +
               std::to_string(norm));
  return dims;
}

void check_real_input(const TensorType& x, const std::string& op) {
  op_check(x.dtype == DType::F32,
           op + ": kiln transforms f32 signals into complex64 (its only complex dtype); got " +
               std::string(dtype_name(x.dtype)));
}

void check_complex_input(const TensorType& x, const std::string& op) {
  op_check(x.dtype == DType::C64, op + ": expects a complex64 tensor, got " + x.to_string());
}

OpRow fft_r2c_row() {
  return {"aten._fft_r2c.default",
          [](const InferContext& c) {
            const TensorType x = c.type(0);
            check_real_input(x, "_fft_r2c");
            const IntList dims = fft_dims(c, "_fft_r2c", x.rank());
            Shape sizes = x.sizes;
            for (int64_t d : dims)
              op_check(sizes[static_cast<size_t>(d)] > 0, "_fft_r2c: a transform of length 0");
            if (c.get_bool(3)) {
              int64_t& last = sizes[static_cast<size_t>(dims.back())];
              last = last / 2 + 1;
            }
            return one(DType::C64, sizes);
          },
          [](const RefContext&) -> std::vector<HostTensor> { runs_in_real_form("_fft_r2c"); }};
}

OpRow fft_c2r_row() {
  return {"aten._fft_c2r.default",
          [](const InferContext& c) {
            const TensorType x = c.type(0);
            check_complex_input(x, "_fft_c2r");
            const IntList dims = fft_dims(c, "_fft_c2r", x.rank());
            const int64_t length = c.get_int(3);
            const auto last = static_cast<size_t>(dims.back());
            op_check(length >= 1,
                     "_fft_c2r: last_dim_size must be at least 1, got " + std::to_string(length));
            op_check(x.sizes[last] >= length / 2 + 1,
                     "_fft_c2r: an output of " + std::to_string(length) + " needs " +
                         std::to_string(length / 2 + 1) + " input values along dim " +
                         std::to_string(last) + ", got " + std::to_string(x.sizes[last]));
            for (int64_t d : dims)
              op_check(x.sizes[static_cast<size_t>(d)] > 0, "_fft_c2r: a transform of length 0");
            Shape sizes = x.sizes;
            sizes[last] = length;
            return one(DType::F32, sizes);
          },
          [](const RefContext&) -> std::vector<HostTensor> { runs_in_real_form("_fft_c2r"); }};
}

OpRow fft_c2c_row() {
  return {"aten._fft_c2c.default",
          [](const InferContext& c) {
            const TensorType x = c.type(0);
            check_complex_input(x, "_fft_c2c");
            for (int64_t d : fft_dims(c, "_fft_c2c", x.rank()))
              op_check(x.sizes[static_cast<size_t>(d)] > 0, "_fft_c2c: a transform of length 0");
            return one(DType::C64, x.sizes);
          },
          [](const RefContext&) -> std::vector<HostTensor> { runs_in_real_form("_fft_c2c"); }};
}

OpRow view_as_real_row() {
  return {"aten.view_as_real.default",
          [](const InferContext& c) {
            const TensorType x = c.type(0);
            check_complex_input(x, "view_as_real");
            Shape sizes = x.sizes;
            sizes.push_back(2);
            return one(DType::F32, sizes);
          },
          [](const RefContext&) -> std::vector<HostTensor> { runs_in_real_form("view_as_real"); }};
}

OpRow view_as_complex_row() {
  return {
      "aten.view_as_complex.default",
      [](const InferContext& c) {
        const TensorType x = c.type(0);
        op_check(x.dtype == DType::F32 && x.rank() >= 1 && x.sizes.back() == 2,
                 "view_as_complex: expects f32 with a last dim of 2, got " + x.to_string());
        return one(DType::C64, Shape(x.sizes.begin(), x.sizes.end() - 1));
      },
      [](const RefContext&) -> std::vector<HostTensor> { runs_in_real_form("view_as_complex"); }};
}

// _conj and _neg_view are PyTorch's lazy views; on real tensors they are the identity and neg.
OpRow conj_row() {
  return {"aten._conj.default",
          [](const InferContext& c) { return one(c.type(0).dtype, c.type(0).sizes); },
          [](const RefContext& c) {
            if (is_complex(c.out_types[0].dtype)) runs_in_real_form("_conj");
            return std::vector{c.tensor(0).contiguous()};
          },
          [](const DecomposeContext& c) {
            return std::vector{c.b.op("aten.alias.default", {c.tensor(0)})};
          }};
}

OpRow neg_view_row() {
  return {"aten._neg_view.default",
          [](const InferContext& c) {
            op_check(c.type(0).dtype != DType::Bool, "_neg_view: negation of a bool tensor");
            return one(c.type(0).dtype, c.type(0).sizes);
          },
          [](const RefContext& c) {
            if (is_complex(c.out_types[0].dtype)) runs_in_real_form("_neg_view");
            const HostTensor x = c.tensor(0);
            HostTensor out = c.output(0);
            for (int64_t i = 0; i < out.numel(); ++i) {
              if (is_floating(out.dtype())) {
                out.set(i, -x.get(i));
              } else {  // two's complement wrap, as neg does
                out.set_int(i, static_cast<int64_t>(0ULL - static_cast<uint64_t>(x.get_int(i))));
              }
            }
            return std::vector{out};
          },
          [](const DecomposeContext& c) {
            return std::vector{c.b.op("aten.neg.default", {c.tensor(0)})};
          }};
}

}  // namespace

std::vector<OpRow> complex_ops() {
  return {fft_r2c_row(),         fft_c2r_row(), fft_c2c_row(), view_as_real_row(),
          view_as_complex_row(), conj_row(),    neg_view_row()};
}

}  // namespace kiln
