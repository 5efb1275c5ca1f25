// A plugin built against the frozen ABI 1.0 header (tests/abi/1.0), in plain C ABI terms: one
// CPU device whose memory is host memory, copies, statistics; no code. Today's host must load
// it as ABI 1.0 (no mem_register) and use it; the conformance kit must pass its ABI and memory
// checks.
#include <kiln/plugin.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <string>

static_assert(KILN_ABI_MINOR == 0, "built against the frozen ABI 1.0 header");

struct kiln_error {
  kiln_status code;
  std::string message;
};
struct kiln_blob {
  std::string bytes;
};
struct kiln_plugin {
  std::map<uint64_t, uint64_t> allocations;  // address -> bytes
  uint64_t in_use = 0, peak = 0;
};

namespace {

kiln_error* error(kiln_status code, const std::string& message) {
  return new (std::nothrow) kiln_error{code, message};
}

// Inside one allocation: [address, address + bytes).
bool inside(const kiln_plugin* p, uint64_t address, uint64_t bytes) {
  auto it = p->allocations.upper_bound(address);
  if (it == p->allocations.begin()) return false;
  --it;
  return address - it->first <= it->second && bytes <= it->second - (address - it->first);
}

kiln_property g_properties[2] = {
    {sizeof(kiln_property), "kind", KILN_PROPERTY_STRING, 0, 0, "cpu"},
    {sizeof(kiln_property), "memory_bytes", KILN_PROPERTY_INT, 1 << 30, 0, nullptr}};

kiln_plugin_api make_api() {
  kiln_plugin_api api{};
  api.struct_size = sizeof api;
  api.abi_major = KILN_ABI_MAJOR;
  api.abi_minor = KILN_ABI_MINOR;
  api.error_code = [](const kiln_error* e) { return e->code; };
  api.error_message = [](const kiln_error* e) { return e->message.c_str(); };
  api.error_destroy = [](kiln_error* e) { delete e; };
  api.blob_data = [](const kiln_blob* b) -> const void* { return b->bytes.data(); };
  api.blob_size = [](const kiln_blob* b) { return b->bytes.size(); };
  api.blob_destroy = [](kiln_blob* b) { delete b; };
  api.plugin_create = [](const kiln_plugin_create_args* args, kiln_plugin** out) -> kiln_error* {
    if (!args || args->struct_size < sizeof(size_t) + 8)
      return error(KILN_STATUS_INVALID_ARGUMENT, "no args");
    for (size_t i = 0; i < args->num_options; ++i)
      return error(KILN_STATUS_INVALID_ARGUMENT,
                   std::string("unknown option '") + args->options[i].key + "'");
    *out = new kiln_plugin;
    return nullptr;
  };
  api.plugin_destroy = [](kiln_plugin* p) {
    if (!p) return;
    for (auto& [address, bytes] : p->allocations) std::free(reinterpret_cast<void*>(address));
    delete p;
  };
  api.get_attributes = [](kiln_plugin*, kiln_plugin_attributes* out) -> kiln_error* {
    kiln_plugin_attributes a{};
    a.struct_size = sizeof a;
    a.name = "test_abi_1_0";
    a.vendor = "kiln tests";
    a.version = "1.0.0";
    a.kir_versions = "kir/1";
    a.artifact_format = "none";
    a.compiler_fingerprint = "abi-1.0";
    std::memcpy(out, &a, out->struct_size < sizeof a ? out->struct_size : sizeof a);
    out->struct_size = out->struct_size < sizeof a ? out->struct_size : sizeof a;
    return nullptr;
  };
  api.device_count = [](kiln_plugin*, uint32_t* out) -> kiln_error* {
    *out = 1;
    return nullptr;
  };
  api.device_info = [](kiln_plugin*, uint32_t device, kiln_device_info* out) -> kiln_error* {
    if (device != 0) return error(KILN_STATUS_NOT_FOUND, "one device, cpu:0");
    kiln_device_info info{sizeof info, "cpu", "frozen 1.0 test device", g_properties, 2};
    const size_t n = out->struct_size < sizeof info ? out->struct_size : sizeof info;
    std::memcpy(out, &info, n);
    out->struct_size = n;
    return nullptr;
  };
  api.mem_alloc = [](kiln_plugin* p, uint32_t device, uint64_t bytes, uint64_t alignment,
                     uint64_t* address) -> kiln_error* {
    if (device != 0) return error(KILN_STATUS_NOT_FOUND, "no such device");
    if (alignment > 256 || (alignment & (alignment - 1)) != 0)
      return error(KILN_STATUS_INVALID_ARGUMENT, "alignment: a power of two up to 256");
    if (bytes > (uint64_t{1} << 40)) return error(KILN_STATUS_OUT_OF_MEMORY, "too large");
    void* ptr = std::aligned_alloc(256, ((bytes + 255) / 256 + 1) * 256);
    if (!ptr) return error(KILN_STATUS_OUT_OF_MEMORY, "out of host memory");
    *address = reinterpret_cast<uint64_t>(ptr);
    p->allocations[*address] = bytes;
    p->in_use += bytes;
    p->peak = p->in_use > p->peak ? p->in_use : p->peak;
    return nullptr;
  };
  api.mem_free = [](kiln_plugin* p, uint32_t, uint64_t address) -> kiln_error* {
    auto it = p->allocations.find(address);
    if (it == p->allocations.end())
      return error(KILN_STATUS_INVALID_ARGUMENT, "not an allocation of this plugin");
    p->in_use -= it->second;
    std::free(reinterpret_cast<void*>(address));
    p->allocations.erase(it);
    return nullptr;
  };
  api.copy_host_to_device = [](kiln_plugin* p, uint32_t, kiln_stream*, uint64_t dst,
                               const void* src, uint64_t bytes) -> kiln_error* {
    if (bytes == 0) return nullptr;
    if (!inside(p, dst, bytes)) return error(KILN_STATUS_INVALID_ARGUMENT, "outside an allocation");
    std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
    return nullptr;
  };
  api.copy_device_to_host = [](kiln_plugin* p, uint32_t, kiln_stream*, void* dst, uint64_t src,
                               uint64_t bytes) -> kiln_error* {
    if (bytes == 0) return nullptr;
    if (!inside(p, src, bytes)) return error(KILN_STATUS_INVALID_ARGUMENT, "outside an allocation");
    std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
    return nullptr;
  };
  api.copy_device_to_device = [](kiln_plugin* p, uint32_t, kiln_stream*, uint64_t dst, uint64_t src,
                                 uint64_t bytes) -> kiln_error* {
    if (bytes == 0) return nullptr;
    if (!inside(p, src, bytes) || !inside(p, dst, bytes))
      return error(KILN_STATUS_INVALID_ARGUMENT, "outside an allocation");
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
    return nullptr;
  };
  api.memory_stats = [](kiln_plugin* p, uint32_t, kiln_memory_stats* out) -> kiln_error* {
    kiln_memory_stats s{sizeof s, p->in_use, p->peak, 0, p->allocations.size()};
    const size_t n = out->struct_size < sizeof s ? out->struct_size : sizeof s;
    std::memcpy(out, &s, n);
    out->struct_size = n;
    return nullptr;
  };
  return api;
}

}  // namespace

extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_get_api(uint32_t host_major,
                                                                         uint32_t) {
  static const kiln_plugin_api api = make_api();
  return host_major == KILN_ABI_MAJOR ? &api : nullptr;
}
