// The KIR interpreter plugin: runs every KIR kernel through an interpreter on the host, one
// element at a time. It is built against the SDK alone (kiln/plugin.hpp, kiln/kir.hpp): the
// worked example of docs/writing-a-plugin.md, a device any graph can fall back to, and a
// second opinion on what a KIR text means. Slow by design: a reference, not a backend to time.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "plugin_state.h"

// The skew tests build these sources against an older SDK under another name.
#ifndef KILN_INTERPRETER_NAME
#define KILN_INTERPRETER_NAME "kir_interpreter"
#endif

namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

// Half the host's memory unless the config says otherwise.
uint64_t default_memory_limit() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2
                               : uint64_t{1} << 30;
}

uint64_t parse_megabytes(const std::string& text) {
  char* end = nullptr;
  const unsigned long long mb = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || mb == 0 || mb > (uint64_t{1} << 40))
    throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                  "option memory_mb must be a whole number of MiB from 1, not '" + text + "'");
  return static_cast<uint64_t>(mb) << 20;
}

std::set<std::string> parse_declined(const std::vector<std::string>& kinds) {
  static const char* const known[] = {"pointwise", "reduction", "load",   "store",
                                      "scatter",   "scan",      "reduce", "check_index"};
  for (const std::string& k : kinds)
    if (std::none_of(std::begin(known), std::end(known), [&](const char* n) { return k == n; }))
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "option decline: unknown kind '" + k +
                        "' (known: pointwise, reduction, load, store, scatter, scan, reduce, "
                        "check_index)");
  return {kinds.begin(), kinds.end()};
}

void fill_properties(kiln_plugin& p) {
  p.properties.add_string("kind", "cpu");
  p.properties.add_string("name", "KIR interpreter");
  p.properties.add_string("arch", "interpreter");
  p.properties.add_int("compute_units", 1);
  p.properties.add_int("warp_width", 1);
  p.properties.add_int("memory_bytes", static_cast<int64_t>(p.memory.limit()));
  // An interpreter visits each op of each element in turn: tens of MB/s, whatever the host.
  p.properties.add_float("bandwidth_gbps", 0.05);
  p.properties.add_float("peak_gflops_f32", 0.01);
}

kiln_error* plugin_create(const kiln_plugin_create_args* args, kiln_plugin** out) {
  return guard([&] {
    const auto create = kiln::sdk::read_struct(args);
    const kiln::sdk::Options options(create.options, create.num_options);
    options.reject_unknown({"memory_mb", "decline", "streams"});
    const std::string streams = options.get("streams", "immediate");
    if (streams != "immediate" && streams != "deferred" && streams != "deferred_kernels")
      throw Failure(
          KILN_STATUS_INVALID_ARGUMENT,
          "option streams must be immediate, deferred or deferred_kernels, not '" + streams + "'");
    const uint64_t limit = options.has("memory_mb") ? parse_megabytes(options.get("memory_mb", ""))
                                                    : default_memory_limit();
    auto plugin = std::make_unique<kiln_plugin>(
        limit, parse_declined(options.get_list("decline", {})),
        kiln::sdk::HostLog(create.log, create.log_user_data), streams);
    fill_properties(*plugin);
    plugin->fingerprint = "kir_interpreter-1@" + kiln::sdk::plugin_binary_digest() + "; decline=";
    for (const std::string& kind : plugin->declined) plugin->fingerprint += kind + ",";
    *out = plugin.release();
  });
}

kiln_error* get_attributes(kiln_plugin* p, kiln_plugin_attributes* out) {
  return guard([&] {
    kiln_plugin_attributes a{};
    a.struct_size = sizeof(a);
    a.name = KILN_INTERPRETER_NAME;
    a.vendor = "kiln";
    a.version = "1.0.0";
    a.kir_versions = kiln::kir::kVersion;
    a.artifact_format = "kir-text";
    a.compiler_fingerprint = p->fingerprint.c_str();
    a.thread_safety = KILN_THREAD_SAFE_COMPILE | KILN_THREAD_SAFE_LAUNCH | KILN_COMPILE_PER_KERNEL;
    kiln::sdk::write_struct(out, a);
  });
}

void check_device(uint32_t device) {
  if (device != 0)
    throw Failure(KILN_STATUS_NOT_FOUND, "device " + std::to_string(device) + " does not exist");
}

kiln_error* device_info(kiln_plugin* p, uint32_t device, kiln_device_info* out) {
  return guard([&] {
    check_device(device);
    kiln_device_info info{};
    info.struct_size = sizeof(info);
    info.kind = "interp";
    info.name = "KIR interpreter (host, one thread)";
    info.properties = p->properties.data();
    info.num_properties = p->properties.size();
    kiln::sdk::write_struct(out, info);
  });
}

// `bytes` at `address` lie inside one allocation or registration, or the call is refused.
void check_range(const kiln_plugin& p, uint64_t address, uint64_t bytes, const char* what) {
  if (bytes > 0 && !p.memory.contains(address, bytes))
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, std::string(what) + ": " + std::to_string(bytes) +
                                                    " bytes at address " + std::to_string(address) +
                                                    " are not inside one allocation");
}

kiln_error* mem_alloc(kiln_plugin* p, uint32_t device, uint64_t bytes, uint64_t alignment,
                      uint64_t* address) {
  return guard([&] {
    check_device(device);
    if (alignment != 0 && (alignment & (alignment - 1)) != 0)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "alignment " + std::to_string(alignment) + " is not a power of two");
    *address = p->memory.allocate(bytes, alignment);
    if (*address == 0)
      throw Failure(KILN_STATUS_OUT_OF_MEMORY, std::to_string(bytes) + " bytes do not fit (" +
                                                   std::to_string(p->memory.stats().bytes_in_use) +
                                                   " of " + std::to_string(p->memory.limit()) +
                                                   " in use)");
  });
}

kiln_error* mem_free(kiln_plugin* p, uint32_t device, uint64_t address) {
  return guard([&] {
    check_device(device);
    if (!p->memory.release(address))
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "mem_free of an address this plugin did not "
                    "allocate, or freed already");
  });
}

// A copy now, or queued on `s` when streams are deferred (the host keeps its memory until it
// waits: plugin.h's copy rule).
void copy(kiln_plugin& p, kiln_stream* s, void* dst, const void* src, uint64_t bytes) {
  if (bytes > 0)
    kiln::interp::submit(
        p, s, [=] { std::memmove(dst, src, bytes); }, true);
}

kiln_error* copy_in(kiln_plugin* p, uint32_t device, kiln_stream* s, uint64_t dst, const void* src,
                    uint64_t bytes) {
  return guard([&] {
    check_device(device);
    check_range(*p, dst, bytes, "copy_host_to_device");
    kiln::interp::refuse_in_capture(s, "copy_host_to_device");
    copy(*p, s, reinterpret_cast<void*>(dst), src, bytes);
  });
}

kiln_error* copy_out(kiln_plugin* p, uint32_t device, kiln_stream* s, void* dst, uint64_t src,
                     uint64_t bytes) {
  return guard([&] {
    check_device(device);
    check_range(*p, src, bytes, "copy_device_to_host");
    kiln::interp::refuse_in_capture(s, "copy_device_to_host");
    copy(*p, s, dst, reinterpret_cast<const void*>(src), bytes);
  });
}

kiln_error* copy_within(kiln_plugin* p, uint32_t device, kiln_stream* s, uint64_t dst, uint64_t src,
                        uint64_t bytes) {
  return guard([&] {
    check_device(device);
    check_range(*p, src, bytes, "copy_device_to_device source");
    check_range(*p, dst, bytes, "copy_device_to_device destination");
    copy(*p, s, reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  });
}

kiln_error* memory_stats(kiln_plugin* p, uint32_t device, kiln_memory_stats* out) {
  return guard([&] {
    check_device(device);
    const kiln::interp::AllocationStats s = p->memory.stats();
    kiln_memory_stats m{sizeof(m), s.bytes_in_use, s.peak_bytes_in_use, p->memory.limit(), s.live};
    kiln::sdk::write_struct(out, m);
  });
}

kiln_error* mem_register(kiln_plugin* p, uint32_t device, uint64_t address, uint64_t bytes) {
  return guard([&] {
    check_device(device);
    if (bytes == 0 || address + bytes < address)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "mem_register of an empty or wrapping range");
    p->memory.add_registration(address, bytes);
  });
}

kiln_error* mem_unregister(kiln_plugin* p, uint32_t device, uint64_t address, uint64_t bytes) {
  return guard([&] {
    check_device(device);
    if (!p->memory.remove_registration(address, bytes))
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "mem_unregister of a range never registered");
  });
}

void add_streams_and_events(kiln_plugin_api& api) {
  api.stream_create = [](kiln_plugin* p, uint32_t device, kiln_stream** out) {
    return guard([&] {
      check_device(device);
      *out = new kiln_stream{p, false, {}};
      if (p->deferred) p->streams.add(*out);
    });
  };
  api.stream_destroy = [](kiln_stream* s) {
    if (s) s->plugin->streams.remove(s);
    delete s;
  };
  api.stream_synchronize = [](kiln_stream* s) {
    return guard([&] {
      if (s && s->capturing)
        throw Failure(KILN_STATUS_INVALID_ARGUMENT, "stream_synchronize of a capturing stream");
      if (s) s->plugin->streams.run_all(s);
    });
  };
  api.event_create = [](kiln_plugin* p, uint32_t device, kiln_event** out) {
    return guard([&] {
      check_device(device);
      *out = new kiln_event{};
      (*out)->plugin = p;
    });
  };
  api.event_destroy = [](kiln_event* e) { delete e; };
  api.event_record = [](kiln_event* e, kiln_stream* s) {
    return guard([&] {
      kiln::interp::refuse_in_capture(s, "event_record");
      e->time = std::chrono::steady_clock::now();
      e->recorded = true;
      e->stream = s;
      e->position = e->plugin->streams.end(s);
    });
  };
  api.event_synchronize = [](kiln_event* e) {
    return guard([&] { e->plugin->streams.run_until(e->stream, e->position); });
  };
  api.event_elapsed_ms = [](const kiln_event* start, const kiln_event* end, double* ms) {
    return guard([&] {
      if (!start->recorded || !end->recorded)
        throw Failure(KILN_STATUS_INVALID_ARGUMENT, "event_elapsed_ms of an event never recorded");
      *ms = std::chrono::duration<double, std::milli>(end->time - start->time).count();
    });
  };
#if KILN_ABI_MINOR >= 2
  // ABI 1.2 (left out when built against an older SDK). Immediate streams: work is done
  // when a launch returns, one order for every stream, and a recorded event has always
  // passed. Deferred streams claim concurrent streams and asynchronous copies.
  api.device_capabilities = [](kiln_plugin* p, uint32_t device, uint64_t* flags) {
    return guard([&] {
      check_device(device);
      *flags = p->deferred ? KILN_CAPABILITY_STREAMS | KILN_CAPABILITY_ASYNC_COPY |
                                 KILN_CAPABILITY_PINNED_HOST
                           : 0;
#if KILN_ABI_MINOR >= 3
      *flags |= KILN_CAPABILITY_IMPORT_POSIX_FD;
#endif
#if KILN_ABI_MINOR >= 4
      *flags |= KILN_CAPABILITY_CAPTURE;
#endif
    });
  };
  api.stream_wait_event = [](kiln_stream* s, kiln_event* e) {
    return guard([&] {
      kiln::interp::refuse_in_capture(s, "stream_wait_event");
      if (!e->recorded)
        throw Failure(KILN_STATUS_INVALID_ARGUMENT, "stream_wait_event of an event never recorded");
      kiln::interp::DeferredStreams& streams = e->plugin->streams;
      kiln_stream* from = e->stream;
      const uint64_t position = e->position;
      // A wait already satisfied queues nothing (it would hold back eager copies).
      if (streams.reached(from, position)) return;
      streams.queue(s, [&streams, from, position] { streams.run_until(from, position); });
    });
  };
  // A query moves the event's stream on by one item: a device makes progress on its own.
  api.event_query = [](kiln_event* e, int* done) {
    return guard([&] {
      if (!e->recorded)
        throw Failure(KILN_STATUS_INVALID_ARGUMENT, "event_query of an event never recorded");
      *done = e->plugin->streams.step_towards(e->stream, e->position);
    });
  };
  // Host memory is this device's memory: any host buffer is copied without staging.
  api.host_alloc = [](kiln_plugin* p, uint32_t device, uint64_t bytes, void** out) {
    return guard([&] {
      check_device(device);
      *out = p->pinned.allocate(bytes);
      if (*out == nullptr)
        throw Failure(KILN_STATUS_OUT_OF_MEMORY,
                      "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    });
  };
  api.host_free = [](kiln_plugin* p, uint32_t device, void* pointer) {
    return guard([&] {
      check_device(device);
      if (!p->pinned.release(pointer))
        throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                      "host_free of memory host_alloc did not return, or freed already");
    });
  };
#endif
#if KILN_ABI_MINOR >= 3
  // ABI 1.3: host memory another process shares by descriptor is this device's memory too.
  api.mem_import = [](kiln_plugin* p, uint32_t device, const kiln_mem_import_desc* desc,
                      uint64_t* address) {
    return guard([&] {
      check_device(device);
      const auto import = p->imports.map(desc, "kir_interpreter");
      p->memory.add_registration(import.address, import.bytes);
      *address = import.address;
    });
  };
  api.mem_release_import = [](kiln_plugin* p, uint32_t device, uint64_t address) {
    return guard([&] {
      check_device(device);
      const auto import = p->imports.unmap(address);
      p->memory.remove_registration(import.address, import.bytes);
    });
  };
#endif
}

kiln_plugin_api make_api() {
  kiln_plugin_api api = kiln::sdk::api_table();
  api.plugin_create = plugin_create;
  api.plugin_destroy = [](kiln_plugin* p) { delete p; };
  api.get_attributes = get_attributes;
  api.device_count = [](kiln_plugin*, uint32_t* out) -> kiln_error* {
    *out = 1;
    return nullptr;
  };
  api.device_info = device_info;
  api.mem_alloc = mem_alloc;
  api.mem_free = mem_free;
  api.copy_host_to_device = copy_in;
  api.copy_device_to_host = copy_out;
  api.copy_device_to_device = copy_within;
  api.memory_stats = memory_stats;
  api.mem_register = mem_register;
  api.mem_unregister = mem_unregister;
  add_streams_and_events(api);
  kiln::interp::add_code_functions(api);
#if KILN_ABI_MINOR >= 4
  kiln::interp::add_capture_functions(api);
#endif
  return api;
}

}  // namespace

// A host of an older minor reads only the part of the table it knows (struct_size rules).
extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_get_api(uint32_t host_major,
                                                                         uint32_t) {
  static const kiln_plugin_api api = make_api();
  return host_major == KILN_ABI_MAJOR ? &api : nullptr;
}
