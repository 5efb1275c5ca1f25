#include "core/ops/arg_view.h"

#include "core/ops/op_error.h"

namespace kiln {

const ArgValue& ArgView::at(int i) const {
  if (i < 0 || static_cast<size_t>(i) >= args_.size()) {
    op_bug(schema_->op + ": argument " + std::to_string(i) + " does not exist");
  }
  return args_[static_cast<size_t>(i)];
}

bool ArgView::is_wrapped_scalar(int i) const {
  const ArgValue& v = at(i);
  return std::holds_alternative<bool>(v) || std::holds_alternative<int64_t>(v) ||
         std::holds_alternative<double>(v);
}

ValueRef ArgView::ref(int i) const {
  if (const auto* r = std::get_if<ValueRef>(&at(i))) return *r;
  op_bug(schema_->op + ": argument '" + name(i) + "' is not a tensor");
}

const TensorList& ArgView::tensor_list(int i) const {
  if (const auto* l = std::get_if<TensorList>(&at(i))) return *l;
  op_bug(schema_->op + ": argument '" + name(i) + "' is not a tensor list");
}

int64_t ArgView::get_int(int i) const {
  const ArgValue& v = at(i);
  if (const auto* x = std::get_if<int64_t>(&v)) return *x;
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  op_bug(schema_->op + ": argument '" + name(i) + "' is not an int");
}

std::optional<int64_t> ArgView::opt_int(int i) const {
  if (is_none(i)) return std::nullopt;
  return get_int(i);
}

double ArgView::get_float(int i) const {
  const ArgValue& v = at(i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* x = std::get_if<int64_t>(&v)) return static_cast<double>(*x);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1.0 : 0.0;
  op_bug(schema_->op + ": argument '" + name(i) + "' is not a number");
}

std::optional<double> ArgView::opt_float(int i) const {
  if (is_none(i)) return std::nullopt;
  return get_float(i);
}

bool ArgView::get_bool(int i) const {
  const ArgValue& v = at(i);
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  if (const auto* x = std::get_if<int64_t>(&v)) return *x != 0;
  op_bug(schema_->op + ": argument '" + name(i) + "' is not a bool");
}

IntList ArgView::get_ints(int i) const {
  const ArgValue& v = at(i);
  if (const auto* l = std::get_if<IntList>(&v)) return *l;
  if (const auto* x = std::get_if<int64_t>(&v)) return {*x};
  op_bug(schema_->op + ": argument '" + name(i) + "' is not an int list");
}

std::optional<IntList> ArgView::opt_ints(int i) const {
  if (is_none(i)) return std::nullopt;
  return get_ints(i);
}

std::optional<FloatList> ArgView::opt_floats(int i) const {
  if (is_none(i)) return std::nullopt;
  const ArgValue& v = at(i);
  if (const auto* l = std::get_if<FloatList>(&v)) return *l;
  if (const auto* l = std::get_if<IntList>(&v)) return FloatList(l->begin(), l->end());
  op_bug(schema_->op + ": argument '" + name(i) + "' is not a float list");
}

std::optional<DType> ArgView::opt_dtype(int i) const {
  if (is_none(i)) return std::nullopt;
  if (const auto* d = std::get_if<DType>(&at(i))) return *d;
  op_bug(schema_->op + ": argument '" + name(i) + "' is not a dtype");
}

std::string ArgView::get_str(int i) const {
  if (const auto* s = std::get_if<std::string>(&at(i))) return *s;
  op_bug(schema_->op + ": argument '" + name(i) + "' is not a string");
}

std::optional<std::string> ArgView::opt_str(int i) const {
  if (is_none(i)) return std::nullopt;
  return get_str(i);
}

DType ArgView::scalar_dtype(int i) const {
  const ArgValue& v = at(i);
  if (std::holds_alternative<bool>(v)) return DType::Bool;
  if (std::holds_alternative<int64_t>(v)) return DType::I64;
  if (std::holds_alternative<double>(v)) return DType::F64;
  op_bug(schema_->op + ": argument '" + name(i) + "' is not a number");
}

}  // namespace kiln
