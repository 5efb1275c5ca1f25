#include "core/ops/op_registry.h"

#include "core/ops/schemas/schema_tables.h"

namespace kiln {
namespace {

// Reads "op<TAB>schema<TAB>category" lines (the first line is a header).
Status read_schema_table(std::string_view table,
                         std::map<std::string, std::pair<Schema, std::string>, std::less<>>& out) {
  size_t start = table.find('\n') + 1;
  while (start < table.size()) {
    size_t end = table.find('\n', start);
    if (end == std::string_view::npos) end = table.size();
    const std::string_view line = table.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const size_t tab1 = line.find('\t');
    const size_t tab2 = line.find('\t', tab1 + 1);
    if (tab1 == std::string_view::npos || tab2 == std::string_view::npos) {
      return Error::internal("schema table line without three columns: " + std::string(line));
    }
    auto schema = parse_schema(line.substr(tab1 + 1, tab2 - tab1 - 1));
    if (!schema) return std::move(schema).error();
    const std::string name(line.substr(0, tab1));
    if (schema->op != name) {
      return Error::internal("schema table names " + name + " but its schema is " + schema->op);
    }
    out[name] = {std::move(*schema), std::string(line.substr(tab2 + 1))};
  }
  return Ok{};
}

}  // namespace

Result<std::shared_ptr<const OpRegistry>> OpRegistry::create() {
  auto registry = std::make_shared<OpRegistry>();
  for (auto table : {kCoreAtenSchemas, kExtraAtenSchemas}) {
    if (auto s = read_schema_table(table, registry->schemas_); !s) return std::move(s).error();
  }
  for (auto rows : {pointwise_ops(),
                    reduction_ops(),
                    view_ops(),
                    creation_ops(),
                    norm_ops(),
                    cat_pad_ops(),
                    indexing_ops(),
                    scatter_ops(),
                    matmul_ops(),
                    composite_ops(),
                    pool_ops(),
                    pool_backward_ops(),
                    conv_ops(),
                    upsample_ops(),
                    distance_ops(),
                    fold_ops(),
                    scan_sort_ops(),
                    grid_sampler_ops(),
                    norm_backward_ops(),
                    embedding_bag_ops(),
                    random_ops(),
                    complex_ops(),
                    dft_ops()}) {
    for (auto& row : rows) {
      auto schema = registry->schemas_.find(row.name);
      if (schema == registry->schemas_.end()) {
        return Error::internal("op table row " + row.name + " has no schema");
      }
      if (!row.infer || !row.reference) {
        return Error::internal("op table row " + row.name + " lacks inference or a reference");
      }
      OpDef def{row.name,
                schema->second.second,
                schema->second.first,
                std::move(row.infer),
                std::move(row.reference),
                std::move(row.decompose),
                std::move(row.view)};
      if (!registry->ops_.emplace(row.name, std::move(def)).second) {
        return Error::internal("op " + row.name + " is registered twice");
      }
    }
  }
  return std::shared_ptr<const OpRegistry>(std::move(registry));
}

const OpDef* OpRegistry::find(std::string_view name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<const OpDef*> OpRegistry::all() const {
  std::vector<const OpDef*> defs;
  for (const auto& [name, def] : ops_) defs.push_back(&def);
  return defs;
}

}  // namespace kiln
