// Header-only C++ helpers for writing a kiln plugin against plugin.h.
//
// They give a plugin: the error and blob objects of the ABI (with the six REQUIRED
// functions that go with them), guard() which turns any exception into a kiln_error at the
// boundary, size-checked struct reads and writes, parsed plugin options, a logger that
// writes through the host, and a property list whose strings stay alive.
//
// Every plugin is its own shared object with hidden visibility, so the definitions below
// are private to each plugin and never collide.
#ifndef KILN_PLUGIN_HPP
#define KILN_PLUGIN_HPP

#include <dlfcn.h>
#include <kiln/plugin.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct kiln_error {
  kiln_status code;
  std::string message;
};

struct kiln_blob {
  std::string bytes;
};

namespace kiln::sdk {

// Throw this from plugin code to return a specific status; guard() converts it.
class Failure : public std::exception {
 public:
  Failure(kiln_status code, std::string message) : code_(code), message_(std::move(message)) {}
  kiln_status code() const noexcept { return code_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  kiln_status code_;
  std::string message_;
};

namespace detail {
// Returned when allocating an error itself fails; never freed.
inline kiln_error* out_of_memory_error() noexcept {
  static kiln_error error{KILN_STATUS_OUT_OF_MEMORY, "out of memory"};
  return &error;
}
}  // namespace detail

inline kiln_error* make_error(kiln_status code, std::string_view message) noexcept {
  try {
    return new kiln_error{code, std::string(message)};
  } catch (...) {
    return detail::out_of_memory_error();
  }
}

inline kiln_error* unimplemented(std::string_view what) noexcept {
  try {
    return make_error(KILN_STATUS_UNIMPLEMENTED, std::string(what) + " is not implemented");
  } catch (...) {
    return detail::out_of_memory_error();
  }
}

#if KILN_ABI_MINOR >= 3
// Throws Failure(INVALID_ARGUMENT) unless `desc` is a whole 1.3 descriptor naming a
// non-empty, non-wrapping range.
inline void check_import_desc(const kiln_mem_import_desc* desc) {
  if (desc == nullptr || desc->struct_size < sizeof(kiln_mem_import_desc))
    throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                  "mem_import needs a kiln_mem_import_desc of at least " +
                      std::to_string(sizeof(kiln_mem_import_desc)) + " bytes");
  if (desc->bytes == 0 || desc->offset + desc->bytes < desc->offset)
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, "mem_import of an empty or wrapping range");
}

#endif

// Runs `body`; returns NULL on success and a kiln_error for any exception. Every ABI
// function of a C++ plugin should be a guard() around its work.
template <class Body>
kiln_error* guard(Body&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const Failure& failure) {
    return make_error(failure.code(), failure.what());
  } catch (const std::bad_alloc&) {
    return make_error(KILN_STATUS_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return make_error(KILN_STATUS_INTERNAL, e.what());
  } catch (...) {
    return make_error(KILN_STATUS_INTERNAL, "unknown exception");
  }
}

inline kiln_blob* make_blob(std::string bytes) {
  return new kiln_blob{std::move(bytes)};
}

// Fills the REQUIRED error and blob functions of `api` with the definitions above.
inline void fill_error_and_blob_functions(kiln_plugin_api& api) noexcept {
  api.error_code = [](const kiln_error* e) { return e ? e->code : KILN_OK; };
  api.error_message = [](const kiln_error* e) { return e ? e->message.c_str() : ""; };
  api.error_destroy = [](kiln_error* e) {
    if (e != detail::out_of_memory_error()) delete e;
  };
  api.blob_data = [](const kiln_blob* b) -> const void* { return b ? b->bytes.data() : nullptr; };
  api.blob_size = [](const kiln_blob* b) -> size_t { return b ? b->bytes.size() : 0; };
  api.blob_destroy = [](kiln_blob* b) { delete b; };
}

// A table at this SDK's ABI version, its size set and the error and blob functions filled in:
// the start of every plugin's kiln_plugin_get_api table.
inline kiln_plugin_api api_table() {
  kiln_plugin_api api{};
  api.struct_size = sizeof(api);
  api.abi_major = KILN_ABI_MAJOR;
  api.abi_minor = KILN_ABI_MINOR;
  fill_error_and_blob_functions(api);
  return api;
}

// Reads a struct the host passed in: fields beyond the host's struct_size read as zero.
template <class T>
T read_struct(const T* in) noexcept {
  T value{};
  if (in != nullptr) {
    std::memcpy(&value, in, std::min(in->struct_size, sizeof(T)));
  }
  value.struct_size = sizeof(T);
  return value;
}

// Reads element `i` of an array of structs the host passed in; the stride is the first
// element's struct_size, which may differ from our sizeof(T).
template <class T>
T read_array_element(const T* array, size_t i) noexcept {
  const auto* base = reinterpret_cast<const unsigned char*>(array);
  const size_t stride = array[0].struct_size;
  T value{};
  std::memcpy(&value, base + i * stride, std::min(stride, sizeof(T)));
  value.struct_size = sizeof(T);
  return value;
}

// Writes a struct the host asked for: at most the bytes the host's struct_size allows.
template <class T>
void write_struct(T* out, const T& value) noexcept {
  const size_t host_size = out->struct_size;
  const size_t n = std::min(host_size, sizeof(T));
  std::memcpy(out, &value, n);
  out->struct_size = host_size;
}

// The options the config gave this plugin, by key.
class Options {
 public:
  Options() = default;
  Options(const kiln_option* options, size_t count) {
    for (size_t i = 0; i < count; ++i) {
      const kiln_option option = read_array_element(options, i);
      if (option.key == nullptr) continue;
      std::vector<std::string> values;
      for (size_t v = 0; v < option.num_values; ++v) values.emplace_back(option.values[v]);
      values_[option.key] = std::move(values);
    }
  }

  bool has(const std::string& key) const { return values_.count(key) != 0; }

  std::string get(const std::string& key, std::string fallback) const {
    auto it = values_.find(key);
    if (it == values_.end() || it->second.empty()) return fallback;
    return it->second.front();
  }

  std::vector<std::string> get_list(const std::string& key,
                                    std::vector<std::string> fallback) const {
    auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
  }

  // Throws Failure(INVALID_ARGUMENT) naming the first key not in `known`.
  void reject_unknown(const std::vector<std::string>& known) const {
    for (const auto& [key, unused] : values_) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "unknown option '" + key + "' (known options: " + list + ")");
    }
  }

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

// Logs through the host's callback, or nowhere when the host gave none.
class HostLog {
 public:
  HostLog() = default;
  HostLog(kiln_log_fn fn, void* user_data) : fn_(fn), user_data_(user_data) {}
  void operator()(kiln_log_level level, const std::string& message) const {
    if (fn_ != nullptr) fn_(user_data_, level, message.c_str());
  }

 private:
  kiln_log_fn fn_ = nullptr;
  void* user_data_ = nullptr;
};

// Device properties whose strings live as long as this object.
class PropertyList {
 public:
  PropertyList() = default;
  PropertyList(const PropertyList&) = delete;
  PropertyList& operator=(const PropertyList&) = delete;
  PropertyList(PropertyList&&) = default;
  PropertyList& operator=(PropertyList&&) = default;

  void add_int(std::string key, int64_t value) {
    push(std::move(key), KILN_PROPERTY_INT, value, 0, {});
  }
  void add_bool(std::string key, bool value) {
    push(std::move(key), KILN_PROPERTY_BOOL, value ? 1 : 0, 0, {});
  }
  void add_float(std::string key, double value) {
    push(std::move(key), KILN_PROPERTY_FLOAT, 0, value, {});
  }
  void add_string(std::string key, std::string value) {
    push(std::move(key), KILN_PROPERTY_STRING, 0, 0, std::move(value));
  }

  const kiln_property* data() const { return properties_.data(); }
  size_t size() const { return properties_.size(); }

 private:
  void push(std::string key, kiln_property_type type, int64_t i, double f, std::string s) {
    const char* key_ptr = strings_.emplace_back(std::move(key)).c_str();
    const char* str_ptr =
        type == KILN_PROPERTY_STRING ? strings_.emplace_back(std::move(s)).c_str() : nullptr;
    properties_.push_back(kiln_property{sizeof(kiln_property), key_ptr, type, i, f, str_ptr});
  }

  std::deque<std::string> strings_;  // deque: element addresses stay stable as it grows
  std::vector<kiln_property> properties_;
};

// `text` as a JSON string literal (quotes, backslashes and control characters escaped), for
// the metadata compile() returns.
inline std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The file this plugin was loaded from ("" when the loader cannot say): a plugin finds what
// it ships beside it (headers, libraries) from here, so a bundle works wherever it is unpacked.
inline std::string plugin_binary_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&plugin_binary_path), &info) == 0 ||
      info.dli_fname == nullptr)
    return "";
  return info.dli_fname;
}

// A digest (FNV-1a) of the shared object this function is compiled into: put it in the
// compiler fingerprint, so artifacts made by an older build of a code generator are never
// reused. ("unknown" when the file cannot be read.)
inline std::string plugin_binary_digest() {
  const std::string path = plugin_binary_path();
  if (path.empty()) return "unknown";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "unknown";
  // Eight bytes per step (a plugin with LLVM inside is tens of MB, read at every start).
  uint64_t h = 1469598103934665603ull;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    const auto n = static_cast<size_t>(in.gcount());
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, buf + i, 8);
      h = (h ^ w) * 1099511628211ull;
      h ^= h >> 29;
    }
    for (; i < n; ++i) h = (h ^ static_cast<unsigned char>(buf[i])) * 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace kiln::sdk

#endif  // KILN_PLUGIN_HPP
