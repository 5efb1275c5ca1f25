#include "core/graph/graph_binary.h"

#include <iterator>

#include "core/ops/op_registry.h"

namespace kiln {
namespace {

// Argument tags, fixed: they are part of the entry format.
enum class ArgTag : uint8_t { None, Ref, Bool, Int, Double, String, DType, Ints, Tensors, Floats };

void write_arg(ByteWriter& out, const ArgValue& a) {
  struct Visitor {
    ByteWriter& out;
    void tag(ArgTag t) { out.u8(static_cast<uint8_t>(t)); }
    void operator()(const None&) { tag(ArgTag::None); }
    void operator()(const ValueRef& r) {
      tag(ArgTag::Ref);
      out.i64(r.id);
    }
    void operator()(bool b) {
      tag(ArgTag::Bool);
      out.boolean(b);
    }
    void operator()(int64_t v) {
      tag(ArgTag::Int);
      out.i64(v);
    }
    void operator()(double v) {
      tag(ArgTag::Double);
      out.f64(v);
    }
    void operator()(const std::string& s) {
      tag(ArgTag::String);
      out.string(s);
    }
    void operator()(DType d) {
      tag(ArgTag::DType);
      write_dtype(out, d);
    }
    void operator()(const IntList& l) {
      tag(ArgTag::Ints);
      out.i64s(l);
    }
    void operator()(const FloatList& l) {
      tag(ArgTag::Floats);
      out.u64(l.size());
      for (double x : l) out.f64(x);
    }
    void operator()(const TensorList& l) {
      tag(ArgTag::Tensors);
      out.u64(l.items.size());
      for (const auto& item : l.items) out.i64(item ? item->id : -1);
    }
  };
  std::visit(Visitor{out}, a);
}

class GraphReader {
 public:
  GraphReader(ByteReader& in, size_t values) : in_(in), values_(values) {}

  ValueRef ref() { return checked(in_.i64()); }
  std::vector<ValueRef> refs() {
    std::vector<ValueRef> v(in_.count(8));
    for (ValueRef& r : v) r = ref();
    return v;
  }
  ArgValue arg() {
    switch (static_cast<ArgTag>(in_.u8())) {
      case ArgTag::None:
        return None{};
      case ArgTag::Ref:
        return ref();
      case ArgTag::Bool:
        return in_.boolean();
      case ArgTag::Int:
        return in_.i64();
      case ArgTag::Double:
        return in_.f64();
      case ArgTag::String:
        return in_.string();
      case ArgTag::DType:
        return read_dtype(in_);
      case ArgTag::Ints:
        return in_.i64s();
      case ArgTag::Floats: {
        FloatList l(in_.count(8));
        for (double& x : l) x = in_.f64();
        return l;
      }
      case ArgTag::Tensors: {
        TensorList l;
        l.items.resize(in_.count(8));
        for (auto& item : l.items) {
          const int64_t id = in_.i64();
          if (id != -1) item = checked(id);
        }
        return l;
      }
    }
    in_.fail();
    return None{};
  }

 private:
  ValueRef checked(int64_t id) {
    if (id < 0 || static_cast<uint64_t>(id) >= values_) in_.fail();
    return ValueRef{in_.ok() ? static_cast<int32_t>(id) : 0};
  }
  ByteReader& in_;
  size_t values_;
};

}  // namespace

void write_dtype(ByteWriter& out, DType dtype) {
  out.u8(static_cast<uint8_t>(dtype));
}

DType read_dtype(ByteReader& in) {
  const uint8_t d = in.u8();
  if (d >= std::size(kAllDTypes)) in.fail();
  return in.ok() ? kAllDTypes[d] : DType::F32;
}

void write_graph(ByteWriter& out, const Graph& graph) {
  out.string(graph.name);
  out.u64(graph.values.size());
  for (const Value& v : graph.values) {
    out.string(v.name);
    out.u8(static_cast<uint8_t>(v.kind));
    write_dtype(out, v.type.dtype);
    out.i64s(v.type.sizes);
    out.i64s(v.type.strides);
    out.i64(v.node);
    out.i64(v.output);
    out.boolean(v.random_range.has_value());
    if (v.random_range) {
      out.f64(v.random_range->first);
      out.f64(v.random_range->second);
    }
  }
  auto refs = [&](const std::vector<ValueRef>& v) {
    out.u64(v.size());
    for (ValueRef r : v) out.i64(r.id);
  };
  refs(graph.inputs);
  refs(graph.params);
  out.u64(graph.nodes.size());
  for (const Node& n : graph.nodes) {
    out.string(n.name);
    out.string(n.op->name);
    out.u64(n.args.size());
    for (const ArgValue& a : n.args) write_arg(out, a);
    refs(n.outputs);
  }
  refs(graph.outputs);
}

Result<Graph> read_graph(ByteReader& in, std::shared_ptr<const OpRegistry> registry) {
  Graph g;
  g.registry = registry;
  g.name = in.string();
  g.values.resize(in.count(32));
  for (Value& v : g.values) {
    v.name = in.string();
    v.kind = in.enumerator(ValueKind::NodeOutput);
    v.type.dtype = read_dtype(in);
    v.type.sizes = in.i64s();
    v.type.strides = in.i64s();
    if (v.type.sizes.size() != v.type.strides.size() || !check_shape(v.type.sizes)) in.fail();
    v.node = in.i32();
    v.output = in.i32();
    if (in.boolean()) {
      const double low = in.f64();
      v.random_range = std::make_pair(low, in.f64());
    }
  }
  GraphReader r(in, g.values.size());
  g.inputs = r.refs();
  g.params = r.refs();
  g.nodes.resize(in.count(24));
  for (Node& n : g.nodes) {
    n.name = in.string();
    const std::string op = in.string();
    n.op = in.ok() ? registry->find(op) : nullptr;
    if (in.ok() && n.op == nullptr)
      return Error::internal("compiled graph entry names op '" + op + "', which is not registered");
    n.args.resize(in.count(1));
    for (ArgValue& a : n.args) a = r.arg();
    n.outputs = r.refs();
  }
  g.outputs = r.refs();
  if (!in.ok()) return Error::internal("compiled graph entry: the graph is truncated or damaged");
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const Value& v = g.value(n.outputs[k]);
      if (v.kind != ValueKind::NodeOutput || v.node != static_cast<int32_t>(i) ||
          v.output != static_cast<int32_t>(k))
        return Error::internal("compiled graph entry: node '" + n.name + "' output " +
                               std::to_string(k) + " does not point back to it");
    }
  }
  if (auto s = verify_graph(g); !s)
    return std::move(s).error().with_context("compiled graph entry");
  return g;
}

}  // namespace kiln
