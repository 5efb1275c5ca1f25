// Runs one check in a child process, so a plugin that crashes, hangs or corrupts memory fails
// that check instead of taking the kit down. The child opens the plugin itself: drivers such
// as CUDA's cannot be used across a fork.
#pragma once

#include <functional>

#include "conformance/report.h"

namespace kiln::conformance {

// `body`'s finding, or FAIL naming the signal or the timeout.
Finding run_isolated(const std::function<Finding()>& body, int timeout_seconds);

}  // namespace kiln::conformance
