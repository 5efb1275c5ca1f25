#include "core/graph/schema.h"

#include <cctype>
#include <cstdlib>

namespace kiln {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits on commas that are not inside (), [] or quotes.
std::vector<std::string_view> split_top_level(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\'' || c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (!trim(s.substr(start)).empty()) parts.push_back(trim(s.substr(start)));
  return parts;
}

std::optional<ArgKind> kind_of(std::string_view base) {
  if (base == "Tensor") return ArgKind::Tensor;
  if (base == "int" || base == "SymInt") return ArgKind::Int;
  if (base == "float") return ArgKind::Float;
  if (base == "bool") return ArgKind::Bool;
  if (base == "Scalar") return ArgKind::Scalar;
  if (base == "ScalarType") return ArgKind::ScalarType;
  if (base == "str") return ArgKind::Str;
  if (base == "Layout" || base == "Device" || base == "MemoryFormat" || base == "Generator") {
    return ArgKind::Ignored;
  }
  return std::nullopt;
}

std::optional<int64_t> parse_int(std::string_view s) {
  if (s.empty()) return std::nullopt;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  for (size_t j = i; j < s.size(); ++j) {
    if (!std::isdigit(static_cast<unsigned char>(s[j]))) return std::nullopt;
  }
  return std::strtoll(std::string(s).c_str(), nullptr, 10);
}

Result<ArgValue> parse_default(std::string_view text, const ArgSchema& arg) {
  if (text == "None" || arg.kind == ArgKind::Ignored) return ArgValue{None{}};
  if (arg.kind == ArgKind::ScalarType) {
    if (auto dtype = parse_dtype(text)) return ArgValue{*dtype};
  }
  if (text == "True") return ArgValue{true};
  if (text == "False") return ArgValue{false};
  // ATen's Reduction enum in nll_loss and friends.
  if (text == "Mean") return ArgValue{int64_t{1}};
  if (text == "Sum") return ArgValue{int64_t{2}};
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"')) {
    return ArgValue{std::string(text.substr(1, text.size() - 2))};
  }
  if (text.front() == '[') {
    IntList items;
    for (auto part : split_top_level(text.substr(1, text.size() - 2))) {
      auto v = parse_int(part);
      if (!v) return Error::internal("bad list default '" + std::string(text) + "'");
      items.push_back(*v);
    }
    return ArgValue{items};
  }
  if (auto v = parse_int(text)) {
    if (arg.kind == ArgKind::Float) return ArgValue{static_cast<double>(*v)};
    if (arg.is_list) return ArgValue{IntList(static_cast<size_t>(arg.list_size), *v)};
    return ArgValue{*v};
  }
  char* end = nullptr;
  const std::string owned(text);
  const double d = std::strtod(owned.c_str(), &end);
  if (end != nullptr && *end == '\0') return ArgValue{d};
  return Error::internal("cannot read default '" + owned + "' of argument '" + arg.name + "'");
}

Result<ArgSchema> parse_arg(std::string_view text, bool kwarg_only) {
  ArgSchema arg;
  arg.kwarg_only = kwarg_only;
  std::string_view default_text;
  if (const size_t eq = text.find('='); eq != std::string_view::npos) {
    default_text = trim(text.substr(eq + 1));
    text = trim(text.substr(0, eq));
  }
  const size_t space = text.rfind(' ');
  if (space == std::string_view::npos)
    return Error::internal("argument without a name: '" + std::string(text) + "'");
  arg.name = std::string(text.substr(space + 1));
  std::string_view type = trim(text.substr(0, space));
  size_t i = 0;
  while (i < type.size() && std::isalpha(static_cast<unsigned char>(type[i]))) ++i;
  const auto kind = kind_of(type.substr(0, i));
  if (!kind) return Error::internal("unknown argument type '" + std::string(type) + "'");
  arg.kind = *kind;
  while (i < type.size()) {
    const char c = type[i];
    if (c == '(') {
      const size_t close = type.find(')', i);
      arg.mutated = type.substr(i, close - i).find('!') != std::string_view::npos;
      i = close + 1;
    } else if (c == '?') {
      // "Tensor?[]": the elements are optional; "int[]?": the whole list is.
      if (arg.is_list)
        arg.optional = true;
      else
        arg.element_optional = true;
      ++i;
    } else if (c == '[') {
      const size_t close = type.find(']', i);
      arg.is_list = true;
      const auto n = parse_int(type.substr(i + 1, close - i - 1));
      arg.list_size = n ? static_cast<int>(*n) : 0;
      i = close + 1;
    } else {
      return Error::internal("cannot read argument type '" + std::string(type) + "'");
    }
  }
  // A lone "T?" is an optional value, not a list of optionals.
  if (!arg.is_list && arg.element_optional) {
    arg.optional = true;
    arg.element_optional = false;
  }
  if (!default_text.empty()) {
    auto value = parse_default(default_text, arg);
    if (!value) return std::move(value).error();
    arg.default_value = std::move(*value);
  }
  return arg;
}

}  // namespace

int Schema::index_of(std::string_view name) const {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

Result<Schema> parse_schema(std::string_view text) {
  const size_t open = text.find('(');
  const size_t arrow = text.rfind("->");
  if (open == std::string_view::npos || arrow == std::string_view::npos) {
    return Error::internal("not a schema: '" + std::string(text) + "'");
  }
  const size_t close = text.rfind(')', arrow);
  Schema schema;
  std::string name(trim(text.substr(0, open)));
  // "kiln::rfft(...)" names one of kiln's own ops (kiln.rfft.default); the rest are ATen's.
  std::string space = "aten.";
  if (name.rfind("kiln::", 0) == 0) {
    space = "kiln.";
    name.erase(0, 6);
  }
  if (name.find('.') == std::string::npos) name += ".default";
  schema.op = space + name;
  bool kwarg_only = false;
  for (auto part : split_top_level(text.substr(open + 1, close - open - 1))) {
    if (part == "*") {
      kwarg_only = true;
      continue;
    }
    auto arg = parse_arg(part, kwarg_only);
    if (!arg) return std::move(arg).error().with_context("schema of " + schema.op);
    schema.args.push_back(std::move(*arg));
  }
  std::string_view returns = trim(text.substr(arrow + 2));
  if (returns.front() == '(') {
    schema.num_outputs =
        static_cast<int>(split_top_level(returns.substr(1, returns.size() - 2)).size());
  } else if (returns.size() >= 2 && returns.substr(returns.size() - 2) == "[]") {
    schema.returns_list = true;
  } else if (returns == "Scalar") {
    schema.returns_scalar = true;
  } else if (returns == "()") {
    schema.num_outputs = 0;
  }
  return schema;
}

std::string_view arg_kind_name(ArgKind kind) {
  switch (kind) {
    case ArgKind::Tensor:
      return "Tensor";
    case ArgKind::Int:
      return "int";
    case ArgKind::Float:
      return "float";
    case ArgKind::Bool:
      return "bool";
    case ArgKind::Scalar:
      return "Scalar";
    case ArgKind::ScalarType:
      return "ScalarType";
    case ArgKind::Str:
      return "str";
    case ArgKind::Ignored:
      return "ignored";
  }
  return "?";
}

}  // namespace kiln
