#include "core/graph/graph_json.h"

#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/graph/builder.h"
#include "core/graph/safetensors.h"
#include "core/ops/op_registry.h"
#include "core/ops/unsupported_ops.h"

namespace kiln {
namespace {

using nlohmann::json;

// Thrown inside this file only; parse_graph turns it into an Error.
struct FormatError {
  std::string message;
};

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw FormatError{path + ": " + why};
}

std::string index_path(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

const json& field(const json& object, const std::string& key, const std::string& path) {
  if (!object.contains(key)) fail(path, "missing field '" + key + "'");
  return object.at(key);
}

// Names end up in logs, errors and file names: no control characters.
void check_printable(const std::string& name, const std::string& path) {
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "\\x%02x", u);
      fail(path, std::string("a name may not hold control characters (found ") + code + ")");
    }
  }
}

// Inputs whose strides span more than this many bytes of storage are refused at load.
constexpr int64_t kMaxInputBytes = int64_t{1} << 40;

std::string string_field(const json& object, const std::string& key, const std::string& path) {
  const json& value = field(object, key, path);
  if (!value.is_string()) fail(path + "." + key, "must be a string");
  return value.get<std::string>();
}

void expect_keys(const json& object, const std::string& path, const std::set<std::string>& known) {
  if (!object.is_object()) fail(path, "must be an object");
  for (const auto& [key, unused] : object.items()) {
    if (known.count(key) != 0) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    fail(path, "unknown field '" + key + "' (expected: " + list + ")");
  }
}

DType read_dtype(const json& value, const std::string& path) {
  if (!value.is_string()) fail(path, "a dtype must be a string such as \"f32\"");
  auto dtype = parse_dtype(value.get<std::string>());
  if (!dtype)
    fail(path, "unknown dtype '" + value.get<std::string>() +
                   "' (expected bool, i8, u8, i16, i32, i64, f16, bf16, f32 or f64)");
  return *dtype;
}

Shape read_shape(const json& value, const std::string& path, bool allow_negative = false) {
  if (!value.is_array()) fail(path, "must be a list of integers");
  Shape shape;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_number_integer()) fail(index_path(path, i), "must be an integer");
    const int64_t v = value[i].get<int64_t>();
    if (v < 0 && !allow_negative) fail(index_path(path, i), "must not be negative");
    shape.push_back(v);
  }
  return shape;
}

// "f32[2, 3]" -> type; the annotation form of a node's "type".
TensorType read_type_annotation(const json& value, const std::string& path) {
  if (!value.is_string()) fail(path, "a type annotation is a string such as \"f32[2, 3]\"");
  const std::string text = value.get<std::string>();
  const size_t open = text.find('[');
  if (open == std::string::npos || text.back() != ']')
    fail(path, "cannot read type '" + text + "'");
  const DType dtype = read_dtype(text.substr(0, open), path);
  Shape shape;
  std::stringstream items(text.substr(open + 1, text.size() - open - 2));
  for (std::string item; std::getline(items, item, ',');) {
    try {
      size_t used = 0;
      shape.push_back(std::stoll(item, &used));
    } catch (...) {
      fail(path, "cannot read type '" + text + "'");
    }
  }
  return TensorType::contiguous(dtype, shape);
}

class GraphReader {
 public:
  GraphReader(std::shared_ptr<const OpRegistry> registry, const std::string& fallback_name)
      : builder_(std::move(registry), fallback_name) {}

  Graph read(const json& doc) {
    expect_keys(doc, "$", {"format", "name", "inputs", "params", "nodes", "outputs"});
    const std::string format = string_field(doc, "format", "$");
    if (format != "kiln.graph/1")
      fail("$.format", "unsupported format '" + format + "' (expected kiln.graph/1)");
    if (doc.contains("name")) {
      if (!doc["name"].is_string()) fail("name", "must be a string");
      check_printable(doc["name"].get<std::string>(), "name");
    }
    read_values(doc, "inputs", true);
    read_values(doc, "params", false);
    const json& nodes = field(doc, "nodes", "$");
    if (!nodes.is_array()) fail("nodes", "must be a list");
    for (size_t i = 0; i < nodes.size(); ++i) read_node(nodes[i], index_path("nodes", i));
    const json& outputs = field(doc, "outputs", "$");
    if (!outputs.is_array() || outputs.empty())
      fail("outputs", "must be a non-empty list of \"%value\" references");
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string path = index_path("outputs", i);
      if (!outputs[i].is_string()) fail(path, "must be a \"%value\" reference");
      builder_.output(resolve(outputs[i].get<std::string>(), path));
    }
    auto graph = builder_.finish();
    if (!graph) fail("$", graph.error().message());
    for (auto& value : graph->values) {
      if (auto it = ranges_.find(value.name); it != ranges_.end()) value.random_range = it->second;
    }
    if (doc.contains("name")) graph->name = doc["name"].get<std::string>();
    return std::move(*graph);
  }

 private:
  void read_values(const json& doc, const std::string& key, bool inputs) {
    if (!doc.contains(key)) return;
    const json& list = doc[key];
    if (!list.is_array()) fail(key, "must be a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string path = index_path(key, i);
      expect_keys(list[i], path, {"name", "dtype", "shape", "strides", "range"});
      const std::string name = string_field(list[i], "name", path);
      if (name.empty() || name.find('%') != std::string::npos)
        fail(path + ".name", "must be a non-empty name without '%'");
      check_printable(name, path + ".name");
      if (names_.count(name) != 0) fail(path + ".name", "the name '" + name + "' is used twice");
      names_.insert(name);
      TensorType type =
          TensorType::contiguous(read_dtype(field(list[i], "dtype", path), path + ".dtype"),
                                 read_shape(field(list[i], "shape", path), path + ".shape"));
      if (list[i].contains("strides")) {
        type.strides = read_shape(list[i]["strides"], path + ".strides");
        if (type.strides.size() != type.sizes.size())
          fail(path + ".strides", "must have one stride per dimension");
        for (int64_t stride : type.strides) {
          if (stride > kMaxDimSize)
            fail(path + ".strides", "a stride above 2^40 is beyond kiln's limit");
        }
        // The caller hands over storage of this extent: refuse what no memory could hold.
        const int64_t extent = storage_extent(type);
        if (extent > kMaxInputBytes / dtype_size(type.dtype)) {
          fail(path + ".strides", "strides " + shape_text(type.strides) + " over shape " +
                                      shape_text(type.sizes) + " span " + std::to_string(extent) +
                                      " elements; an input may span at most 2^40 bytes");
        }
      }
      ValueRef ref = inputs ? builder_.input(name, type) : builder_.param(name, type);
      if (!ref.valid()) fail(path, builder_.finish().error().message());
      if (list[i].contains("range")) {
        const json& range = list[i]["range"];
        if (!range.is_array() || range.size() != 2 || !range[0].is_number() ||
            !range[1].is_number() || !(range[0].get<double>() < range[1].get<double>())) {
          fail(path + ".range", "must be [low, high] with low < high");
        }
        ranges_[name] = {range[0].get<double>(), range[1].get<double>()};
      }
    }
  }

  ValueRef resolve(const std::string& text, const std::string& path) {
    if (text.size() < 2 || text[0] != '%')
      fail(path, "a value reference looks like \"%name\", got \"" + text + "\"");
    const std::string name = text.substr(1);
    ValueRef ref = builder_.find(name);
    // "%y.0" may name the only output of node "y".
    if (!ref.valid() && name.size() > 2 && name.compare(name.size() - 2, 2, ".0") == 0) {
      ref = builder_.find(name.substr(0, name.size() - 2));
    }
    if (!ref.valid())
      fail(path, "refers to '" + text + "', which is not defined before this point");
    return ref;
  }

  // JSON has no inf or nan: a Scalar or float argument spells them as strings.
  double read_special_float(const std::string& text, const std::string& path) {
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
    fail(path, "a number must be a JSON number or one of \"inf\", \"-inf\", \"nan\" (got \"" +
                   text + "\")");
  }

  // JSON -> argument value, guided by the schema argument it lands on (when known).
  ArgValue read_arg(const json& value, const ArgSchema* schema, const std::string& path) {
    if (value.is_null()) return None{};
    if (value.is_boolean()) return value.get<bool>();
    if (value.is_number_integer()) return value.get<int64_t>();
    if (value.is_number()) return value.get<double>();
    if (value.is_string()) {
      const std::string text = value.get<std::string>();
      if (!text.empty() && text[0] == '%') return resolve(text, path);
      if (schema != nullptr && schema->kind == ArgKind::ScalarType) return read_dtype(value, path);
      // inf and nan where a number may stand: a Scalar, a float, or a wrapped-scalar Tensor.
      if (schema != nullptr && (schema->kind == ArgKind::Scalar || schema->kind == ArgKind::Float ||
                                (schema->kind == ArgKind::Tensor && !schema->is_list)))
        return read_special_float(text, path);
      return text;
    }
    if (value.is_array()) {
      const bool tensors = schema != nullptr && schema->kind == ArgKind::Tensor;
      if (tensors) {
        TensorList list;
        for (size_t i = 0; i < value.size(); ++i) {
          if (value[i].is_null()) {
            list.items.push_back(std::nullopt);
          } else if (value[i].is_string()) {
            list.items.push_back(resolve(value[i].get<std::string>(), index_path(path, i)));
          } else {
            fail(index_path(path, i), "must be a \"%value\" reference or null");
          }
        }
        return list;
      }
      if (schema != nullptr && schema->kind == ArgKind::Float) {
        FloatList floats;
        for (size_t i = 0; i < value.size(); ++i) {
          if (!value[i].is_number()) fail(index_path(path, i), "must be a number");
          floats.push_back(value[i].get<double>());
        }
        return floats;
      }
      IntList ints;
      for (size_t i = 0; i < value.size(); ++i) {
        if (value[i].is_boolean()) {
          ints.push_back(value[i].get<bool>() ? 1 : 0);
        } else if (value[i].is_number_integer()) {
          ints.push_back(value[i].get<int64_t>());
        } else {
          fail(index_path(path, i), "must be an integer");
        }
      }
      return ints;
    }
    fail(path, "an argument cannot be a JSON object");
  }

  void read_node(const json& node, const std::string& path) {
    expect_keys(node, path, {"name", "op", "args", "kwargs", "type"});
    const std::string name = string_field(node, "name", path);
    if (name.empty() || name.find('%') != std::string::npos ||
        name.find('/') != std::string::npos) {
      fail(path + ".name", "must be a non-empty name without '%' or '/'");
    }
    check_printable(name, path + ".name");
    if (names_.count(name) != 0) fail(path + ".name", "the name '" + name + "' is used twice");
    names_.insert(name);
    const std::string op = string_field(node, "op", path);
    const auto& schemas = builder_.registry().schemas();
    auto known = schemas.find(op);
    const Schema* schema = known == schemas.end() ? nullptr : &known->second.first;
    if (schema == nullptr) fail(path + ".op", "unknown op '" + op + "' (node '" + name + "')");
    if (builder_.registry().find(op) == nullptr) {
      const Unsupported why = unsupported_reason(op);
      fail(path + ".op", "op '" + op + "' (node '" + name + "') is not supported by kiln" +
                             (why.reason.empty() ? " yet" : ": " + why.reason));
    }
    std::vector<ArgValue> args;
    if (node.contains("args")) {
      const json& list = node["args"];
      if (!list.is_array()) fail(path + ".args", "must be a list");
      for (size_t i = 0; i < list.size(); ++i) {
        const ArgSchema* arg = i < schema->args.size() ? &schema->args[i] : nullptr;
        args.push_back(read_arg(list[i], arg, index_path(path + ".args", i)));
      }
    }
    Kwargs kwargs;
    if (node.contains("kwargs")) {
      const json& map = node["kwargs"];
      if (!map.is_object()) fail(path + ".kwargs", "must be an object");
      for (const auto& [key, value] : map.items()) {
        const int index = schema->index_of(key);
        const ArgSchema* arg = index >= 0 ? &schema->args[static_cast<size_t>(index)] : nullptr;
        kwargs.emplace_back(key, read_arg(value, arg, path + ".kwargs." + key));
      }
    }
    auto outputs = builder_.try_ops(op, std::move(args), kwargs, name);
    if (!outputs) fail(path, "node '" + name + "': " + outputs.error().message());
    if (node.contains("type")) check_annotation(node["type"], *outputs, path + ".type", op);
  }

  void check_annotation(const json& annotation, const std::vector<ValueRef>& outputs,
                        const std::string& path, const std::string& op) {
    std::vector<TensorType> declared;
    if (annotation.is_array()) {
      for (size_t i = 0; i < annotation.size(); ++i)
        declared.push_back(read_type_annotation(annotation[i], index_path(path, i)));
    } else {
      declared.push_back(read_type_annotation(annotation, path));
    }
    if (declared.size() != outputs.size()) {
      fail(path, "declares " + std::to_string(declared.size()) + " outputs but " + op + " has " +
                     std::to_string(outputs.size()));
    }
    for (size_t k = 0; k < declared.size(); ++k) {
      const TensorType& inferred = builder_.type(outputs[k]);
      if (declared[k].dtype != inferred.dtype || declared[k].sizes != inferred.sizes) {
        fail(path, "declares " + declared[k].to_string() + " but " + op + " gives " +
                       inferred.to_string());
      }
    }
  }

  GraphBuilder builder_;
  std::set<std::string> names_;
  std::map<std::string, std::pair<double, double>> ranges_;
};

// "line L, column C" of a byte offset, for JSON syntax errors.
std::string line_column(std::string_view text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

}  // namespace

Result<Graph> parse_graph(std::string_view text, const std::string& source,
                          std::shared_ptr<const OpRegistry> registry) {
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    // Parse again with exceptions only to learn where it broke.
    try {
      const json again = json::parse(text);
      static_cast<void>(again);
    } catch (const json::parse_error& e) {
      return Error::user(source + ":" + line_column(text, e.byte == 0 ? 0 : e.byte - 1) +
                         ": malformed JSON");
    } catch (const json::exception& e) {
      // Not a syntax error: a number too large for any type, and the like.
      return Error::user(source + ": malformed JSON: " + e.what());
    }
    return Error::user(source + ": malformed JSON");
  }
  try {
    GraphReader reader(std::move(registry), "graph");
    return reader.read(doc);
  } catch (const FormatError& e) {
    return Error::user(source + ": " + e.message);
  } catch (const json::exception& e) {
    return Error::user(source + ": " + e.what());
  } catch (const std::bad_alloc&) {
    return Error::user(source + ": out of memory while reading the graph");
  } catch (const std::exception& e) {
    return Error::internal(source + ": " + e.what());
  }
}

Result<Graph> load_graph(const std::string& path, std::shared_ptr<const OpRegistry> registry) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::user("cannot read graph file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  return parse_graph(text.str(), path, std::move(registry));
}

Status attach_weights(Graph& graph, const std::map<std::string, HostTensor>& weights,
                      const std::string& source) {
  for (ValueRef p : graph.params) {
    const Value& v = graph.value(p);
    auto it = weights.find(v.name);
    if (it == weights.end())
      return Error::user(source + ": no tensor named '" + v.name + "' for parameter '" + v.name +
                         "'");
    if (it->second.dtype() != v.type.dtype || it->second.sizes() != v.type.sizes) {
      return Error::user(source + ": tensor '" + v.name + "' is " +
                         std::string(dtype_name(it->second.dtype())) +
                         shape_text(it->second.sizes()) + " but parameter '" + v.name + "' is " +
                         v.type.to_string());
    }
    graph.param_data[v.name] = it->second;
  }
  return Ok{};
}

}  // namespace kiln
