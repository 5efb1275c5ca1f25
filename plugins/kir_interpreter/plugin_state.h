// One instance of the KIR interpreter plugin: its options, its one device's memory and
// properties, and the host's log.
#pragma once

#include <chrono>
#include <kiln/kir.hpp>
#include <kiln/plugin.hpp>
#include <set>
#include <string>
#include <vector>

#include "capture.h"
#include "deferred_streams.h"
#include "host_allocations.h"

#if KILN_ABI_MINOR >= 3
#include <kiln/shared_fd_memory.hpp>
#endif

struct kiln_plugin {
  kiln_plugin(uint64_t memory_limit, std::set<std::string> declined_kinds,
              kiln::sdk::HostLog host_log, const std::string& stream_mode)
      : memory(memory_limit),
        declined(std::move(declined_kinds)),
        log(std::move(host_log)),
        deferred(stream_mode != "immediate"),
        streams(stream_mode == "deferred_kernels") {}
  kiln::interp::HostAllocations memory;
  kiln::interp::HostBuffers pinned;  // host_alloc's (ABI 1.2)
#if KILN_ABI_MINOR >= 3
  kiln::sdk::SharedFdMappings imports;  // mem_import's (ABI 1.3)
#endif
  // Kernel kinds and op kinds `supports` declines (the `decline` option): how a plugin
  // without some construct tells kiln to place those kernels on another device.
  const std::set<std::string> declined;
  // Part of every cache key: this build's bytes and what it declines (answers to `supports`
  // and artifacts are cached under it).
  std::string fingerprint;
  kiln::sdk::HostLog log;
  kiln::sdk::PropertyList properties;
  // `streams: deferred | deferred_kernels`: the streams made are added to `streams`, whose
  // work then waits for the host to wait for it (deferred_streams.h).
  const bool deferred;
  kiln::interp::DeferredStreams streams;
};

// Work runs when it is launched, so a stream is a name and an event a time; with deferred
// streams, an event is also a place in a stream's queue. A capturing stream (ABI 1.4) records
// its work instead (capture.h).
struct kiln_stream {
  kiln_plugin* plugin;
  bool capturing = false;
  std::vector<std::function<void()>> recorded;
};

// What a stream captured: the same work, queued again at each replay.
struct kiln_graph {
  kiln_plugin* plugin = nullptr;
  std::vector<std::function<void()>> work;
};

struct kiln_event {
  kiln_plugin* plugin = nullptr;
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
  kiln_stream* stream = nullptr;
  uint64_t position = 0;
};

namespace kiln::interp {

// The code half of the table: supports, tuning_space, compile, load, launch.
void add_code_functions(kiln_plugin_api& api);

}  // namespace kiln::interp
