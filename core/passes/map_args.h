// A node's argument as it reads in a graph being rebuilt: value references through `map`
// (old value id -> new value), tensor lists item by item, everything else as it is.
#pragma once

#include <vector>

#include "core/graph/arg_value.h"

namespace kiln {

inline ArgValue map_arg(const ArgValue& a, const std::vector<ValueRef>& map) {
  if (const auto* r = std::get_if<ValueRef>(&a)) return map[static_cast<size_t>(r->id)];
  if (const auto* l = std::get_if<TensorList>(&a)) {
    TensorList out;
    for (const auto& item : l->items)
      out.items.push_back(item ? std::optional<ValueRef>(map[static_cast<size_t>(item->id)])
                               : std::nullopt);
    return out;
  }
  return a;
}

}  // namespace kiln
