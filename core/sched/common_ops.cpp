#include "core/sched/common_ops.h"

#include <cstring>
#include <map>

#include "core/expr/simplify.h"

namespace kiln {
namespace {

// Everything that decides an op's value, as text. Doubles go in by their bits, so -0.0 and
// 0.0 (or two NaNs) never merge by accident.
std::string key_of(const LoopOp& op) {
  auto bits = [](double d) {
    uint64_t u = 0;
    std::memcpy(&u, &d, sizeof u);
    return std::to_string(u);
  };
  std::string k = std::to_string(static_cast<int>(op.kind)) + "|" +
                  std::to_string(static_cast<int>(op.dtype)) + "|" + op.name + "|";
  for (int a : op.args) k += std::to_string(a) + ",";
  k += "|" + std::to_string(op.buffer) + "|" + op.index.to_string() + "|" +
       std::to_string(op.mask) + "|" + bits(op.other) + "|" + bits(op.value) + "|" +
       std::to_string(op.number);
  return k;
}

}  // namespace

void eliminate_common_ops(LoopKernel& k) {
  std::map<std::string, int> seen;
  std::map<int, int> replaced;  // old id -> surviving id
  std::map<int, int> dense;     // surviving id -> new dense id
  std::map<std::string, Expr> t_names;
  std::vector<LoopOp> body;
  for (LoopOp op : k.body) {
    for (int& a : op.args) a = dense.at(replaced.at(a));
    if (op.mask >= 0) op.mask = dense.at(replaced.at(op.mask));
    op.index = substitute(op.index, t_names);
    if (!defines_value(op)) {
      body.push_back(std::move(op));
      continue;
    }
    const int old = op.id;
    op.id = -1;
    const std::string key = key_of(op);
    if (auto it = seen.find(key); it != seen.end()) {
      replaced[old] = it->second;
    } else {
      const int id = static_cast<int>(dense.size());
      seen[key] = old;
      replaced[old] = old;
      dense[old] = id;
      op.id = id;
      body.push_back(std::move(op));
    }
    t_names["t" + std::to_string(old)] =
        Expr::var("t" + std::to_string(dense.at(replaced.at(old))));
  }
  k.body = std::move(body);
}

}  // namespace kiln
