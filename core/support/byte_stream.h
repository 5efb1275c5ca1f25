// A little-endian binary writer and a bounds-checked reader, for cache payloads the core
// writes and reads back itself. The reader never reads past its end: a short or mangled
// payload makes it fail (ok() false) and every later read returns a zero value, so a
// decoder checks once at the end instead of after every field.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

class ByteWriter {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u64(uint64_t v) {
    char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    out_.append(b, 8);
  }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  // Doubles as their bits: exact, NaN and infinities included.
  void f64(double v) { u64(std::bit_cast<uint64_t>(v)); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  void string(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  void i64s(const std::vector<int64_t>& v) {
    u64(v.size());
    for (int64_t x : v) i64(x);
  }
  void strings(const std::vector<std::string>& v) {
    u64(v.size());
    for (const std::string& s : v) string(s);
  }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}

  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }
  // Marks the payload bad (a decoder found a field out of range).
  void fail() { ok_ = false; }

  uint8_t u8() {
    if (!take(1)) return 0;
    return static_cast<uint8_t>(in_[pos_ - 1]);
  }
  uint64_t u64() {
    if (!take(8)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= static_cast<uint64_t>(static_cast<uint8_t>(in_[pos_ - 8 + static_cast<size_t>(i)]))
           << (8 * i);
    return v;
  }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  // An int that must fit 32 bits (buffer, node and SSA ids).
  int32_t i32() {
    const int64_t v = i64();
    if (v < INT32_MIN || v > INT32_MAX) fail();
    return ok_ ? static_cast<int32_t>(v) : 0;
  }
  double f64() { return std::bit_cast<double>(u64()); }
  bool boolean() {
    const uint8_t v = u8();
    if (v > 1) fail();
    return v == 1;
  }
  std::string string() {
    const uint64_t n = u64();
    if (!ok_ || n > in_.size() - pos_) {
      fail();
      return {};
    }
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  // An enumerator stored as one byte, `last` the highest it may be (the first when it fails).
  template <class Enum>
  Enum enumerator(Enum last) {
    const uint8_t v = u8();
    if (v > static_cast<uint8_t>(last)) fail();
    return static_cast<Enum>(ok_ ? v : 0);
  }
  std::vector<int64_t> i64s() {
    std::vector<int64_t> v(count(8));
    for (int64_t& x : v) x = i64();
    return v;
  }
  std::vector<std::string> strings() {
    std::vector<std::string> v(count(8));
    for (std::string& s : v) s = string();
    return v;
  }
  // A count of items that each take at least `min_item_bytes`: no larger than what is left,
  // so a mangled count cannot ask for a huge allocation.
  size_t count(size_t min_item_bytes = 1) {
    const uint64_t n = u64();
    if (!ok_ || n > (in_.size() - pos_) / (min_item_bytes ? min_item_bytes : 1)) {
      fail();
      return 0;
    }
    return static_cast<size_t>(n);
  }

 private:
  bool take(size_t n) {
    if (!ok_ || n > in_.size() - pos_) {
      ok_ = false;
      return false;
    }
    pos_ += n;
    return true;
  }
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace kiln
