// A plugin whose kernels take a known time and compute nothing, for the autotuning tests:
// a launch sleeps `delay_us` of its tuning config. Its tuning space offers a slow default
// and faster configs (the fastest marked `exact=0`), so a tuner must find the fast one; two
// instances with different delays (options `name`, `delay_us`) let plugin selection find the
// faster plugin. Option `space` replaces the tuning space (lines separated by ';'); a config
// with `wrong=1` writes 1.0f into the first four bytes of the kernel's last buffer, so a tuner
// that times before it checks would pick it. Memory is host memory; events read the host
// clock (launches are synchronous).
#include <chrono>
#include <cstring>
#include <kiln/plugin.hpp>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

struct kiln_plugin {
  std::string name;
  int64_t delay_us = 2000;  // the default config's
  std::string space;        // ';'-separated lines, or "" for the built-in space
  kiln::sdk::PropertyList properties;
  std::mutex mutex;
  std::map<uint64_t, std::vector<unsigned char>> memory;
};
struct kiln_executable {
  int64_t delay_us = 0;
  bool wrong = false;
  kiln_plugin* plugin = nullptr;
};
struct kiln_stream {};
struct kiln_event {
  std::chrono::steady_clock::time_point at;
};

namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

int64_t delay_of(const std::string& config, int64_t fallback) {
  const size_t at = config.find("delay_us=");
  return at == std::string::npos ? fallback : std::stoll(config.substr(at + 9));
}

kiln_error* create(const kiln_plugin_create_args* args, kiln_plugin** out) {
  return guard([&] {
    const auto c = kiln::sdk::read_struct(args);
    const kiln::sdk::Options options(c.options, c.num_options);
    options.reject_unknown({"name", "delay_us", "space"});
    auto p = std::make_unique<kiln_plugin>();
    p->name = options.get("name", "timing_test");
    p->delay_us = std::stoll(options.get("delay_us", "2000"));
    p->space = options.get("space", "");
    p->properties.add_int("delay_us", p->delay_us);
    *out = p.release();
  });
}

kiln_error* attributes(kiln_plugin* p, kiln_plugin_attributes* out) {
  return guard([&] {
    kiln_plugin_attributes a{};
    a.struct_size = sizeof(a);
    a.name = p->name.c_str();
    a.vendor = "kiln tests";
    a.version = "0.0.1";
    a.kir_versions = "kir/1";
    a.artifact_format = "timing-test/1";
    a.compiler_fingerprint = "timing-test/1";
    a.thread_safety = KILN_THREAD_SAFE_COMPILE;
    kiln::sdk::write_struct(out, a);
  });
}

unsigned char* host(kiln_plugin* p, uint64_t address, uint64_t bytes) {
  std::lock_guard lock(p->mutex);
  auto it = p->memory.upper_bound(address);
  if (it == p->memory.begin()) throw Failure(KILN_STATUS_INVALID_ARGUMENT, "unknown address");
  --it;
  if (address - it->first + bytes > it->second.size())
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, "range outside its allocation");
  return it->second.data() + (address - it->first);
}

kiln_plugin_api make_api() {
  kiln_plugin_api api = kiln::sdk::api_table();
  api.plugin_create = create;
  api.plugin_destroy = [](kiln_plugin* p) { delete p; };
  api.get_attributes = attributes;
  api.device_count = [](kiln_plugin*, uint32_t* out) -> kiln_error* {
    *out = 1;
    return nullptr;
  };
  api.device_info = [](kiln_plugin* p, uint32_t, kiln_device_info* out) {
    return guard([&] {
      kiln_device_info d{sizeof(d), "timing", "a device of known speed", p->properties.data(),
                         p->properties.size()};
      kiln::sdk::write_struct(out, d);
    });
  };
  api.supports = [](kiln_plugin*, uint32_t, const char*, size_t, int* ok, kiln_blob** reason) {
    *ok = 1;
    if (reason) *reason = nullptr;
    return static_cast<kiln_error*>(nullptr);
  };
  api.tuning_space = [](kiln_plugin* p, uint32_t, const char*, size_t, kiln_blob** space) {
    return guard([&] {
      if (!p->space.empty()) {
        std::string lines = p->space;
        for (char& c : lines)
          if (c == ';') c = '\n';
        *space = kiln::sdk::make_blob(lines + "\n");
        return;
      }
      const int64_t d = p->delay_us;
      *space = kiln::sdk::make_blob("delay_us=" + std::to_string(d) + "\ndelay_us=" +
                                    std::to_string(d / 2) + "\ndelay_us=" + std::to_string(d / 4) +
                                    "\ndelay_us=" + std::to_string(d / 20) + " exact=0\n");
    });
  };
  api.compile = [](kiln_plugin* p, const kiln_compile_args* args, kiln_blob** artifact,
                   kiln_blob** metadata) {
    return guard([&] {
      const auto a = kiln::sdk::read_struct(args);
      const std::string config = a.config ? a.config : "";
      if (config.find("exact=") != std::string::npos)
        throw Failure(KILN_STATUS_INVALID_ARGUMENT, "exact= is the core's, not a knob");
      const bool wrong = config.find("wrong=1") != std::string::npos;
      *artifact = kiln::sdk::make_blob(std::to_string(delay_of(config, p->delay_us)) +
                                       (wrong ? " wrong" : ""));
      if (metadata) *metadata = nullptr;
    });
  };
  api.load = [](kiln_plugin* p, uint32_t, const void* bytes, size_t size, kiln_executable** out) {
    return guard([&] {
      const std::string text(static_cast<const char*>(bytes), size);
      *out = new kiln_executable{std::stoll(text), text.find(" wrong") != std::string::npos, p};
    });
  };
  api.executable_destroy = [](kiln_executable* e) { delete e; };
  api.launch = [](kiln_executable* e, const kiln_launch_args* args) {
    std::this_thread::sleep_for(std::chrono::microseconds(e->delay_us));
    return guard([&] {
      if (!e->wrong || args->num_buffers == 0) return;
      const float one = 1.0f;
      std::memcpy(host(e->plugin, args->buffers[args->num_buffers - 1], sizeof one), &one,
                  sizeof one);
    });
  };
  api.mem_alloc = [](kiln_plugin* p, uint32_t, uint64_t bytes, uint64_t, uint64_t* address) {
    return guard([&] {
      std::lock_guard lock(p->mutex);
      std::vector<unsigned char> block(std::max<uint64_t>(bytes, 1));
      *address = reinterpret_cast<uint64_t>(block.data());
      p->memory[*address] = std::move(block);
    });
  };
  api.mem_free = [](kiln_plugin* p, uint32_t, uint64_t address) {
    return guard([&] {
      std::lock_guard lock(p->mutex);
      if (p->memory.erase(address) == 0)
        throw Failure(KILN_STATUS_INVALID_ARGUMENT, "mem_free of an unknown address");
    });
  };
  api.copy_host_to_device = [](kiln_plugin* p, uint32_t, kiln_stream*, uint64_t dst,
                               const void* src, uint64_t bytes) {
    return guard([&] { std::memcpy(host(p, dst, bytes), src, bytes); });
  };
  api.copy_device_to_host = [](kiln_plugin* p, uint32_t, kiln_stream*, void* dst, uint64_t src,
                               uint64_t bytes) {
    return guard([&] { std::memcpy(dst, host(p, src, bytes), bytes); });
  };
  api.copy_device_to_device = [](kiln_plugin* p, uint32_t, kiln_stream*, uint64_t dst, uint64_t src,
                                 uint64_t bytes) {
    return guard([&] { std::memmove(host(p, dst, bytes), host(p, src, bytes), bytes); });
  };
  api.event_create = [](kiln_plugin*, uint32_t, kiln_event** out) {
    *out = new kiln_event{};
    return static_cast<kiln_error*>(nullptr);
  };
  api.event_destroy = [](kiln_event* e) { delete e; };
  api.event_record = [](kiln_event* e, kiln_stream*) {
    e->at = std::chrono::steady_clock::now();
    return static_cast<kiln_error*>(nullptr);
  };
  api.event_synchronize = [](kiln_event*) { return static_cast<kiln_error*>(nullptr); };
  api.event_elapsed_ms = [](const kiln_event* a, const kiln_event* b, double* ms) {
    *ms = std::chrono::duration<double, std::milli>(b->at - a->at).count();
    return static_cast<kiln_error*>(nullptr);
  };
  return api;
}

}  // namespace

extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_get_api(uint32_t, uint32_t) {
  static const kiln_plugin_api table = make_api();
  return &table;
}
