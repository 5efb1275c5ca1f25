#include "core/config/options_key.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kiln {

std::string schedule_key_text(const ScheduleOptions& s) {
  return fmt::format(
      "fusion={} max_readers={} max_inline_ops={} max_kernel_ops={} min_fused_rows={} "
      "split_rows_below={} max_peak_growth={} library_matmul={} library_conv={} deterministic={} "
      "conv_tf32={} "
      "matmul_tf32={} declined=[{}]",
      s.fusion, s.max_readers, s.max_inline_ops, s.max_kernel_ops, s.min_fused_rows,
      s.split_rows_below, s.max_peak_growth_bytes, s.library_matmul, s.library_conv,
      s.deterministic, s.conv_tf32, s.matmul_tf32, fmt::join(s.declined_library_calls, "; "));
}

std::string tuning_key_text(const AutotuneOptions& a) {
  const char* modes[] = {"off", "heuristic", "exhaustive"};
  return fmt::format("kernels={} deterministic={} libraries={}", modes[static_cast<int>(a.kernels)],
                     a.deterministic, a.libraries);
}

}  // namespace kiln
