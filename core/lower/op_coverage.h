// How each ATen op of the schema tables runs on a plugin: as a generated kernel, a library
// call the plugin offers, decomposed into other ops, on the host interpreter inside a
// compiled graph, or not at all. `kiln ops` prints it; a test pins the counts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

class OpRegistry;

enum class OpSupport { Kernel, Library, Decomposed, Host, Unsupported };
std::string_view support_name(OpSupport s);  // "kernel", "library", ...

struct OpCoverage {
  std::string op;        // "aten.add.Tensor"
  std::string category;  // the schema table's
  bool core_aten = false;
  OpSupport support = OpSupport::Unsupported;
  std::string note;        // when the answer depends on the arguments, or why
  bool by_nature = false;  // unsupported because no static, functional graph can hold it
};

// For a plugin offering the library calls `externs` ("mm f32", ...), every op of the
// schema tables (Core ATen first, then the extra set), sorted by name within each.
std::vector<OpCoverage> op_coverage(const OpRegistry& registry,
                                    const std::vector<std::string>& externs);

}  // namespace kiln
