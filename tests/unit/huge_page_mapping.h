// What the huge-page tests share: an anonymous mapping placed so that its head is not a
// whole huge page, and whether /proc/self/smaps shows a range advised (VmFlags `hg`).
#pragma once

#include <sys/mman.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace kiln::test {

inline constexpr uint64_t kHuge = 2u << 20;  // x86-64's; the tests name it, not the OS

// The VmFlags of the mapping holding `address` in /proc/self/smaps ("" when none holds it).
inline std::string vm_flags_at(uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = lo <= address && address < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line.substr(8) + " ";
  }
  return "";
}

inline bool asked_for_huge_pages(uintptr_t address) {
  return vm_flags_at(address).find(" hg ") != std::string::npos;
}

// An anonymous mapping of `bytes` plus one huge page of slack, freed at scope end.
struct Mapping {
  explicit Mapping(size_t bytes) : size(bytes + kHuge) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base = p == MAP_FAILED ? 0 : reinterpret_cast<uintptr_t>(p);
  }
  ~Mapping() {
    if (base) munmap(reinterpret_cast<void*>(base), size);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  // An address one small page past a huge page boundary: its head is not a whole huge page.
  uintptr_t unaligned() const { return ((base + kHuge - 1) & ~(kHuge - 1)) + 4096; }
  // The first whole huge page after unaligned().
  uintptr_t first_whole() const { return unaligned() - 4096 + kHuge; }
  size_t size;
  uintptr_t base = 0;
};

}  // namespace kiln::test
