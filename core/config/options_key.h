// The options that shape compiled code, one line each, for cache keys: two runs whose lines
// agree compile the same graph to the same kernels and plan.
#pragma once

#include <string>

#include "core/config/options.h"

namespace kiln {

std::string schedule_key_text(const ScheduleOptions& s);
// Kernel tuning: the mode and the deterministic restriction (warm-up and repetitions only
// steer timing, not what may be chosen).
std::string tuning_key_text(const AutotuneOptions& a);

}  // namespace kiln
