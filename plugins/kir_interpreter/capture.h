// Capture (ABI 1.4): work given a capturing stream is recorded instead of run, and a graph
// replays the recording on any stream, item by item, as if it were issued again.
#pragma once

#include <kiln/plugin.h>

#include <functional>

namespace kiln::interp {

// `work` on `s`: recorded when `s` captures, else queued there (deferred_streams.h).
void submit(kiln_plugin& p, kiln_stream* s, std::function<void()> work, bool copy = false);
// Throws UNSUPPORTED when `s` captures: `what` (a copy to or from the host, an event) is
// never recorded.
void refuse_in_capture(const kiln_stream* s, const char* what);
#if KILN_ABI_MINOR >= 4
void add_capture_functions(kiln_plugin_api& api);
#endif

}  // namespace kiln::interp
