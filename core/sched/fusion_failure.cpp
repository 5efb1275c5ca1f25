#include "core/sched/fusion_failure.h"

namespace kiln {

const char* category_name(FusionCategory c) {
  switch (c) {
    case FusionCategory::DifferentNumel:
      return "different numel";
    case FusionCategory::Broadcast:
      return "broadcast";
    case FusionCategory::DifferentOrder:
      return "different loop order";
    case FusionCategory::DifferentOffset:
      return "different offset";
    case FusionCategory::WouldRaiseMemory:
      return "would-raise-memory";
    case FusionCategory::Dependency:
      return "dependency";
    case FusionCategory::FewRows:
      return "few rows";
    case FusionCategory::Realized:
      return "realized";
    case FusionCategory::TooLarge:
      return "too large";
    case FusionCategory::Unknown:
      break;
  }
  return "unknown";
}

namespace {

std::string quoted(const std::string& text) {
  std::string s = "\"";
  for (char c : text) s += c == '"' ? std::string("\"\"") : std::string(1, c);
  return s + "\"";
}

}  // namespace

std::string fusion_failures_csv(const std::vector<FusionFailure>& failures) {
  std::string s = "producer,consumer,category,detail\n";
  for (const FusionFailure& f : failures) {
    s += f.producer + "," + f.consumer + "," + category_name(f.category) + "," + quoted(f.detail) +
         "\n";
  }
  return s;
}

}  // namespace kiln
