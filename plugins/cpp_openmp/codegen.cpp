#include "plugins/cpp_openmp/codegen.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "plugins/cpp_openmp/codegen_ops.h"
#include "plugins/cpp_openmp/loop_text.h"
#include "plugins/cpp_openmp/reduction_codegen.h"

namespace kiln::cpu {
namespace {

using kir::OpKind;

std::string buffer_params(const kir::Kernel& k) {
  std::string s;
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const kir::Buffer& b = k.buffers[i];
    const std::string t = c_type(b.dtype);
    const bool read_only = b.role == kir::Role::In;
    s += "  " + std::string(read_only ? "const " : "") + t + "* __restrict " + b.name +
         " = static_cast<" + (read_only ? "const " : "") + t + "*>(buffers[" + std::to_string(i) +
         "]);\n";
  }
  return s;
}

// A tile's rows in blocks of kLanes: each block walks its columns a vector at a time, reads
// every transposed load as one square of kLanes row vectors transposed in registers
// (krt::load_transposed), then runs the body per row with that row's vector of the square
// (`tbody`); columns past the last whole vector run per element. The rows after the last
// whole block are left to the per-row loop that follows.
std::string transposed_blocks(const kir::Kernel& k, const std::vector<const kir::Op*>& ops,
                              const std::vector<const kir::Op*>& squares, const std::string& row,
                              const std::string& inner, const std::string& row_start,
                              const std::string& row_end) {
  const ExprContext ctx{inner, false};
  const auto tr = [](const kir::Op* l) { return "tr" + std::to_string(l->id); };
  std::string s;
  for (const kir::Op* l : squares)
    s += "    krt::V<" + std::string(c_type(l->dtype)) + "> " + tr(l) + "[krt::kLanes];\n";
  s += "    int64_t blk = 0;\n";
  s += "    auto tbody = [&](int64_t " + inner +
       ") __attribute__((always_inline)) {\n      using L = krt::LV;\n";
  for (const kir::Op* op : ops) {
    const bool square = std::find(squares.begin(), squares.end(), op) != squares.end();
    s += "      " +
         (square ? "const auto v" + std::to_string(op->id) + " = " + tr(op) + "[blk];"
                 : op_c(k, *op, ctx)) +
         "\n";
  }
  s += "    };\n";
  s += "    for (" + row + " = " + row_start + "; " + row + " + krt::kLanes <= " + row_end + "; " +
       row + " += krt::kLanes) {\n";
  s += "      const int64_t first = " + row + ";\n";
  s += "      int64_t " + inner + " = lo;\n";
  s += "      for (; " + inner + " + krt::kLanes <= hi; " + inner + " += krt::kLanes) {\n";
  for (const kir::Op* l : squares)
    s += "        krt::load_transposed<" + std::string(c_type(l->dtype)) + ">(" + l->name + ", " +
         expr_c(l->index, ctx) + ", " + std::to_string(*coefficient(l->index, inner)) + ", " +
         tr(l) + ");\n";
  s += "        for (blk = 0; blk < krt::kLanes; ++blk) {\n";
  s += "          " + row + " = first + blk;\n";
  s += "          tbody(" + inner + ");\n";
  s += "        }\n";
  s += "        " + row + " = first;\n";
  s += "      }\n";
  s += "      for (int64_t r = 0; r < krt::kLanes; ++r) {\n";
  s += "        " + row + " = first + r;\n";
  s += "        for (int64_t c = " + inner + "; c < hi; ++c) body(krt::L1{}, c);\n";
  s += "      }\n";
  s += "      " + row + " = first;\n";
  s += "    }\n";
  return s;
}

// `if (!(masks)) continue;` when every store and scatter of the row's loop is masked by a
// value fixed along the row and nothing else there has an effect (no index check, no integer
// math that can fail): a row all masked off is skipped whole, not lane by lane (an embedding
// bag's positions whose rows were summed per chunk).
std::string skip_masked_rows(const std::vector<const kir::Op*>& rest, const std::set<int>& fixed) {
  std::set<int> masks;
  for (const kir::Op* op : rest) {
    const bool writes = op->kind == OpKind::Store || op->kind == OpKind::Scatter;
    if (writes && !fixed.contains(op->mask)) return "";
    if (writes) masks.insert(op->mask);
    if (op->kind == OpKind::CheckIndex) return "";
    if (op->kind == OpKind::Math && !kir::is_float(op->dtype) && op->dtype != kir::DType::Bool)
      return "";
  }
  if (masks.empty()) return "";
  std::string any;
  for (int m : masks)
    any += (any.empty() ? "" : " || ") + std::string("bool(s") + std::to_string(m) + ")";
  return "    if (!(" + any + ")) continue;\n";
}

std::string pointwise(const kir::Kernel& k, const CodegenOptions& o) {
  std::vector<const kir::Op*> ops;
  for (const auto& op : k.body) ops.push_back(&op);
  const size_t n = k.ranges.size();
  if (n == 0) {
    return "  {\n    using L = krt::L1;\n" + body_lines(k, ops, {}, "    ") + "  }\n";
  }
  const std::string inner = "x" + std::to_string(n - 1);
  const int64_t outer = product(k.ranges, 0, n - 1), size = k.ranges[n - 1];
  // Too few rows to keep every thread busy (a 1-D tensor has one): the inner dim is cut
  // into chunks of whole vectors, and the parallel loop runs over rows x chunks.
  const int64_t want = 4 * static_cast<int64_t>(std::max(o.threads, 1));
  int64_t chunks = 1, chunk = size;
  if (outer > 0 && outer < want && size >= 2 * o.min_inner_chunk) {
    chunks = std::min((want + outer - 1) / outer, size / o.min_inner_chunk);
    chunk = ((size + chunks - 1) / chunks + 7) / 8 * 8;
    chunks = (size + chunk - 1) / chunk;
  }
  std::string s = parallel_for(o.threads, outer * size, o.parallel_threshold);
  std::string lo = "0", hi = num(size);
  // A load that walks memory with a stride along the inner dim (a transpose) touches a new
  // cache line and page per lane: walk rows x cols in tiles instead, so a tile's lines and
  // pages are reused across its rows.
  const bool tiled = chunks == 1 && reads_transposed(k);
  const std::string row = n >= 2 ? "x" + std::to_string(n - 2) : "";
  if (tiled) {
    const int64_t rows = k.ranges[n - 2], rest = product(k.ranges, 0, n - 2);
    const int64_t row_tiles = (rows + o.tile_rows - 1) / o.tile_rows;
    const int64_t col_tiles = (size + o.tile_cols - 1) / o.tile_cols;
    s += "  for (int64_t t = 0; t < " + num(rest * row_tiles * col_tiles) + "; ++t) {\n";
    s += "    const int64_t o = t / " + num(row_tiles * col_tiles) + ";\n";
    s += "    const int64_t rb = (t / " + num(col_tiles) + ") % " + num(row_tiles) + ", cb = t % " +
         num(col_tiles) + ";\n";
    s += unflatten(k.ranges, n - 2, "x", "o");
    s += "    const int64_t lo = cb * " + num(o.tile_cols) + ", hi = krt::imin(lo + " +
         num(o.tile_cols) + ", " + num(size) + ");\n";
    s += "    int64_t " + row + " = 0;\n";
    lo = "lo";
    hi = "hi";
  } else if (chunks == 1) {
    s += "  for (int64_t o = 0; o < " + num(outer) + "; ++o) {\n";
    s += unflatten(k.ranges, n - 1, "x", "o");
  } else {
    s += "  for (int64_t oc = 0; oc < " + num(outer * chunks) + "; ++oc) {\n";
    s += "    const int64_t o = oc / " + num(chunks) + ";\n";
    s += "    const int64_t lo = (oc % " + num(chunks) + ") * " + num(chunk) +
         ", hi = krt::imin(lo + " + num(chunk) + ", " + num(size) + ");\n";
    s += unflatten(k.ranges, n - 1, "x", "o");
    lo = "lo";
    hi = "hi";
  }
  // Values fixed along the row (an embedding's row number and its bounds check) are
  // computed once per row, not once per lane: at 16 lanes, checking the same index in every
  // lane cost more than the copy. Tiled kernels change rows inside the loop; they keep theirs.
  const std::set<int> fixed = tiled || size == 0 ? std::set<int>{} : invariant_along(k, inner);
  const bool hoist = std::any_of(fixed.begin(), fixed.end(),
                                 [&](int id) { return k.op(id)->kind != OpKind::Const; });
  std::vector<std::string> lines;
  ExprContext ctx{inner, false};
  if (hoist) {
    ctx.row_scalars = &fixed;
    std::vector<const kir::Op*> row_ops, rest;
    for (const kir::Op* op : ops) (fixed.contains(op->id) ? row_ops : rest).push_back(op);
    ExprContext row_ctx{"", false, "s"};
    row_ctx.row_scalars = &fixed;
    s += "    using L = krt::L1;\n" + body_lines(k, row_ops, row_ctx, "    ");
    std::set<int> read;
    for (const kir::Op* op : rest) {
      for (int a : op->args) read.insert(a);
      if (op->mask >= 0) read.insert(op->mask);
    }
    for (int id : read)
      if (fixed.contains(id)) lines.push_back(splat_row_value(k, id));
    s += skip_masked_rows(rest, fixed);
    ops = rest;
  }
  for (const kir::Op* op : ops) lines.push_back(op_c(k, *op, ctx));
  s += "    auto body = [&](auto lanes, int64_t " + inner +
       ") __attribute__((always_inline)) {\n      using L = decltype(lanes);\n";
  for (const std::string& line : lines) s += "      " + line + "\n";
  s += "    };\n";
  const bool vectorized = o.vector_width > 1;
  const bool grouped = o.groups && vectorized && ops.size() <= kMaxGroupedOps && size >= kGroup * 8;
  // The body over kGroup consecutive vectors, op by op across them: independent work sits
  // side by side, so a chain of opaque calls (Sleef) does not serialize one vector at a time.
  if (grouped) s += group_lambda("    ", "group", "int64_t " + inner, "", lines, {inner});
  if (tiled) {  // tiled kernels have a row dim (n >= 2)
    const std::string row_start = "rb * " + num(o.tile_rows);
    const std::string row_end = "krt::imin(rb * " + num(o.tile_rows) + " + " + num(o.tile_rows) +
                                ", " + num(k.ranges[n - 2]) + ")";
    const std::vector<const kir::Op*> squares =
        vectorized ? block_transposed_loads(k) : std::vector<const kir::Op*>{};
    if (!squares.empty()) s += transposed_blocks(k, ops, squares, row, inner, row_start, row_end);
    const std::string from = squares.empty() ? row + " = " + row_start : "";
    s += "    for (" + from + "; " + row + " < " + row_end + "; ++" + row + ") {\n";
  }
  s += "    int64_t " + inner + " = " + lo + ";\n";
  s += vector_loops("    ", inner, hi, grouped ? "group" : "", "body", "", vectorized);
  if (tiled) s += "    }\n";
  return s + "  }\n";
}

}  // namespace

std::string kernel_symbol(const std::string& kernel_name) {
  return "kiln_kernel_" + kernel_name;
}

std::string generate_source(const std::vector<kir::Kernel>& kernels, const CodegenOptions& o) {
  std::string s =
      "#define KRT_LANES " + std::to_string(o.vector_width) + "\n#include \"kiln_cpu_runtime.h\"\n";
  for (const kir::Kernel& k : kernels) {
    if (k.kind == "extern") continue;
    try {
      s += "\n// " + k.name + " (" + k.kind + ")\n";
      for (char c : k.name) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
          throw std::runtime_error("a kernel name may hold only letters, digits and '_'");
      }
      // The bytes each buffer parameter spans, so launch can check what it is given.
      s += "extern \"C\" __attribute__((visibility(\"default\"))) const int64_t kiln_bytes_" +
           k.name + "[] = {";
      for (const auto& b : k.buffers)
        s += std::to_string(b.elements * kir::dtype_size(b.dtype)) + "LL, ";
      s += "-1};\n";
      s += "extern \"C\" __attribute__((visibility(\"default\"))) void " + kernel_symbol(k.name) +
           "(void* const* buffers, krt::Status* st) {\n";
      s += buffer_params(k);
      s += "  (void)st;\n";
      s += k.kind == "reduction" ? reduction_kernel(k, o) : pointwise(k, o);
      s += "}\n";
    } catch (const std::exception& e) {
      throw std::runtime_error("kernel " + k.name + ": " + e.what());
    }
  }
  return s;
}

}  // namespace kiln::cpu
