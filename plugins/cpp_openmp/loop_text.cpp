#include "plugins/cpp_openmp/loop_text.h"

#include <algorithm>
#include <cctype>

namespace kiln::cpu {
namespace {

// `line` for copy `j` of a group: every SSA name vN becomes vN_j and each variable in
// `moved` (the vectorized one and what derives from it) moves j vectors along.
std::string group_copy(const std::string& line, int j, const std::set<std::string>& moved) {
  std::string out;
  size_t i = 0;
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  while (i < line.size()) {
    if (!ident(line[i])) {
      out += line[i++];
      continue;
    }
    size_t e = i;
    while (e < line.size() && ident(line[e])) ++e;
    const std::string tok = line.substr(i, e - i);
    const bool ssa = tok.size() > 1 && tok[0] == 'v' &&
                     tok.find_first_not_of("0123456789", 1) == std::string::npos;
    if (ssa) {
      out += tok + "_" + std::to_string(j);
    } else if (tok == "group_member_0") {  // a reduction's running set (kiln_cpu_runtime.h)
      out += "group_member_" + std::to_string(j);
    } else if (moved.contains(tok)) {
      out += "(" + tok + " + " + std::to_string(j) + " * krt::kLanes)";
    } else {
      out += tok;
    }
    i = e;
  }
  return out;
}

}  // namespace

int64_t product(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

std::string num(int64_t v) {
  return std::to_string(v) + "LL";
}

std::string unflatten(const std::vector<int64_t>& sizes, size_t count, const std::string& prefix,
                      const std::string& flat) {
  std::string s;
  for (size_t i = 0; i < count; ++i) {
    s += "    const int64_t " + prefix + std::to_string(i) + " = (" + flat + " / " +
         num(product(sizes, i + 1, count)) + ") % " + num(sizes[i]) + ";\n";
  }
  return s;
}

std::string body_lines(const kir::Kernel& k, const std::vector<const kir::Op*>& ops,
                       const ExprContext& ctx, const std::string& indent) {
  std::string s;
  for (const kir::Op* op : ops) s += indent + op_c(k, *op, ctx) + "\n";
  return s;
}

std::string group_lambda(const std::string& indent, const std::string& name,
                         const std::string& params, const std::string& preamble,
                         const std::vector<std::string>& lines,
                         const std::set<std::string>& moved) {
  std::string s = indent + "auto " + name + " = [&](" + params +
                  ") __attribute__((always_inline)) {\n" + indent + "  using L = krt::LV;\n" +
                  preamble;
  for (const std::string& line : lines)
    for (int j = 0; j < kGroup; ++j) s += indent + "  " + group_copy(line, j, moved) + "\n";
  return s + indent + "};\n";
}

std::string vector_loops(const std::string& indent, const std::string& var, const std::string& hi,
                         const std::string& group, const std::string& body, const std::string& lead,
                         bool vectorized) {
  std::string s;
  if (!group.empty()) {
    s += indent + "for (; " + var + " + " + std::to_string(kGroup) + " * krt::kLanes <= " + hi +
         "; " + var + " += " + std::to_string(kGroup) + " * krt::kLanes) " + group + "(" + lead +
         var + ");\n";
  }
  if (vectorized) {
    s += indent + "for (; " + var + " + krt::kLanes <= " + hi + "; " + var + " += krt::kLanes) " +
         body + "(krt::LV{}, " + lead + var + ");\n";
  }
  return s + indent + "for (; " + var + " < " + hi + "; ++" + var + ") " + body + "(krt::L1{}, " +
         lead + var + ");\n";
}

std::string parallel_for(int threads, int64_t work, int64_t threshold) {
  // Below the threshold the loop stays serial: no OpenMP region at all, since even one that
  // an if() clause turns off sets up a team on every call.
  if (work < threshold || threads <= 1) return "";
  return "#pragma omp parallel for schedule(static) num_threads(" + std::to_string(threads) + ")\n";
}

}  // namespace kiln::cpu
