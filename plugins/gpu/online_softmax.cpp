#include "plugins/gpu/online_softmax.h"

#include <algorithm>

namespace kiln::gpu {

SoftmaxSum softmax_sum(const kir::Kernel& k, const kir::Op* sum) {
  auto math = [&](const kir::Op* o, const char* name, size_t arg) {
    return o && o->kind == kir::OpKind::Math && o->name == name ? k.op(o->args.at(arg)) : nullptr;
  };
  if (!sum || sum->kind != kir::OpKind::Reduce || sum->name != "sum" ||
      (sum->dtype != kir::DType::F32 && sum->dtype != kir::DType::F64))
    return {};
  const kir::Op* e = k.op(sum->args.at(0));
  const kir::Op* d = math(e, "exp", 0);
  const kir::Op* max = math(d, "sub", 1);
  if (!max || max->kind != kir::OpKind::Reduce || max->name != "max" || max->dtype != sum->dtype ||
      max->args.at(0) != d->args.at(0))
    return {};
  return {max, d, e};
}

std::map<int, const kir::Op*> fold_online_softmax(const kir::Kernel& k,
                                                  kir_support::RowPlan& plan) {
  std::map<int, const kir::Op*> folded;
  for (size_t p = 0; p + 1 < plan.passes.size(); ++p) {
    const kir_support::RowPass& next = plan.passes[p + 1];
    if (next.reduces.size() != 1 || next.in_order) continue;
    const kir::Op* sum = next.reduces[0];
    const SoftmaxSum parts = softmax_sum(k, sum);
    const auto& here = plan.passes[p].reduces;
    if (!parts.max || std::find(here.begin(), here.end(), parts.max) == here.end()) continue;
    // Nothing else happens in the sum's pass: every op there is recomputed from the max's.
    const auto& before = plan.passes[p].ops;
    if (!std::all_of(next.ops.begin(), next.ops.end(), [&](const kir::Op* o) {
          return o == parts.sub || o == parts.exp || o == sum ||
                 std::find(before.begin(), before.end(), o) != before.end();
        }))
      continue;
    folded[parts.max->id] = sum;
    auto& stages = plan.stages;
    stages[p + 1].insert(stages[p + 1].end(), stages[p + 2].begin(), stages[p + 2].end());
    stages.erase(stages.begin() + static_cast<std::ptrdiff_t>(p + 2));
    plan.passes.erase(plan.passes.begin() + static_cast<std::ptrdiff_t>(p + 1));
  }
  return folded;
}

}  // namespace kiln::gpu
