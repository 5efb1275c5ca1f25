// A plugin opened the way the ABI describes, without kiln's loader in between: the kit checks
// what the plugin itself does at the C boundary. The table is copied as a host reads it
// (min(its size, struct_size) bytes, the rest NULL).
#pragma once

#include <kiln/plugin.h>

#include <string>
#include <utility>
#include <vector>

namespace kiln::conformance {

using OptionList = std::vector<std::pair<std::string, std::string>>;

class RawPlugin {
 public:
  // Opens `path` and asks for the table as a host of ABI (major, minor); throws
  // std::runtime_error when the file does not open or has no entry point.
  RawPlugin(const std::string& path, uint32_t major = KILN_ABI_MAJOR,
            uint32_t minor = KILN_ABI_MINOR);
  ~RawPlugin();
  RawPlugin(const RawPlugin&) = delete;
  RawPlugin& operator=(const RawPlugin&) = delete;

  // Null when the plugin declined this host.
  const kiln_plugin_api* table() const { return declined_ ? nullptr : &api_; }
  size_t table_size() const { return table_size_; }
  // Creates the instance as a host of ABI minor `minor` would (negotiated down); "" on success,
  // else the error's text.
  std::string create(const OptionList& options = {}, uint32_t minor = KILN_ABI_MINOR,
                     kiln_status* code = nullptr);
  kiln_plugin* instance() const { return instance_; }
  uint32_t device_count() const;

  // "STATUS: message" of `e`, which is destroyed; "" for none. `code` gets its status.
  std::string take(kiln_error* e, kiln_status* code = nullptr) const;
  // The blob's bytes, and the blob destroyed.
  std::string take(kiln_blob* b) const;

 private:
  void* library_ = nullptr;
  kiln_plugin_api api_{};
  size_t table_size_ = 0;
  bool declined_ = false;
  kiln_plugin* instance_ = nullptr;
};

}  // namespace kiln::conformance
