#include "core/support/build_id.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <fstream>

namespace kiln {
namespace {

struct Search {
  uintptr_t address = 0;  // inside the object we want
  std::string id;
};

std::string hex(const unsigned char* bytes, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

// The NT_GNU_BUILD_ID note of the loaded object that holds search->address.
int find_build_id(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && search->address >= start && search->address < start + ph.p_memsz)
      holds = true;
  }
  if (!holds) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof note);
      const unsigned char* name = p + sizeof note;
      const unsigned char* desc = name + ((note.n_namesz + 3) & ~3u);
      const unsigned char* next = desc + ((note.n_descsz + 3) & ~3u);
      if (next > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0)
        search->id = hex(desc, note.n_descsz);
      p = next;
    }
  }
  return 1;  // the object was found: stop
}

// XXH3-64 of the file that holds this function (a binary linked without a build ID).
std::string file_digest() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&file_digest), &info) == 0 || !info.dli_fname) return "";
  std::ifstream in(info.dli_fname, std::ios::binary);
  if (!in) return "";
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0)
    XXH3_64bits_update(state, buf, static_cast<size_t>(in.gcount()));
  const uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(h >> (56 - 8 * i));
  return "file-" + hex(bytes, 8);
}

}  // namespace

std::string core_build_id() {
  // Read once per process (the binary does not change under it); immutable afterwards.
  static const std::string id = [] {
    Search search;
    search.address = reinterpret_cast<uintptr_t>(&core_build_id);
    dl_iterate_phdr(find_build_id, &search);
    return search.id.empty() ? file_digest() : search.id;
  }();
  return id;
}

}  // namespace kiln
