#include "tests/unit/random_graph.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

#include "core/ops/op_registry.h"
#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

using Rng = std::mt19937_64;

// Ops left out, each for a reason a differential test cannot work around: results whose
// error grows without bound near a pole or at integer boundaries (tan, pow, the gamma
// family), or random generation.
const std::set<std::string> kLeftOut = {
    "aten.tan.default",    "aten.pow.Tensor_Tensor", "aten.pow.Tensor_Scalar",
    "aten.pow.Scalar",     "aten.lgamma.default",    "aten.digamma.default",
    "aten.erfinv.default", "aten.polygamma.default", "aten.bernoulli.default",
};

// Integer division and modulo by a random divisor: a zero divisor is an error, not a value.
bool divides(const std::string& op) {
  for (const char* d : {"div", "remainder", "fmod", "floor_divide"})
    if (op.find(d) != std::string::npos) return true;
  return false;
}

// Sums, means, products and moments round differently in every order: only on f64, where
// the order does not show at the tolerance.
bool accumulates(const std::string& op) {
  for (const char* a : {"sum", "mean", "prod", "var", "std", "logsumexp", "norm", "cumsum",
                        "softmax", "log_softmax", "native_layer_norm", "native_batch_norm",
                        "native_group_norm", "mm", "bmm", "addmm", "dot"})
    if (op.find(std::string(".") + a) != std::string::npos ||
        op.find(std::string("_") + a) != std::string::npos)
      return true;
  return false;
}

template <class T>
const T& pick(Rng& rng, const std::vector<T>& items) {
  return items[std::uniform_int_distribution<size_t>(0, items.size() - 1)(rng)];
}
bool coin(Rng& rng, double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}
int64_t between(Rng& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

Shape base_shape(Rng& rng) {
  static const std::vector<int64_t> dims = {1, 2, 3, 5, 7, 13, 17, 31, 2, 3, 5, 7};
  Shape s(static_cast<size_t>(between(rng, 0, 3)));
  for (auto& d : s) d = coin(rng, 0.04) ? 0 : pick(rng, dims);
  return s;
}

DType graph_dtype(Rng& rng) {
  static const std::vector<DType> dtypes = {DType::F32, DType::F32,  DType::F32, DType::F64,
                                            DType::F16, DType::BF16, DType::I32, DType::I64,
                                            DType::I8,  DType::Bool};
  return pick(rng, dtypes);
}

// An input of `base`'s shape, or one that broadcasts against it (dims set to 1, leading dims
// dropped), contiguous, transposed or a strided slice.
TensorType input_type(Rng& rng, DType dtype, const Shape& base) {
  Shape s = base;
  if (coin(rng, 0.3))
    for (auto& d : s)
      if (coin(rng, 0.5)) d = 1;
  if (!s.empty() && coin(rng, 0.2)) s.erase(s.begin());
  const double layout = std::uniform_real_distribution<double>(0, 1)(rng);
  if (s.size() >= 2 && layout < 0.2) {
    std::vector<int> perm(s.size());
    std::iota(perm.rbegin(), perm.rend(), 0);
    return TensorType{dtype, s, permuted_strides(s, perm)};
  }
  if (!s.empty() && layout < 0.35) return sliced_type(dtype, s, 2);
  return TensorType::contiguous(dtype, s);
}

struct Filler {
  Rng& rng;
  std::vector<ValueRef>& values;
  GraphBuilder& b;

  int64_t rank_of(const std::optional<ValueRef>& t) const { return t ? b.type(*t).rank() : 0; }
  int64_t dim(const std::optional<ValueRef>& t) {
    const int64_t r = std::max<int64_t>(rank_of(t), 1);
    return between(rng, -r, r - 1);
  }
  IntList dims(const std::optional<ValueRef>& t, bool permutation) {
    const int64_t r = rank_of(t);
    IntList all(static_cast<size_t>(r));
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    if (!permutation) all.resize(static_cast<size_t>(between(rng, r > 0 ? 1 : 0, r)));
    return all;
  }
  // A value for argument `a`; nullopt when the generator leaves it to its default.
  std::optional<ArgValue> fill(const ArgSchema& a, const std::optional<ValueRef>& first,
                               bool later_tensor) {
    const std::string& n = a.name;
    if (a.default_value && coin(rng, 0.6)) return std::nullopt;
    switch (a.kind) {
      case ArgKind::Tensor:
        if (a.is_list) {
          TensorList list;
          for (int64_t i = between(rng, 2, 3); i > 0; --i) list.items.push_back(pick(rng, values));
          return list;
        }
        if (later_tensor && coin(rng, 0.2)) return pick(rng, std::vector<double>{0.5, -2.0, 3.0});
        return pick(rng, values);
      case ArgKind::Int:
        if (a.is_list) {
          if (n == "dims" || n == "dim") return dims(first, false);
          if (n == "perm") return dims(first, true);
          if (n == "size" || n == "shape") {
            if (!first) return std::nullopt;
            Shape s = b.type(*first).sizes;
            if (coin(rng, 0.5)) return IntList{-1};
            s.insert(s.begin(), between(rng, 1, 3));  // expand: a new leading dim
            return s;
          }
          if (n == "pad") return IntList{between(rng, 0, 2), between(rng, 0, 2)};
          return std::nullopt;
        }
        if (n.find("dim") != std::string::npos) return dim(first);
        if (n == "step") return between(rng, 1, 3);
        return between(rng, -3, 5);
      case ArgKind::Float:
      case ArgKind::Scalar:
        if (a.is_list) return std::nullopt;
        return pick(rng, std::vector<double>{-2.5, -1.0, 0.5, 1.0, 2.0, 3.5});
      case ArgKind::Bool:
        return coin(rng, 0.5);
      case ArgKind::ScalarType:
        return pick(rng, std::vector<DType>{DType::F32, DType::F64, DType::F16, DType::I64,
                                            DType::I32, DType::Bool});
      default:
        return std::nullopt;
    }
  }
};

}  // namespace

std::vector<std::string> fuzzable_ops(const OpRegistry& registry) {
  std::vector<std::string> ops;
  for (const auto& [name, entry] : registry.schemas()) {
    const std::string& category = entry.second;
    if (category != "pointwise" && category != "reduction" && category != "view" &&
        category != "cat_pad")
      continue;
    if (registry.find(name) == nullptr || kLeftOut.count(name) != 0) continue;
    bool ok = !entry.first.returns_scalar;
    for (const ArgSchema& a : entry.first.args) ok = ok && !a.mutated;
    if (ok) ops.push_back(name);
  }
  return ops;
}

RandomSubgraph add_random_subgraph(GraphBuilder& b, uint64_t seed, const std::string& prefix,
                                   const RandomGraphOptions& options) {
  Rng rng(seed);
  RandomSubgraph out;
  static thread_local std::vector<std::string> ops;
  if (ops.empty()) ops = fuzzable_ops(b.registry());
  const DType dtype = graph_dtype(rng);
  const Shape base = base_shape(rng);
  std::vector<ValueRef> values;
  const int inputs = static_cast<int>(between(rng, 1, options.max_inputs));
  for (int i = 0; i < inputs; ++i) {
    // Mixed dtypes bring ints and bools in, never a second float dtype: an f32 value feeding
    // an f64 result carries f32 rounding the f64 tolerance would call a mismatch.
    const DType d =
        coin(rng, 0.2) ? pick(rng, std::vector<DType>{DType::I32, DType::I64, DType::Bool}) : dtype;
    const std::string name = prefix + "in" + std::to_string(i);
    values.push_back(b.input(name, input_type(rng, d, base)));
    out.input_ranges.push_back(
        {name, is_floating(d) ? std::pair{-2.0, 2.0} : std::pair{-9.0, 10.0}});
  }
  Filler filler{rng, values, b};
  const int wanted = static_cast<int>(between(rng, 1, options.max_ops));
  std::vector<ValueRef> made;
  for (int attempt = 0; attempt < 40 * wanted && static_cast<int>(made.size()) < wanted;
       ++attempt) {
    const std::string& op = pick(rng, ops);
    const Schema& schema = b.registry().schemas().find(op)->second.first;
    Kwargs kwargs;
    std::optional<ValueRef> first;
    bool ok = true, integer_operand = false, only_f64 = true;
    int tensors = 0;
    for (const ArgSchema& a : schema.args) {
      auto v = filler.fill(a, first, tensors > 0);
      if (!v) {
        ok = ok && (a.default_value.has_value() || a.optional);
        continue;
      }
      if (const auto* r = std::get_if<ValueRef>(&*v)) {
        if (!first) first = *r;
        ++tensors;
        integer_operand = integer_operand || !is_floating(b.type(*r).dtype);
        only_f64 = only_f64 && b.type(*r).dtype == DType::F64;
      }
      if (const auto* l = std::get_if<TensorList>(&*v))
        for (const auto& item : l->items) only_f64 = only_f64 && b.type(*item).dtype == DType::F64;
      kwargs.emplace_back(a.name, std::move(*v));
    }
    if (!ok || tensors == 0) continue;
    if (divides(op) && integer_operand) continue;
    if (accumulates(op) && !only_f64) continue;
    const std::string node = prefix + "n" + std::to_string(made.size());
    auto result = b.try_ops(op, {}, kwargs, node);
    if (!result || result->empty()) continue;
    bool usable = true;
    for (ValueRef r : *result) usable = usable && b.type(r).numel() < (1 << 16);
    if (!usable) continue;
    for (ValueRef r : *result) values.push_back(r);
    made.push_back(result->front());
    out.ops.push_back(op);
  }
  // The last results (and anything nobody read) are the outputs.
  std::set<int32_t> seen;
  for (size_t i = made.size(); i-- > 0 && out.outputs.size() < 2;) {
    if (seen.insert(made[i].id).second) out.outputs.push_back(made[i]);
  }
  for (ValueRef r : out.outputs) b.output(r);
  return out;
}

}  // namespace kiln::test
