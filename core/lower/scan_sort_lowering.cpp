// cumsum, cumprod, sort and topk from Reduction kernels (KIR has no sort primitive):
//  - cumsum and cumprod as a scan along the dim (scan_lowering.h).
//  - sort and topk by rank: an element's place is the count of elements that sort before it
//    (sort_order.h: NaN last ascending, first descending, ties by index), O(n^2) per line;
//    each output place then finds the element of that rank (the first index whose rank
//    matches) and reads it. Long lines go through a merge tree instead (long_line_sort.h).
#include "core/lower/long_line_sort.h"
#include "core/lower/scan_lowering.h"
#include "core/lower/sort_order.h"
#include "core/lower/window_index.h"

namespace kiln {
namespace {

// cumsum/cumprod: a scan along the dim in the output's compute dtype.
LowerFn scan_along(const char* kind) {
  return [kind](NodeLowering& n) {
    const TensorType& out = n.out_type(0);
    if (out.numel() == 0 || out.rank() == 0) return false;
    const auto dim = static_cast<size_t>(*normalize_dim(n.args().get_int(1), out.rank()));
    const Access o = n.realize_output(0);
    scan(
        n, kind, out.sizes, dim, compute_dtype(out.dtype),
        [&](KernelBuilder& kb, const std::vector<Expr>& at) {
          return kb.cast(n.load(kb, n.operand(0), at), out.dtype);
        },
        [&](KernelBuilder& kb, const std::vector<Expr>& at, int so_far, int mask) {
          kb.store(o.buffer, contiguous_index(out.sizes, at), kb.cast(so_far, out.dtype), mask);
          n.emit(std::move(kb).finish());
        });
    return true;
  };
}

// sort(self, dim, descending) and topk(self, k, dim, largest, sorted): the first `keep` places.
LowerFn sort_like(int dim_arg, int descending_arg, bool is_topk) {
  return [=](NodeLowering& n) {
    const TensorType& in = n.in_type(0);
    const TensorType& out = n.out_type(0);
    if (in.numel() == 0 || out.numel() == 0 || in.rank() == 0) return false;
    const auto dim = static_cast<size_t>(*normalize_dim(n.args().get_int(dim_arg), in.rank()));
    const bool descending = n.args().get_bool(descending_arg);
    const int64_t len = in.sizes[dim];
    if (const int64_t chunk = merge_tree_chunk(len, out.sizes[dim], in.numel() / len); chunk > 0) {
      merge_tree_sort(n, dim, descending, out.sizes[dim], chunk);
      return true;
    }
    const DType d = compute_dtype(in.dtype);
    const int ranks = n.temp_buffer(is_topk ? "topk_rank" : "sort_rank", DType::I64, in.numel());
    {
      KernelBuilder kb = n.kernel(in.sizes, {len});
      const std::vector<Expr> self = kb.pointwise_vars();
      const int a = kb.cast(n.load(kb, n.operand(0), self), d);
      const int b = kb.cast(n.load(kb, n.operand(0), with_dim(self, dim, kb.r(0))), d);
      const int before =
          sorts_before(kb, b, a, kb.index(kb.r(0)), kb.index(kb.x(dim)), in.dtype, descending);
      kb.store(ranks, contiguous_index(in.sizes, self),
               kb.reduce("sum", DType::I64, kb.cast(before, DType::I64)));
      n.emit(std::move(kb).finish());
    }
    KernelBuilder kb = n.kernel(out.sizes, {len});
    const std::vector<Expr> place = kb.pointwise_vars();
    const int rank =
        kb.load(ranks, DType::I64,
                kb.simplify_index(contiguous_index(in.sizes, with_dim(place, dim, kb.r(0)))));
    const int match = kb.cast(kb.math("eq", DType::Bool, {rank, kb.index(kb.x(dim))}), DType::I64);
    const int found = kb.reduce("argmax", DType::I64, match);
    const Expr from = clamp_index(kb.indirect(found), 0, len - 1);
    const int value = n.load(kb, n.operand(0), with_dim(place, dim, from));
    const Access values = n.realize_output(0);
    const Access indices = n.realize_output(1);
    const Expr at = contiguous_index(out.sizes, place);
    kb.store(values.buffer, at, kb.cast(value, out.dtype));
    kb.store(indices.buffer, at, found);
    n.emit(std::move(kb).finish());
    return true;
  };
}

}  // namespace

std::map<std::string, LowerFn> scan_sort_lowerings() {
  return {{"aten.cumsum.default", scan_along("sum")},
          {"aten.cumprod.default", scan_along("prod")},
          {"aten.sort.default", sort_like(1, 2, false)},
          {"aten.topk.default", sort_like(2, 3, true)}};
}

}  // namespace kiln
