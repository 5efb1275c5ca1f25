#include "core/lower/op_coverage.h"

#include <set>
#include <utility>

#include "core/lower/attention_library_call.h"
#include "core/lower/lower_graph.h"
#include "core/ops/complex_forms.h"
#include "core/ops/op_registry.h"
#include "core/ops/schemas/schema_tables.h"
#include "core/ops/unsupported_ops.h"

namespace kiln {
namespace {

std::set<std::string> core_aten_names() {
  std::set<std::string> names;
  std::string_view text = kCoreAtenSchemas;
  bool header = true;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty() || std::exchange(header, false)) continue;
    names.insert(std::string(line.substr(0, line.find('\t'))));
  }
  return names;
}

bool offers(const std::vector<std::string>& externs, std::string_view name) {
  for (const std::string& e : externs)
    if (e.rfind(std::string(name) + " ", 0) == 0 || e == name) return true;
  return false;
}

OpCoverage classify(const OpRegistry& registry, const std::string& op,
                    const std::vector<std::string>& externs) {
  OpCoverage c;
  c.op = op;
  const OpDef* def = registry.find(op);
  if (!def) {
    c.support = OpSupport::Unsupported;
    const Unsupported why = unsupported_reason(op);
    c.by_nature = why.by_nature;
    c.note = why.reason;
    return c;
  }
  if (op == "aten.mm.default" || op == "aten.bmm.default") {
    const bool library = offers(externs, op == "aten.mm.default" ? "mm" : "bmm");
    c.support = library ? OpSupport::Library : OpSupport::Kernel;
    c.note = library ? "a generated matmul where the dtype or layout says so" : "";
    return c;
  }
  if ((op == "aten.convolution.default" && offers(externs, "conv2d")) ||
      (op == "aten.convolution_backward.default" && offers(externs, "conv2d_backward_input"))) {
    c.support = OpSupport::Library;
    c.note = "2-d; other convolutions, and shapes the autotuner gives them, generated";
    return c;
  }
  if (op == kAttentionOp) {
    const bool library = offers(externs, "attention");
    c.support = library ? OpSupport::Library : OpSupport::Decomposed;
    c.note = library ? "f16/bf16, head dims 16k up to 128; others decomposed" : "";
    return c;
  }
  if (def->is_primitive() && has_complex_form(op) && !has_lowering_rule(op) && !def->view) {
    c.support = OpSupport::Decomposed;
    c.note = "complex lowering: real ops on f32 pairs (FFTs as DFT matrix products)";
    return c;
  }
  if (has_lowering_rule(op) || (def->view && def->is_primitive())) {
    c.support = OpSupport::Kernel;
    if (def->view && !has_lowering_rule(op)) c.note = "a view: an index remap in its readers";
    return c;
  }
  c.support = def->is_primitive() ? OpSupport::Host : OpSupport::Decomposed;
  return c;
}

}  // namespace

std::string_view support_name(OpSupport s) {
  switch (s) {
    case OpSupport::Kernel:
      return "kernel";
    case OpSupport::Library:
      return "library";
    case OpSupport::Decomposed:
      return "decomposed";
    case OpSupport::Host:
      return "host";
    case OpSupport::Unsupported:
      return "unsupported";
  }
  return "unsupported";
}

std::vector<OpCoverage> op_coverage(const OpRegistry& registry,
                                    const std::vector<std::string>& externs) {
  const std::set<std::string> core = core_aten_names();
  std::vector<OpCoverage> rows;
  for (const bool core_pass : {true, false})
    for (const auto& [op, schema] : registry.schemas()) {
      if (core.contains(op) != core_pass) continue;
      OpCoverage c = classify(registry, op, externs);
      c.category = schema.second;
      c.core_aten = core_pass;
      rows.push_back(std::move(c));
    }
  return rows;
}

}  // namespace kiln
