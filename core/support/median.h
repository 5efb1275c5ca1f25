// The median of timing samples (the upper middle for an even count; 0 for none): the one
// statistic every timing protocol of the project reports.
#pragma once

#include <algorithm>
#include <vector>

namespace kiln {

inline double median(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  const auto mid = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), mid, samples.end());
  return *mid;
}

}  // namespace kiln
