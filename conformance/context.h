// What every group of checks is given: the plugin's path, the options to create it with, the
// device to test, and where the findings go.
#pragma once

#include <string>

#include "conformance/raw_plugin.h"
#include "conformance/report.h"

namespace kiln::conformance {

struct Context {
  std::string path;
  OptionList options;
  uint32_t device = 0;
  int timeout_seconds = 120;  // per isolated check
  std::string graphs_dir;     // the kit's graphs, one per KIR construct
};

// Checks the ABI rules of plugin.h: entry point, table, versions both ways, errors, blobs,
// options, attributes, device properties, NULL tolerance.
void check_abi(const Context& c, Report& report);
// Memory (sizes, alignments, copies, bounds, out of memory, leaks), streams and events.
void check_memory(const Context& c, Report& report);
// ABI 1.2: capability flags, streams ordered by events, event queries, page-locked memory.
void check_streams(const Context& c, Report& report);
void check_imports(const Context& c, Report& report);
// ABI 1.4: a launch and a copy captured on a stream, replayed.
void check_capture(const Context& c, Report& report);
// Every KIR construct through the plugin against the reference interpreter, the error paths
// (bad KIR, a kernel's error word), and concurrent compiles and launches where claimed.
void check_kir(const Context& c, Report& report);

}  // namespace kiln::conformance
