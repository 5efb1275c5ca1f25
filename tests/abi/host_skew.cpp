// A host built against a frozen older ABI header (1.0 to 1.3: built once against each,
// as host_1_0 to host_1_3) loads a plugin of today's ABI: it asks for the table as
// its own minor, reads only its part of it, creates the instance as that minor and uses
// devices, memory and copies (where it has a device). The plugin's newer minor must not
// matter to it.
//   host_1_N PLUGIN.so   (exit 0 and one line "... ok", or 1 and what failed)
#include <dlfcn.h>
#include <kiln/plugin.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

static_assert(KILN_ABI_MINOR <= 3, "built against a frozen older ABI header");

// "1.0" to "1.3": the ABI of the header this host was built against.
#define HOST_TEXT_(x) #x
#define HOST_TEXT(x) HOST_TEXT_(x)
#define HOST_ABI "1." HOST_TEXT(KILN_ABI_MINOR)

namespace {

int failed(const std::string& what) {
  std::printf("host " HOST_ABI ": %s\n", what.c_str());
  return 1;
}

std::string text(const kiln_plugin_api& api, kiln_error* e) {
  if (!e) return "";
  std::string out = api.error_message(e);
  api.error_destroy(e);
  return out.empty() ? "an error without a message" : out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return failed("usage: host_1_N PLUGIN.so");
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) return failed(dlerror());
  auto entry = reinterpret_cast<kiln_plugin_get_api_fn>(dlsym(library, KILN_PLUGIN_ENTRY_POINT));
  if (!entry) return failed("no entry point");
  const kiln_plugin_api* offered = entry(KILN_ABI_MAJOR, KILN_ABI_MINOR);
  if (!offered) return failed("the plugin declined a host of ABI " HOST_ABI);
  if (offered->abi_major != KILN_ABI_MAJOR) return failed("another major");
  // This minor's part of a table that may be longer.
  kiln_plugin_api api{};
  std::memcpy(&api, offered, offered->struct_size < sizeof api ? offered->struct_size : sizeof api);
  kiln_plugin_create_args args{};
  args.struct_size = sizeof args;
  args.abi_major = KILN_ABI_MAJOR;
  args.abi_minor = KILN_ABI_MINOR;
  kiln_plugin* plugin = nullptr;
  if (std::string e = text(api, api.plugin_create(&args, &plugin)); !e.empty())
    return failed("plugin_create: " + e);
  kiln_plugin_attributes attributes{};
  attributes.struct_size = sizeof attributes;
  if (std::string e = text(api, api.get_attributes(plugin, &attributes)); !e.empty())
    return failed("get_attributes: " + e);
  uint32_t devices = 0;
  if (std::string e = text(api, api.device_count(plugin, &devices)); !e.empty())
    return failed("device_count: " + e);
  if (devices == 0) {  // a GPU plugin on a machine without its GPU: loading is what is checked
    api.plugin_destroy(plugin);
    std::printf("host " HOST_ABI ": %s (ABI %u.%u) used as ABI " HOST_ABI ", no devices: ok\n",
                attributes.name, offered->abi_major, offered->abi_minor);
    return 0;
  }
  uint64_t address = 0;
  const std::vector<unsigned char> data = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  std::vector<unsigned char> back(data.size(), 0);
  if (std::string e = text(api, api.mem_alloc(plugin, 0, data.size(), 16, &address)); !e.empty())
    return failed("mem_alloc: " + e);
  if (std::string e =
          text(api, api.copy_host_to_device(plugin, 0, nullptr, address, data.data(), data.size()));
      !e.empty())
    return failed("copy_host_to_device: " + e);
  if (std::string e =
          text(api, api.copy_device_to_host(plugin, 0, nullptr, back.data(), address, back.size()));
      !e.empty())
    return failed("copy_device_to_host: " + e);
  if (back != data) return failed("the bytes came back different");
  if (std::string e = text(api, api.mem_free(plugin, 0, address)); !e.empty())
    return failed("mem_free: " + e);
  api.plugin_destroy(plugin);
  std::printf("host " HOST_ABI ": %s (ABI %u.%u, a table of %zu bytes) used as ABI " HOST_ABI
              ": ok\n",
              attributes.name, offered->abi_major, offered->abi_minor, offered->struct_size);
  return 0;
}
