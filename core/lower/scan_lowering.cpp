#include "core/lower/scan_lowering.h"

#include "core/lower/window_index.h"

namespace kiln {
namespace {

// Lines at least this long, fewer than kFewLines of them, scan in segments of kSegment.
constexpr int64_t kLongLine = 8192;
constexpr int64_t kFewLines = 1024;
constexpr int64_t kSegment = 1024;

// `sizes` without `dim` ({1} when nothing is left): the lines.
Shape lines_of(const Shape& sizes, size_t dim) {
  Shape lines = sizes;
  lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(dim));
  if (lines.empty()) lines = {1};
  return lines;
}

// Coordinates over a shape of `rank` dims from a kernel whose first variables x0.. name a
// line, with `along` at `dim`.
std::vector<Expr> coordinates(const KernelBuilder& kb, size_t rank, size_t dim, const Expr& along) {
  std::vector<Expr> at;
  for (size_t i = 0; i + 1 < rank; ++i) at.push_back(kb.x(i));
  at.insert(at.begin() + static_cast<std::ptrdiff_t>(dim), along);
  return at;
}

int identity(KernelBuilder& kb, const std::string& kind, DType acc) {
  return kb.constant(acc, kind == "prod" ? 1 : 0);
}

void segmented_scan(NodeLowering& n, const std::string& kind, const Shape& sizes, size_t dim,
                    DType acc, const ScanElement& element, const ScanFinish& finish) {
  const int64_t len = sizes[dim], segments = (len + kSegment - 1) / kSegment;
  const size_t rank = sizes.size();
  // Kernels over (lines..., segment): the segment is the last pointwise variable.
  Shape per_segment = sizes;
  per_segment[dim] = segments;
  Shape segment_lines = lines_of(sizes, dim);
  if (rank == 1) segment_lines.clear();
  segment_lines.push_back(segments);
  const size_t seg_var = segment_lines.size() - 1;
  const int totals = n.temp_buffer("segment_totals", acc, shape_numel(per_segment));
  const int upto = n.temp_buffer("segment_upto", acc, shape_numel(per_segment));
  // Segment s of a line, as an index into the per-segment buffers.
  const auto segment_at = [&](const KernelBuilder& kb, const Expr& s) {
    return kb.simplify_index(contiguous_index(per_segment, coordinates(kb, rank, dim, s)));
  };
  // The element at step r of this kernel's segment, and whether the step lies inside the
  // line. A step past the end reads the line's last element and contributes the identity, so
  // what a finish derives there (a masked_scatter's source position) is the last element's.
  const auto segment_element = [&](KernelBuilder& kb, int& inside) {
    const Expr pos = kb.x(seg_var) * Expr::constant(kSegment) + kb.r(0);
    inside = between(kb, pos, 0, Expr::constant(len));
    const int v =
        kb.cast(element(kb, coordinates(kb, rank, dim, clamp_index(pos, 0, len - 1))), acc);
    return kb.where(inside, v, identity(kb, kind, acc));
  };
  {  // each segment's total
    KernelBuilder kb = n.kernel(segment_lines, {kSegment});
    int inside = -1;
    kb.store(totals, segment_at(kb, kb.x(seg_var)),
             kb.reduce(kind, acc, segment_element(kb, inside)));
    n.emit(std::move(kb).finish());
  }
  {  // the totals up to and including each segment, per line
    KernelBuilder kb = n.kernel(lines_of(sizes, dim), {segments});
    const int v = kb.load(totals, acc, segment_at(kb, kb.r(0)));
    kb.store(upto, segment_at(kb, kb.r(0)), kb.scan(kind, acc, v));
    n.emit(std::move(kb).finish());
  }
  // Each segment scanned, then combined with the totals of the segments before it.
  KernelBuilder kb = n.kernel(segment_lines, {kSegment});
  int inside = -1;
  const int so_far = kb.scan(kind, acc, segment_element(kb, inside));
  const int not_first =
      kb.math("ge", DType::Bool, {kb.index(kb.x(seg_var)), kb.constant(DType::I64, 1)});
  const Expr previous = clamp_index(kb.x(seg_var) + Expr::constant(-1), 0, segments - 1);
  const int before =
      kb.where(not_first, kb.load(upto, acc, segment_at(kb, previous)), identity(kb, kind, acc));
  const Expr pos = kb.x(seg_var) * Expr::constant(kSegment) + kb.r(0);
  finish(kb, coordinates(kb, rank, dim, clamp_index(pos, 0, len - 1)),
         kb.math(kind == "prod" ? "mul" : "add", acc, {before, so_far}), inside);
}

}  // namespace

void scan(NodeLowering& n, const std::string& kind, const Shape& sizes, size_t dim, DType acc,
          const ScanElement& element, const ScanFinish& finish) {
  const Shape lines = lines_of(sizes, dim);
  if (sizes[dim] >= kLongLine && shape_numel(lines) < kFewLines)
    return segmented_scan(n, kind, sizes, dim, acc, element, finish);
  KernelBuilder kb = n.kernel(lines, {sizes[dim]});
  const std::vector<Expr> at = coordinates(kb, sizes.size(), dim, kb.r(0));
  const int so_far = kb.scan(kind, acc, kb.cast(element(kb, at), acc));
  finish(kb, at, so_far, -1);
}

}  // namespace kiln
