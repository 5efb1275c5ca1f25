// Why two kernels that touch the same buffer stayed apart. Every missed fusion gets one of
// these, so a person reading the report (or the CSV) can see what stood in the way.
#pragma once

#include <string>
#include <vector>

namespace kiln {

// The categories a failure falls into. The first six are the classic ones (Inductor's
// metrics name the same); `dependency` and `few rows` are kiln's own, and `realized` marks
// a producer kept as a buffer on purpose (an output, a library call's operand, many readers).
enum class FusionCategory {
  DifferentNumel,    // the iteration spaces hold different element counts
  Broadcast,         // one side reads the other's buffer broadcast over extra dims
  DifferentOrder,    // same element count, but the dims cannot be matched up
  DifferentOffset,   // dims match, but the consumer reads other elements than were produced
  WouldRaiseMemory,  // fusing would raise the planned peak of live buffers
  Dependency,        // a kernel in between needs one result and feeds the other
  FewRows,           // an epilogue over a reduction with too few rows to keep threads busy
  Realized,          // the producer is kept as a buffer (see the detail)
  TooLarge,          // the merged kernel would pass schedule.max_kernel_ops
  Unknown,
};

const char* category_name(FusionCategory c);

struct FusionFailure {
  std::string producer;  // kernel names
  std::string consumer;
  FusionCategory category = FusionCategory::Unknown;
  std::string detail;  // one line, for people
};

// `producer,consumer,category,detail` lines under a header; details are quoted.
std::string fusion_failures_csv(const std::vector<FusionFailure>& failures);

}  // namespace kiln
