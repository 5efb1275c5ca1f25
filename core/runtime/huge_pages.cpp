#include "core/runtime/huge_pages.h"

#include <sys/mman.h>

#include <fstream>
#include <sstream>

namespace kiln {

HugePagePolicy::Mode parse_huge_page_mode(std::string_view enabled) {
  using Mode = HugePagePolicy::Mode;
  const auto open = enabled.find('[');
  const auto close = enabled.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return Mode::Unavailable;
  const std::string_view chosen = enabled.substr(open + 1, close - open - 1);
  if (chosen == "always") return Mode::Always;
  if (chosen == "madvise") return Mode::Madvise;
  if (chosen == "never") return Mode::Never;
  return Mode::Unavailable;
}

HugePagePolicy read_huge_page_policy(const std::filesystem::path& dir) {
  HugePagePolicy policy;
  std::ifstream enabled(dir / "enabled");
  std::stringstream text;
  text << enabled.rdbuf();
  if (!enabled) return policy;
  policy.mode = parse_huge_page_mode(text.str());
  std::ifstream size(dir / "hpage_pmd_size");
  uint64_t bytes = 0;
  // A size that is not a power of two cannot be a page size: no advice then.
  if (size >> bytes && bytes > 0 && (bytes & (bytes - 1)) == 0) policy.page_bytes = bytes;
  return policy;
}

bool advise_huge_pages(const HugePagePolicy& policy, uintptr_t address, uint64_t bytes) {
  if (!policy.worth_advising()) return false;
  const uintptr_t mask = policy.page_bytes - 1;
  const uintptr_t first = (address + mask) & ~mask;
  const uintptr_t end = (address + bytes) & ~mask;
  if (end <= first) return false;
#ifdef MADV_HUGEPAGE
  return madvise(reinterpret_cast<void*>(first), end - first, MADV_HUGEPAGE) == 0;
#else
  return false;
#endif
}

}  // namespace kiln
