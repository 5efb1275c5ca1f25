// Transparent huge pages for fresh output memory on the host. A tensor the caller just
// allocated (torch.empty of 64 MiB, a new mapping each call) faults in 4 KiB pages as kernels
// first write it: 16384 faults, each zeroing a page, cost more than the kernel on a CPU. Where
// the kernel serves huge pages only to memory that asks (`madvise` mode), kiln asks for the
// outputs it writes in place: one fault per 2 MiB.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace kiln {

// How the kernel hands out transparent huge pages (/sys/kernel/mm/transparent_hugepage).
struct HugePagePolicy {
  enum class Mode { Unavailable, Never, Madvise, Always };
  Mode mode = Mode::Unavailable;
  uint64_t page_bytes = 0;  // hpage_pmd_size: 2 MiB on x86-64

  // Only `madvise` needs the advice: `always` gives huge pages unasked, `never` never.
  // Pages above 32 MiB (512 MiB with arm64's 64 KiB base pages) are left alone: one fault
  // would zero the whole page on one thread and need that much contiguous memory.
  static constexpr uint64_t kLargestAdvised = uint64_t{32} << 20;
  bool worth_advising() const {
    return mode == Mode::Madvise && page_bytes > 0 && page_bytes <= kLargestAdvised;
  }
};

// The mode from the text of `enabled` ("always [madvise] never": the bracketed one).
HugePagePolicy::Mode parse_huge_page_mode(std::string_view enabled);

// The running kernel's policy, read from `dir` (Unavailable where the files are missing).
HugePagePolicy read_huge_page_policy(
    const std::filesystem::path& dir = "/sys/kernel/mm/transparent_hugepage");

// Asks for huge pages over the whole huge pages inside [address, address + bytes); false when
// none fits inside or the kernel refused (the memory works as before either way). Called on
// every run: a caller's allocator often maps each output afresh at the same address, so a
// range advised before may be a new mapping now (one syscall per output of 2 MiB or more).
// The advice stays with the mapping after kiln is done with it, and overrides a caller's
// MADV_NOHUGEPAGE on it (run.huge_pages: false leaves caller memory alone).
bool advise_huge_pages(const HugePagePolicy& policy, uintptr_t address, uint64_t bytes);

}  // namespace kiln
