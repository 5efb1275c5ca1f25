// Result<T>: a value or an Error, for every fallible function at a module boundary.
#pragma once

#include <cassert>
#include <utility>
#include <variant>

#include "core/support/error.h"

namespace kiln {

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    assert(has_value());
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(has_value());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(has_value());
    return std::get<0>(std::move(state_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  T value_or(T fallback) const& { return has_value() ? std::get<0>(state_) : std::move(fallback); }

  const Error& error() const& {
    assert(!has_value());
    return std::get<1>(state_);
  }
  Error&& error() && {
    assert(!has_value());
    return std::get<1>(std::move(state_));
  }

 private:
  std::variant<T, Error> state_;
};

// A Result that carries no value: success, or an Error.
struct Ok {};
using Status = Result<Ok>;

}  // namespace kiln
