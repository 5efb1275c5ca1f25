// The table of supported ATen overloads. Built once (OpRegistry::create) and passed to
// whatever needs it; it is immutable afterwards.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ops/op_def.h"
#include "core/support/result.h"

namespace kiln {

class OpRegistry {
 public:
  static Result<std::shared_ptr<const OpRegistry>> create();

  const OpDef* find(std::string_view name) const;
  std::vector<const OpDef*> all() const;
  // Every schema kiln knows, supported or not, for coverage reports and messages.
  const std::map<std::string, std::pair<Schema, std::string>, std::less<>>& schemas() const {
    return schemas_;
  }

 private:
  std::map<std::string, OpDef, std::less<>> ops_;
  std::map<std::string, std::pair<Schema, std::string>, std::less<>>
      schemas_;  // op -> (schema, category)
};

// The op tables, one per category file.
std::vector<OpRow> pointwise_ops();
std::vector<OpRow> reduction_ops();
std::vector<OpRow> view_ops();
std::vector<OpRow> creation_ops();
std::vector<OpRow> norm_ops();
std::vector<OpRow> cat_pad_ops();
std::vector<OpRow> indexing_ops();
std::vector<OpRow> scatter_ops();
std::vector<OpRow> matmul_ops();
std::vector<OpRow> composite_ops();
std::vector<OpRow> pool_ops();
std::vector<OpRow> pool_backward_ops();
std::vector<OpRow> conv_ops();
std::vector<OpRow> upsample_ops();
std::vector<OpRow> distance_ops();
std::vector<OpRow> fold_ops();
std::vector<OpRow> scan_sort_ops();
std::vector<OpRow> grid_sampler_ops();
std::vector<OpRow> norm_backward_ops();
std::vector<OpRow> embedding_bag_ops();
std::vector<OpRow> random_ops();
std::vector<OpRow> complex_ops();
std::vector<OpRow> dft_ops();

}  // namespace kiln
